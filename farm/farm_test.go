package farm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"dialogfarm/dialog"
)

// memRecords is an in-memory record log that counts appends per config.
type memRecords struct {
	mu      sync.Mutex
	appends map[string]int
	ok      map[string]bool
	status  map[string]string
}

func newMemRecords() *memRecords {
	return &memRecords{appends: map[string]int{}, ok: map[string]bool{}, status: map[string]string{}}
}

func (m *memRecords) Done(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ok[id]
}

func (m *memRecords) Append(d dialog.Dialogue) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.appends[d.ConfigID]++
	m.status[d.ConfigID] = d.Status + ":" + d.FailedStep
	if d.Status == dialog.StatusOK {
		m.ok[d.ConfigID] = true
	}
	return nil
}

// funcDriver drives with a function.
type funcDriver func(ctx context.Context, slot int, c dialog.ChatConfig) (Outcome, error)

func (f funcDriver) DriveOne(ctx context.Context, slot int, c dialog.ChatConfig) (Outcome, error) {
	return f(ctx, slot, c)
}

// okDriver drives every config to an ok dialogue at once.
var okDriver = funcDriver(func(ctx context.Context, slot int, c dialog.ChatConfig) (Outcome, error) {
	return Outcome{Dialogue: okDialogue(c)}, nil
})

func okDialogue(c dialog.ChatConfig) dialog.Dialogue {
	return dialog.Dialogue{ConfigID: c.ID, Config: c, Status: dialog.StatusOK, Seconds: 0.01}
}

func configs(n int) []dialog.ChatConfig {
	out := make([]dialog.ChatConfig, n)
	for i := range out {
		out[i] = dialog.ChatConfig{ID: fmt.Sprintf("cfg-%03d", i)}
	}
	// an id that is not a safe subject token
	out[0].ID = "python/calc.py#12 explain.x"
	return out
}

func ids(cs []dialog.ChatConfig) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}

type rig struct {
	srv     *Server
	q       *Queue
	nc      *nats.Conn
	metrics []*Metrics // the workers'
}

func startRig(tb testing.TB, dir string, qc QueueConfig) *rig {
	tb.Helper()
	srv, err := StartServer(context.Background(), ServerConfig{StoreDir: dir})
	if err != nil {
		tb.Fatal(err)
	}
	nc, err := srv.Connect()
	if err != nil {
		tb.Fatal(err)
	}
	js, err := JetStream(nc)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	q, err := Setup(ctx, js, qc)
	if err != nil {
		tb.Fatal(err)
	}
	r := &rig{srv: srv, q: q, nc: nc}
	tb.Cleanup(r.stop)
	return r
}

func (r *rig) stop() {
	r.nc.Close()
	r.srv.Shutdown()
}

// openQueue opens the farm's queue over a connection.
func openQueue(ctx context.Context, tb testing.TB, nc *nats.Conn) *Queue {
	tb.Helper()
	js, err := JetStream(nc)
	if err != nil {
		tb.Fatal(err)
	}
	q, err := Open(ctx, js)
	if err != nil {
		tb.Fatal(err)
	}
	return q
}

// runWorkers starts n workers with their own connections and returns a
// stop function that waits for them.
func (r *rig) runWorkers(tb testing.TB, n, slots int, drv Driver, log *zap.Logger) func() {
	tb.Helper()
	var stops []func()
	for i := range n {
		stops = append(stops, r.runWorker(tb, WorkerConfig{ID: fmt.Sprintf("w%d", i), Slots: slots}, drv, log))
	}
	return func() {
		for _, stop := range stops {
			stop()
		}
	}
}

// runWorker starts a worker of wc (short waits unless wc sets them) with
// its own connection and returns a stop function that waits for it.
func (r *rig) runWorker(tb testing.TB, wc WorkerConfig, drv Driver, log *zap.Logger) func() {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	nc, err := r.srv.Connect()
	if err != nil {
		tb.Fatal(err)
	}
	q := openQueue(ctx, tb, nc)
	m := NewMetrics(wc.ID)
	r.metrics = append(r.metrics, m)
	if wc.FetchWait == 0 {
		wc.FetchWait = 200 * time.Millisecond
	}
	if wc.Backoff == nil {
		wc.Backoff = []time.Duration{10 * time.Millisecond}
	}
	w := NewWorker(wc, q, drv, m, log)
	var wg sync.WaitGroup
	wg.Go(func() {
		defer nc.Close()
		if err := w.Run(ctx); err != nil {
			tb.Errorf("worker: %v", err)
		}
	})
	return func() { cancel(); wg.Wait() }
}

