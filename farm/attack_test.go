package farm

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap/zaptest"

	"dialogfarm/dialog"
)

// attackRig is a farm with a coordinator and two workers, each worker with
// its own key, as `farm serve` makes them.
type attackRig struct {
	srv          *Server
	q            *Queue // the coordinator's
	cjs          jetstream.JetStream
	seeds        []string // the workers' seed files
	pubs         []string
	workerConn   []*nats.Conn
	workerQueues []*Queue
}

func startAttackRig(t *testing.T) *attackRig {
	t.Helper()
	dir := t.TempDir()
	creds, err := EnsureCreds(filepath.Join(dir, CredsDir), 2)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := StartServer(context.Background(), ServerConfig{StoreDir: filepath.Join(dir, "store"), Listen: "127.0.0.1:-1", Users: creds.Users})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r := &attackRig{srv: srv, seeds: creds.Workers, pubs: []string{creds.Users[1].Nkey, creds.Users[2].Nkey}}
	coord, err := Dial(ctx, ClientConfig{URL: srv.ClientURL(), Creds: creds.Coordinator})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(coord.Close)
	r.cjs, _ = JetStream(coord)
	qc := DefaultQueueConfig()
	qc.AckWait = 2 * time.Second
	if r.q, err = Setup(ctx, r.cjs, qc); err != nil {
		t.Fatal(err)
	}
	for _, seed := range creds.Workers {
		nc, err := Dial(ctx, ClientConfig{URL: srv.ClientURL(), Creds: seed})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		js, _ := JetStream(nc)
		wq, err := Open(ctx, js)
		if err != nil {
			t.Fatal(err)
		}
		r.workerConn, r.workerQueues = append(r.workerConn, nc), append(r.workerQueues, wq)
	}
	return r
}

// refused says whether publishing subject on nc is refused by the server
// (a JetStream publish that is refused never gets its acknowledgement).
func refused(ctx context.Context, nc *nats.Conn, subject string, data []byte) error {
	js, _ := JetStream(nc)
	return retry(ctx, nc, func(ctx context.Context) error {
		_, err := js.Publish(ctx, subject, data)
		return err
	})
}

// A second worker can read neither the first one's jobs nor the
// coordinator's replies: it may subscribe to its own inbox prefix only,
// and the clients use theirs.
func TestAWorkerCannotReadAnotherWorkersInbox(t *testing.T) {
	r := startAttackRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	victim, spy := r.workerConn[0], r.workerConn[1]
	if !strings.HasPrefix(victim.NewInbox(), InboxPrefix(r.pubs[0])+".") {
		t.Errorf("the first worker's inbox %s is not under its own prefix", victim.NewInbox())
	}
	// The spy subscribes to everything a worker's replies could come on
	// (_INBOX.> too: the default inbox of other clients, such as an
	// operator's nats CLI with a coordinator's key); the server refuses
	// each subscription.
	var mu sync.Mutex
	violations := map[string]bool{}
	spy.SetErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		if m := regexp.MustCompile(`Permissions Violation for Subscription to "([^"]+)"`).FindStringSubmatch(err.Error()); m != nil {
			mu.Lock()
			violations[m[1]] = true
			mu.Unlock()
		}
	})
	seen := make(chan *nats.Msg, 64)
	spied := []string{"_INBOX.>", InboxPrefix(r.pubs[0]) + ".>", "_INBOX_*.>", ">"}
	for _, subj := range spied {
		if _, err := spy.ChanSubscribe(subj, seen); err != nil {
			t.Fatal(err)
		}
	}
	if err := spy.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.q.Enqueue(ctx, "run", []dialog.ChatConfig{{ID: "secret-code-context", Repo: "private"}}, 1, nil); err != nil {
		t.Fatal(err)
	}
	// The victim pulls the job; the coordinator reads the farm's status
	// (requests whose replies come to its inbox).
	msg, err := r.workerQueues[0].workers.Next(jetstream.FetchMaxWait(5 * time.Second))
	if err != nil {
		t.Fatalf("the first worker's pull: %v", err)
	}
	if !strings.Contains(string(msg.Data()), "secret-code-context") {
		t.Fatalf("the first worker got %s", msg.Data())
	}
	if _, err := ReadStatus(ctx, r.cjs, "run"); err != nil {
		t.Fatal(err)
	}
	if err := spy.Flush(); err != nil { // whatever was routed to the spy has arrived
		t.Fatal(err)
	}
	select {
	case m := <-seen:
		t.Errorf("the second worker received %s: %.200s", m.Subject, m.Data)
	default:
	}
	// The server's refusals come before its answer to the flush, but the
	// client hands each to the error handler on a goroutine of its own:
	// under load they were not all there yet (1 run in 10 beside two
	// busy loops).
	refused := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(violations) == len(spied)
	}
	for deadline := time.Now().Add(10 * time.Second); !refused() && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, subj := range spied {
		if !violations[subj] {
			t.Errorf("the second worker's subscription to %s: not refused (refused: %v)", subj, violations)
		}
	}
}

