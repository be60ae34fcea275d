package farm

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"

	"dialogfarm/dialog"
)

// stallProxy forwards TCP connections to a server; while stalled it holds
// back what the server sends, as a pull whose consumer leader went away
// leaves the client hearing nothing (what the client sends still goes
// through).
type stallProxy struct {
	ln     net.Listener
	target string
	gate   sync.RWMutex // a writer holds it while stalled
}

func startStallProxy(tb testing.TB, target string) *stallProxy {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	p := &stallProxy{ln: ln, target: target}
	var conns sync.WaitGroup
	tb.Cleanup(func() { _ = ln.Close(); conns.Wait() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				_ = c.Close()
				continue
			}
			conns.Add(2)
			go func() { // client to server: never held
				defer conns.Done()
				_, _ = io.Copy(s, c)
				_ = s.Close()
			}()
			go func() { // server to client: held while stalled
				defer conns.Done()
				defer c.Close()
				buf := make([]byte, 32<<10)
				for {
					n, err := s.Read(buf)
					if n > 0 {
						p.gate.RLock()
						_, werr := c.Write(buf[:n])
						p.gate.RUnlock()
						if werr != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return p
}

func (p *stallProxy) url() string { return "nats://" + p.ln.Addr().String() }
func (p *stallProxy) stall()      { p.gate.Lock() }
func (p *stallProxy) resume()     { p.gate.Unlock() }

// A collector whose pulls hear nothing for longer than their heartbeat
// (nats.go's iterator then says ErrNoHeartbeat) pulls again and collects
// every result, the ones published while it heard nothing included. This
// is what a 3-node cluster losing the consumer's leader does to it; the
// chaos suite's cluster test exercises that case, this one the collector's
// side of it on a single server.
func TestCollectorPullsAgainAfterNoHeartbeat(t *testing.T) {
	dir := t.TempDir()
	srv, err := StartServer(context.Background(), ServerConfig{StoreDir: filepath.Join(dir, "store"), Listen: "127.0.0.1:-1", InsecureAnonymous: true})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	direct, err := srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	djs, _ := JetStream(direct)
	q, err := Setup(ctx, djs, DefaultQueueConfig())
	if err != nil {
		t.Fatal(err)
	}
	cs := configs(8)
	q.SetRunKey("stall", testRunKey)
	if _, err := q.Enqueue(ctx, "stall", cs, 2, nil); err != nil {
		t.Fatal(err)
	}

	// The collector alone talks to the server through the proxy.
	proxy := startStallProxy(t, strings.TrimPrefix(srv.ClientURL(), "nats://"))
	pc, err := nats.Connect(proxy.url(), nats.Name("collector"))
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	cq := openQueue(ctx, t, pc)
	cq.SetRunKey("stall", testRunKey) // the collector is the same coordinator

	// The first half of the configs is driven at once, the rest only
	// once the collector's connection has stalled.
	late := make(chan struct{})
	second := map[string]bool{}
	for _, c := range cs[4:] {
		second[c.ID] = true
	}
	drv := funcDriver(func(ctx context.Context, slot int, c dialog.ChatConfig) (Outcome, error) {
		if second[c.ID] {
			select {
			case <-late:
			case <-ctx.Done():
				return Outcome{}, ctx.Err()
			}
		}
		return Outcome{Dialogue: okDialogue(c)}, nil
	})
	wnc, err := srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer wnc.Close()
	wq := openQueue(ctx, t, wnc)
	wctx, stopWorker := context.WithCancel(ctx)
	var worker sync.WaitGroup
	worker.Go(func() {
		w := NewWorker(WorkerConfig{ID: "w", Slots: 8, FetchWait: 200 * time.Millisecond,
			Backoff: []time.Duration{10 * time.Millisecond}}, wq, drv, NewMetrics("w"), zaptest.NewLogger(t))
		if err := w.Run(wctx); err != nil {
			t.Errorf("worker: %v", err)
		}
	})
	defer func() { stopWorker(); worker.Wait() }()

	// The collector's log says when it gave up a pull.
	noHeartbeat := make(chan struct{})
	var sawNoHeartbeat sync.Once
	log := zaptest.NewLogger(t, zaptest.WrapOptions(zap.Hooks(func(e zapcore.Entry) error {
		if strings.Contains(e.Message, "no heartbeat") {
			sawNoHeartbeat.Do(func() { close(noHeartbeat) })
		}
		return nil
	})))
	recs := newMemRecords()
	halfway := make(chan struct{})
	var once sync.Once
	type outcome struct {
		prog Progress
		err  error
	}
	done := make(chan outcome, 1)
	go func() {
		p, err := cq.Collect(ctx, CollectConfig{Run: "stall", Want: ids(cs), Records: recs, Progress: func(p Progress) {
			if p.Done == 4 {
				once.Do(func() { close(halfway) })
			}
		}}, log)
		done <- outcome{p, err}
	}()

	select {
	case <-halfway:
	case o := <-done:
		t.Fatalf("collect ended before the stall: %+v, %v", o.prog, o.err)
	case <-ctx.Done():
		t.Fatal("the first 4 results were not collected")
	}
	proxy.stall()
	close(late)
	// Hold the server's side back until the collector gave up a pull.
	select {
	case <-noHeartbeat:
		proxy.resume()
	case o := <-done:
		proxy.resume()
		t.Fatalf("collect ended while its connection was stalled: %+v, %v", o.prog, o.err)
	case <-ctx.Done():
		proxy.resume()
		t.Fatal("the collector never reported a pull without heartbeat")
	}

	o := <-done
	if o.err != nil {
		t.Fatalf("collect: %v (progress %+v)", o.err, o.prog)
	}
	if o.prog.Done != len(cs) || o.prog.OK != len(cs) {
		t.Errorf("progress %+v, want %d ok", o.prog, len(cs))
	}
	for _, c := range cs {
		if n := recs.appends[c.ID]; n != 1 {
			t.Errorf("%s recorded %d times", c.ID, n)
		}
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Error("the test ran out of time")
	}
}

// A collector that dies while it holds an attempt it has not acknowledged
// (its process killed) leaves the message pending with the server; the
// collector of the resumed run gets it again soon enough to finish well
// within its deadline (with the collector's ack wait at 30 s, it waited
// the 30 s out after its last record: the end of a resumed run stalled).
func TestCollectAfterACollectorDied(t *testing.T) {
	r := startRig(t, t.TempDir(), DefaultQueueConfig())
	ctx := context.Background()
	c := configs(2)[1]
	publish := func(subject string, v any) {
		t.Helper()
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.q.js.Publish(ctx, subject, data); err != nil {
			t.Fatal(err)
		}
	}
	failed := okDialogue(c)
	failed.Status, failed.Error = dialog.StatusFailed, "upstream 429"
	publish(attemptSubject("r1", c.ID, Anonymous), Attempt{Run: "r1", Attempt: 1, Delivery: delivered(t, r.q, "r1", c.ID), Dialogue: failed})

	// The first collector takes the attempt and never returns from
	// handling it: its process dies there.
	holding := make(chan struct{})
	dead, kill := context.WithCancel(ctx)
	var first sync.WaitGroup
	first.Go(func() {
		_, _ = r.q.Collect(dead, CollectConfig{Run: "r1", Want: []string{c.ID}, Records: newMemRecords(),
			Attempts: func(any) error { close(holding); <-dead.Done(); return dead.Err() }}, zap.NewNop())
	})
	<-holding
	kill()
	first.Wait()

	publish(resultSubject("r1", c.ID, Anonymous), Result{Run: "r1", Attempt: 2, Delivery: delivered(t, r.q, "r1", c.ID), Dialogue: okDialogue(c)})
	recs := newMemRecords()
	var attempts []Attempt
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	prog, err := r.q.Collect(cctx, CollectConfig{Run: "r1", Want: []string{c.ID}, Records: recs,
		Attempts: func(v any) error { attempts = append(attempts, v.(Attempt)); return nil }}, zap.NewNop())
	if err != nil {
		t.Fatalf("the resumed collector: %v (progress %+v)", err, prog)
	}
	if recs.appends[c.ID] != 1 || len(attempts) != 1 || attempts[0].Dialogue.Error != "upstream 429" {
		t.Errorf("records %v, attempts %+v", recs.appends, attempts)
	}
}

// delivered is the seal a delivery of run's config id carries, as a worker
// that was delivered its job echoes it.
func delivered(tb testing.TB, q *Queue, run, id string) Delivery {
	tb.Helper()
	key, err := q.runKey(run)
	if err != nil {
		tb.Fatal(err)
	}
	nonce, err := newNonce()
	if err != nil {
		tb.Fatal(err)
	}
	return Delivery{Nonce: nonce, Token: seal(key, run, id, nonce)}
}