func collect(tb testing.TB, q *Queue, run string, want []string, recs Records, attempts *[]Attempt, dead *[]DeadLetter) Progress {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var firstElapsed time.Duration = -1
	cfg := CollectConfig{Run: run, Want: want, Records: recs,
		Attempts: func(v any) error { *attempts = append(*attempts, v.(Attempt)); return nil },
		Dead:     func(v any) error { *dead = append(*dead, v.(DeadLetter)); return nil },
		Progress: func(p Progress) {
			if p.Done == 1 {
				firstElapsed = p.Elapsed
			}
		}}
	prog, err := q.Collect(ctx, cfg, zaptest.NewLogger(tb))
	if err != nil {
		tb.Fatalf("collect: %v (progress %+v)", err, prog)
	}
	if len(want) > 0 && firstElapsed <= 0 {
		tb.Errorf("the first progress report says %s elapsed", firstElapsed)
	}
	return prog
}

// collectOnce collects run's records of cs and checks that each config
// has exactly one.
func collectOnce(tb testing.TB, q *Queue, run string, cs []dialog.ChatConfig) (Progress, *memRecords, []Attempt) {
	tb.Helper()
	recs := newMemRecords()
	var attempts []Attempt
	var dead []DeadLetter
	prog := collect(tb, q, run, ids(cs), recs, &attempts, &dead)
	for _, c := range cs {
		if recs.appends[c.ID] != 1 {
			tb.Errorf("%s recorded %d times", c.ID, recs.appends[c.ID])
		}
	}
	return prog, recs, attempts
}

func TestEveryConfigOnceWithRetries(t *testing.T) {
	r := startRig(t, t.TempDir(), DefaultQueueConfig())
	cs := configs(24)
	var tries sync.Map
	drv := funcDriver(func(ctx context.Context, slot int, c dialog.ChatConfig) (Outcome, error) {
		n, _ := tries.LoadOrStore(c.ID, new(atomic.Int32))
		try := n.(*atomic.Int32).Add(1)
		d := okDialogue(c)
		switch {
		case c.ID == "cfg-003": // never fits: failed for good at once
			d.Status, d.FailedStep, d.Error = dialog.StatusFailed, "open_file", "no such file"
			return Outcome{Dialogue: d}, nil
		case c.ID == "cfg-005" || (c.ID >= "cfg-010" && c.ID < "cfg-014" && try == 1): // slow under load
			d.Status, d.FailedStep, d.Error = dialog.StatusFailed, "turn1_answer", "timed out"
			return Outcome{Dialogue: d, Retry: true}, nil
		}
		return Outcome{Dialogue: d}, nil
	})
	n, err := r.q.Enqueue(context.Background(), "run1", cs, 3, nil)
	if err != nil || n != len(cs) {
		t.Fatalf("enqueue: %d, %v", n, err)
	}
	stop := r.runWorkers(t, 3, 2, drv, zaptest.NewLogger(t))
	defer stop()
	prog, recs, attempts := collectOnce(t, r.q, "run1", cs)
	if prog.OK != 22 || prog.Failed != 2 || prog.Dead != 0 {
		t.Errorf("progress %+v, want 22 ok, 2 failed", prog)
	}
	// cfg-005 fails 3 times: 2 retried attempts, then its failed result;
	// cfg-010..013 fail once each and are retried once.
	if len(attempts) != 6 || prog.Retried != 6 {
		t.Errorf("%d attempts collected (progress says %d), want 6", len(attempts), prog.Retried)
	}
	// The workers' metrics count every attempt's outcome (cfg-003 once,
	// cfg-005 3 times, cfg-010..013 once each failed, the rest ok) and
	// every retry.
	ok, failed := sumMetric(t, r.metrics, "dialogfarm_dialogues_total", "ok"), sumMetric(t, r.metrics, "dialogfarm_dialogues_total", "failed")
	retried, timed := sumMetric(t, r.metrics, "dialogfarm_dialogues_retried_total", ""), sumMetric(t, r.metrics, "dialogfarm_dialogue_seconds", "")
	if ok != 22 || failed != 8 || retried != 6 || timed != 30 {
		t.Errorf("metrics: %v ok, %v failed, %v retried, %v dialogues timed; want 22, 8, 6, 30", ok, failed, retried, timed)
	}
	if got := recs.status["cfg-005"]; got != "failed:turn1_answer" {
		t.Errorf("cfg-005 recorded %q", got)
	}
	if v, _ := tries.Load("cfg-003"); v.(*atomic.Int32).Load() != 1 {
		t.Errorf("a config that cannot fit was driven %d times", v.(*atomic.Int32).Load())
	}
	if left := leftOnFarm(t, r.q.js, "run1"); len(left) > 0 {
		t.Errorf("the collected run left on the farm: %v", left)
	}
}