// A result forged by a worker the job was never delivered to is refused,
// whether on the config's subject, under another worker's name, under its
// own name, or with the seal of another job that was delivered to it; the
// genuine result, published after it, is the config's record.
func TestAForgedResultDoesNotWin(t *testing.T) {
	r := startAttackRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// The forger is delivered a job of its own (bait), and keeps its seal;
	// the target's job is enqueued after it and is not delivered to the
	// forger.
	forger, fq := r.workerConn[1], r.workerQueues[1]
	if _, err := r.q.Enqueue(ctx, "run", []dialog.ChatConfig{{ID: "bait"}}, 1, nil); err != nil {
		t.Fatal(err)
	}
	msg, err := fq.workers.Next(jetstream.FetchMaxWait(5 * time.Second))
	if err != nil {
		t.Fatalf("the forger's pull: %v", err)
	}
	var bait Job
	if err := json.Unmarshal(msg.Data(), &bait); err != nil || bait.Config.ID != "bait" {
		t.Fatalf("the forger pulled %s (%v)", msg.Data(), err)
	}
	baitMeta, _ := msg.Metadata()
	_ = msg.Ack()
	if _, err := r.q.Enqueue(ctx, "run", []dialog.ChatConfig{{ID: "target"}}, 1, nil); err != nil {
		t.Fatal(err)
	}
	forged := func(dl Delivery) []byte {
		d := dialog.Dialogue{ConfigID: "target", Status: dialog.StatusOK, Worker: "forger",
			Turns: []dialog.Turn{{Query: "q", Shown: "poisoned answer"}}}
		data, _ := json.Marshal(Result{Run: "run", Worker: "forger", Attempt: 1, Delivery: dl, Dialogue: d})
		return data
	}
	guess := Delivery{Nonce: "00", Token: strings.Repeat("0", 64), JobSeq: 1}
	stolen := Delivery{Nonce: bait.Nonce, Token: bait.Token, JobSeq: baitMeta.Sequence.Stream}
	for _, subj := range []string{"dfarm.results.run.target", resultSubject("run", "target", r.pubs[0])} {
		pctx, pcancel := context.WithTimeout(ctx, time.Second)
		err := refused(pctx, forger, subj, forged(guess))
		pcancel()
		if !errors.Is(err, ErrRefused) {
			t.Errorf("the forger publishing on %s: %v, want the server's refusal", subj, err)
		}
	}
	// Under its own name, it has one result per config: with the seal of
	// the job it was delivered.
	if err := refused(ctx, forger, resultSubject("run", "target", r.pubs[1]), forged(stolen)); err != nil {
		t.Fatalf("the forger publishing under its own name: %v", err)
	}
	// A forged attempt, with a guessed seal.
	a, _ := json.Marshal(Attempt{Run: "run", Worker: "forger", Attempt: 1, Delivery: guess, Dialogue: dialog.Dialogue{ConfigID: "target"}})
	if err := refused(ctx, forger, attemptSubject("run", "target", r.pubs[1]), a); err != nil {
		t.Fatal(err)
	}

	// Now the genuine worker drives the target.
	w := NewWorker(WorkerConfig{ID: "genuine", FetchWait: 200 * time.Millisecond}, r.workerQueues[0],
		okDriver, nil, zaptest.NewLogger(t))
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { _ = w.Run(wctx) })
	defer func() { stop(); wg.Wait() }()
	var got []dialog.Dialogue
	recs := &funcRecords{append: func(d dialog.Dialogue) { got = append(got, d) }}
	cctx, ccancel := context.WithTimeout(ctx, 30*time.Second)
	defer ccancel()
	prog, err := r.q.Collect(cctx, CollectConfig{Run: "run", Want: []string{"target"}, Records: recs}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatalf("collect: %v (%+v)", err, prog)
	}
	if len(got) != 1 || got[0].Worker != "genuine" || len(got[0].Turns) != 0 {
		t.Errorf("records %+v, want the genuine worker's only", got)
	}
	if prog.Refused != 2 || prog.Retried != 0 {
		t.Errorf("progress %+v: want the forged result and the forged attempt refused", prog)
	}
}

// funcRecords is a record log that hands each record to a function.
type funcRecords struct{ append func(dialog.Dialogue) }

func (f *funcRecords) Done(string) bool { return false }
func (f *funcRecords) Append(d dialog.Dialogue) error {
	f.append(d)
	return nil
}

// A worker writes its own health entries only: another worker's entry is
// refused by the server, an entry of its own that names another worker is
// not shown as that worker's, and a reply it has the server put on
// another worker's key cannot overwrite that worker's entry (the key has
// a part the worker cannot learn: it may not read the bucket).
func TestAWorkerWritesOnlyItsOwnHealth(t *testing.T) {
	r := startAttackRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w := NewWorker(WorkerConfig{ID: "machine-a"}, r.workerQueues[0], funcDriver(nil), nil, zaptest.NewLogger(t))
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { w.reportHealth(wctx) })
	defer func() { stop(); wg.Wait() }()
	var st Status
	for len(st.Workers) == 0 {
		var err error
		if st, err = ReadStatus(ctx, r.cjs, ""); err != nil {
			t.Fatal(err)
		}
	}
	attacker := r.workerConn[1]
	fake, _ := json.Marshal(Health{Worker: "machine-a", Host: "attacker", Slots: 99, Updated: time.Now()})
	pctx, pcancel := context.WithTimeout(ctx, time.Second)
	err := refused(pctx, attacker, "$KV."+WorkersBucket+"."+r.pubs[0]+".machine-a.x", fake)
	pcancel()
	if !errors.Is(err, ErrRefused) {
		t.Errorf("the second worker writing under the first one's user: %v, want the server's refusal", err)
	}
	// Under its own user, naming the first worker in its entry.
	if err := refused(ctx, attacker, "$KV."+WorkersBucket+"."+r.pubs[1]+".other.x", fake); err != nil {
		t.Fatal(err)
	}
	// It cannot list the bucket's keys...
	pctx, pcancel = context.WithTimeout(ctx, time.Second)
	err = retry(pctx, attacker, func(ctx context.Context) error {
		_, err := attacker.RequestWithContext(ctx, "$JS.API.STREAM.INFO.KV_"+WorkersBucket, []byte(`{"subjects_filter":">"}`))
		return err
	})
	pcancel()
	if !errors.Is(err, ErrRefused) {
		t.Errorf("the second worker listing the health keys: %v, want the server's refusal", err)
	}
	// ...so the replies it has the server put on the keys it can guess
	// (the first one's user and name) miss the entry.
	kv, err := r.cjs.KeyValue(ctx, WorkersBucket)
	if err != nil {
		t.Fatal(err)
	}
	guesses := []string{r.pubs[0] + ".machine-a", r.pubs[0] + ".machine-a.x", r.pubs[0] + ".machine-a.0"}
	for _, k := range guesses {
		if err := attacker.PublishRequest("$JS.API.CONSUMER.INFO."+JobsStream+"."+WorkersConsumer, "$KV."+WorkersBucket+"."+k, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := attacker.Flush(); err != nil {
		t.Fatal(err)
	}
	// The replies are stored once the guessed keys hold them.
	for {
		if _, err := kv.Get(ctx, guesses[0]); err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the reply on the guessed key never arrived")
		}
		time.Sleep(10 * time.Millisecond)
	}
	st, err = ReadStatus(ctx, r.cjs, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Workers) != 1 || st.Workers[0].Host == "attacker" || st.Workers[0].User != r.pubs[0] || st.Workers[0].Worker != "machine-a" {
		t.Errorf("workers %+v, want the first worker's own entry only", st.Workers)
	}
	if text := st.Text(time.Now()); !strings.Contains(text, "; key "+r.pubs[0][:8]+"…\n") {
		t.Errorf("status %q does not name the worker's key", text)
	}
}