func TestCrashedWorkerJobIsRedelivered(t *testing.T) {
	qc := DefaultQueueConfig()
	qc.AckWait = 600 * time.Millisecond
	r := startRig(t, t.TempDir(), qc)
	cs := configs(4)
	if _, err := r.q.Enqueue(context.Background(), "run1", cs, 3, nil); err != nil {
		t.Fatal(err)
	}
	// The first worker's connection dies while it holds a job: no ack, no
	// heartbeat. Its dialogue never ends on its own.
	nc, _ := r.srv.Connect()
	js, _ := JetStream(nc)
	q1, _ := Open(context.Background(), js)
	held := make(chan string, 1)
	stuck := funcDriver(func(ctx context.Context, slot int, c dialog.ChatConfig) (Outcome, error) {
		held <- c.ID
		<-ctx.Done()
		return Outcome{}, ctx.Err()
	})
	ctx1, cancel1 := context.WithCancel(context.Background())
	w1 := NewWorker(WorkerConfig{ID: "dies", FetchWait: 200 * time.Millisecond}, q1, stuck, nil, zap.NewNop())
	done1 := make(chan struct{})
	go func() { _ = w1.Run(ctx1); close(done1) }()
	victim := <-held
	nc.Close() // the machine is gone
	defer func() { cancel1(); <-done1 }()

	var driven sync.Map
	stop := r.runWorkers(t, 1, 1, funcDriver(func(ctx context.Context, slot int, c dialog.ChatConfig) (Outcome, error) {
		driven.Store(c.ID, true)
		return Outcome{Dialogue: okDialogue(c)}, nil
	}), zaptest.NewLogger(t))
	defer stop()
	recs := newMemRecords()
	var attempts []Attempt
	var dead []DeadLetter
	prog := collect(t, r.q, "run1", ids(cs), recs, &attempts, &dead)
	if prog.OK != 4 {
		t.Fatalf("progress %+v", prog)
	}
	if _, ok := driven.Load(victim); !ok {
		t.Errorf("the job the dead worker held (%s) was not driven by the other worker", victim)
	}
	for _, c := range cs {
		if recs.appends[c.ID] != 1 {
			t.Errorf("%s recorded %d times", c.ID, recs.appends[c.ID])
		}
	}
}

func TestDeadLetterAfterMaxDeliveries(t *testing.T) {
	qc := DefaultQueueConfig()
	qc.MaxDeliver = 3
	r := startRig(t, t.TempDir(), qc)
	cs := configs(3)
	if _, err := r.q.Enqueue(context.Background(), "run1", cs, 2, nil); err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	stop := r.runWorkers(t, 1, 1, funcDriver(func(ctx context.Context, slot int, c dialog.ChatConfig) (Outcome, error) {
		if c.ID == "cfg-001" { // a worker that gives up on this one every time
			calls.Add(1)
			return Outcome{}, errors.New("simulator lost")
		}
		return Outcome{Dialogue: okDialogue(c)}, nil
	}), zaptest.NewLogger(t))
	defer stop()
	recs := newMemRecords()
	var attempts []Attempt
	var dead []DeadLetter
	prog := collect(t, r.q, "run1", ids(cs), recs, &attempts, &dead)
	if prog.OK != 2 || prog.Dead != 1 || len(dead) != 1 || dead[0].ConfigID != "cfg-001" {
		t.Fatalf("progress %+v, dead %+v", prog, dead)
	}
	if recs.status["cfg-001"] != "failed:"+FailedStepDead || recs.appends["cfg-001"] != 1 {
		t.Errorf("dead config recorded %q ×%d", recs.status["cfg-001"], recs.appends["cfg-001"])
	}
	if calls.Load() != 3 {
		t.Errorf("driven %d times, want MaxDeliver = 3", calls.Load())
	}
	if dead[0].Reason == "" || dead[0].Deliveries != 3 {
		t.Errorf("dead letter %+v", dead[0])
	}
	// The run is collected: the farm forgets it.
	if left := leftOnFarm(t, r.q.js, "run1"); len(left) > 0 {
		t.Errorf("the collected run left on the farm: %v", left)
	}
	// Enqueueing the run again skips nothing the caller did not skip,
	// but a config whose outcome is kept (ok) is skipped by the caller:
	// the dead one is queued afresh.
	n, err := r.q.Enqueue(context.Background(), "run1", cs, 2, recs.Done)
	if err != nil || n != 1 {
		t.Fatalf("re-enqueue: %d, %v", n, err)
	}
	st, err := ReadStatus(context.Background(), r.q.js, "run1")
	if err != nil {
		t.Fatal(err)
	}
	if st.Queued == 0 || st.Dead != 0 || st.Results != 0 {
		t.Errorf("after re-enqueue status %+v: want the dead config's job, no dead letter and no result", st)
	}
}