// A worker cannot enqueue, read results or the files other workers sent
// back, write repositories, dead-letter a config, purge or delete a
// stream.
func TestAWorkerCannotManageTheFarm(t *testing.T) {
	r := startAttackRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	wjs, _ := JetStream(r.workerConn[1])
	try := func(what string, f func(ctx context.Context) error) {
		t.Helper()
		actx, acancel := context.WithTimeout(ctx, time.Second)
		defer acancel()
		if err := retry(actx, r.workerConn[1], f); !errors.Is(err, ErrRefused) {
			t.Errorf("a worker %s: %v, want the server's refusal", what, err)
		}
	}
	try("deleting the jobs stream", func(ctx context.Context) error { return wjs.DeleteStream(ctx, JobsStream) })
	try("deleting the results stream", func(ctx context.Context) error { return wjs.DeleteStream(ctx, ResultsStream) })
	try("purging the jobs stream", func(ctx context.Context) error {
		s, err := wjs.Stream(ctx, JobsStream)
		if err == nil {
			err = s.Purge(ctx)
		}
		return err
	})
	request := func(subject string) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			_, err := r.workerConn[1].RequestWithContext(ctx, subject, []byte(`{"last_by_subj":"dfarm.results.run.x"}`))
			return err
		}
	}
	try("reading results", request("$JS.API.STREAM.MSG.GET."+ResultsStream))
	try("writing a repository", func(ctx context.Context) error {
		_, err := wjs.Publish(ctx, "$O."+ReposBucket+".C.x", []byte("poisoned code"))
		return err
	})
	try("reading the files sent back", func(ctx context.Context) error {
		_, err := wjs.ObjectStore(ctx, FilesBucket)
		return err
	})
	try("reading a file sent back directly", request("$JS.API.DIRECT.GET.OBJ_"+FilesBucket+".$O."+FilesBucket+".M.eA=="))
	try("purging the repositories", func(ctx context.Context) error {
		_, err := r.workerConn[1].RequestWithContext(ctx, "$JS.API.STREAM.PURGE.OBJ_"+ReposBucket, nil)
		return err
	})
	try("enqueueing", func(ctx context.Context) error {
		_, err := wjs.Publish(ctx, jobSubject("run", "x"), []byte(`{}`))
		return err
	})
	try("dead-lettering", func(ctx context.Context) error {
		_, err := wjs.Publish(ctx, deadSubject("run", "x"), []byte(`{}`))
		return err
	})
	if info, err := r.cjs.Stream(ctx, JobsStream); err != nil || info == nil {
		t.Errorf("the jobs stream after the attempts: %v", err)
	}
}

// A worker can have the server put a reply on any subject of the farm's
// streams (NATS does not check reply subjects against permissions). Such
// a message on another worker's result subject, on a config's dead-letter
// subject or on its job subject before it is enqueued does not keep the
// config's genuine outcome out: the run records every config once.
func TestARepliedOnSubjectDoesNotKeepAnOutcomeOut(t *testing.T) {
	r := startAttackRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	attacker := r.workerConn[1]
	cs := configs(3)
	squat := func(subjects ...string) {
		t.Helper()
		for _, subj := range subjects {
			if err := attacker.PublishRequest("$JS.API.CONSUMER.INFO."+JobsStream+"."+WorkersConsumer, subj, nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := attacker.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	stored := func(stream, subj string) bool {
		s, err := r.cjs.Stream(ctx, stream)
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.GetLastMsgForSubject(ctx, subj)
		return err == nil
	}
	// Before the run, its job subjects.
	for _, c := range cs {
		squat(jobSubject("run", c.ID))
	}
	for !stored(JobsStream, jobSubject("run", cs[2].ID)) {
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := r.q.Enqueue(ctx, "run", cs, 2, nil); err != nil {
		t.Fatal(err)
	}
	// Then its dead-letter subjects and the victim's result subjects.
	for _, c := range cs {
		squat(deadSubject("run", c.ID), resultSubject("run", c.ID, r.pubs[0]))
	}
	for !stored(ResultsStream, resultSubject("run", cs[2].ID, r.pubs[0])) || !stored(DeadStream, deadSubject("run", cs[2].ID)) {
		time.Sleep(10 * time.Millisecond)
	}
	// The victim drives everything, once the collector has taken the
	// forged dead letters: the collection ends with the last result, and
	// dead letters left in their stream then would never be counted.
	deadTaken := func(ctx context.Context) error {
		for {
			c, err := r.cjs.Consumer(ctx, DeadStream, "collect_run_dead")
			if err == nil {
				info, err := c.Info(ctx)
				if err != nil {
					return err
				}
				if info.NumPending == 0 && info.NumAckPending == 0 && info.Delivered.Consumer >= uint64(len(cs)) {
					return nil
				}
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	w := NewWorker(WorkerConfig{ID: "victim", FetchWait: 200 * time.Millisecond}, r.workerQueues[0],
		funcDriver(func(ctx context.Context, slot int, c dialog.ChatConfig) (Outcome, error) {
			if err := deadTaken(ctx); err != nil {
				return Outcome{}, err
			}
			return Outcome{Dialogue: okDialogue(c)}, nil
		}), nil, zaptest.NewLogger(t))
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { _ = w.Run(wctx) })
	defer func() { stop(); wg.Wait() }()
	recs := newMemRecords()
	cctx, ccancel := context.WithTimeout(ctx, 30*time.Second)
	defer ccancel()
	prog, err := r.q.Collect(cctx, CollectConfig{Run: "run", Want: ids(cs), Records: recs}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatalf("collect: %v (%+v)", err, prog)
	}
	for _, c := range cs {
		if recs.appends[c.ID] != 1 || recs.status[c.ID] != "ok:" {
			t.Errorf("%s: %d records, %s", c.ID, recs.appends[c.ID], recs.status[c.ID])
		}
	}
	if prog.Refused < 2*len(cs) {
		t.Errorf("progress %+v: want the %d replies on result and dead-letter subjects refused", prog, 2*len(cs))
	}
}