// leftOnFarm lists what the farm keeps of run: messages on its subjects
// of the outcome streams, and its collector's consumers.
func leftOnFarm(tb testing.TB, js jetstream.JetStream, run string) []string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var left []string
	for stream, subj := range map[string]string{ResultsStream: "dfarm.results." + run + ".>",
		DeadStream: "dfarm.dead." + run + ".>", EventsStream: "dfarm.events." + run + ".>"} {
		s, err := js.Stream(ctx, stream)
		if err != nil {
			tb.Fatal(err)
		}
		info, err := s.Info(ctx, jetstream.WithSubjectFilter(subj))
		if err != nil {
			tb.Fatal(err)
		}
		for sub, n := range info.State.Subjects {
			left = append(left, fmt.Sprintf("%d on %s", n, sub))
		}
		names := s.ConsumerNames(ctx)
		for name := range names.Name() {
			if strings.HasPrefix(name, "collect_"+run+"_") {
				left = append(left, "consumer "+name)
			}
		}
	}
	return left
}

func TestResumeFromTheSameStore(t *testing.T) {
	dir := t.TempDir()
	cs := configs(10)
	recs := newMemRecords()
	// First process: drives 4 configs, then dies with one in flight.
	r := startRig(t, dir, DefaultQueueConfig())
	r.q.SetRunKey("run1", testRunKey)
	if _, err := r.q.Enqueue(context.Background(), "run1", cs, 3, nil); err != nil {
		t.Fatal(err)
	}
	var driven atomic.Int32
	gate := make(chan struct{})
	stop := r.runWorkers(t, 1, 1, funcDriver(func(ctx context.Context, slot int, c dialog.ChatConfig) (Outcome, error) {
		if driven.Add(1) > 4 {
			<-gate
			return Outcome{}, ctx.Err()
		}
		return Outcome{Dialogue: okDialogue(c)}, nil
	}), zaptest.NewLogger(t))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for recs.count() < 4 {
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	_, _ = r.q.Collect(ctx, CollectConfig{Run: "run1", Want: ids(cs), Records: recs}, zap.NewNop())
	r.stop() // the process dies: server gone, worker's job unacknowledged
	close(gate)
	stop()

	// Second process: same store, same run; enqueue skips what is
	// recorded and what is still queued.
	r2 := startRig(t, dir, DefaultQueueConfig())
	r2.q.SetRunKey("run1", testRunKey) // the run's key, kept by its coordinator
	if err := r2.q.Reclaim(context.Background()); err != nil {
		t.Fatal(err)
	}
	n, err := r2.q.Enqueue(context.Background(), "run1", cs, 3, recs.Done)
	if err != nil {
		t.Fatal(err)
	}
	if n != 10-recs.count() {
		t.Errorf("re-enqueue counted %d configs, want %d", n, 10-recs.count())
	}
	stop2 := r2.runWorkers(t, 2, 1, okDriver, zaptest.NewLogger(t))
	defer stop2()
	var want []string
	for _, c := range cs {
		if !recs.Done(c.ID) {
			want = append(want, c.ID)
		}
	}
	var attempts []Attempt
	var dead []DeadLetter
	collect(t, r2.q, "run1", want, recs, &attempts, &dead)
	for _, c := range cs {
		if recs.appends[c.ID] != 1 {
			t.Errorf("%s recorded %d times", c.ID, recs.appends[c.ID])
		}
	}
}

func (m *memRecords) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.appends)
}

// testRunKey is the run key a test's coordinator keeps across restarts.
var testRunKey = []byte("0123456789abcdef0123456789abcdef")
