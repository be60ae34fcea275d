package farm

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
)

// While a run's jobs wait and no worker reports, the coordinator is told
// so; a worker's fresh health silences it, and health gone stale (a worker
// killed without deleting it) does not.
func TestWatchWorkersWarnsWhileNoWorkerPulls(t *testing.T) {
	r := startRig(t, t.TempDir(), DefaultQueueConfig())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := r.q.Enqueue(ctx, "r", configs(3), 2, nil); err != nil {
		t.Fatal(err)
	}
	warned := make(chan string, 16)
	log := zaptest.NewLogger(t, zaptest.WrapOptions(zap.Hooks(func(e zapcore.Entry) error {
		if e.Level == zapcore.WarnLevel {
			select {
			case warned <- e.Message:
			default:
			}
		}
		return nil
	})))
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.q.WatchWorkers(wctx, "r", 20*time.Millisecond, log)
	}()
	select {
	case m := <-warned:
		if !strings.Contains(m, "no worker is pulling jobs") {
			t.Errorf("warning %q, want that no worker is pulling jobs", m)
		}
	case <-ctx.Done():
		t.Fatal("no warning while 3 jobs waited with no worker")
	}
	stop()
	<-done

	now := time.Now()
	if n, err := r.q.idleJobs(ctx, "r", now); err != nil || n != 3 {
		t.Errorf("no worker: %d idle jobs (%v), want 3", n, err)
	}
	kv, err := r.q.js.KeyValue(ctx, WorkersBucket)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := json.Marshal(Health{Worker: "w1", Slots: 1, Updated: now})
	if _, err := kv.Put(ctx, healthKey(Anonymous, "w1", "k1"), h); err != nil {
		t.Fatal(err)
	}
	if n, err := r.q.idleJobs(ctx, "r", now.Add(healthEvery)); err != nil || n != 0 {
		t.Errorf("a worker reported %s ago: %d idle jobs (%v), want 0", healthEvery, n, err)
	}
	if n, err := r.q.idleJobs(ctx, "r", now.Add(time.Minute)); err != nil || n != 3 {
		t.Errorf("the only worker last reported a minute ago: %d idle jobs (%v), want 3", n, err)
	}
	if n, err := r.q.idleJobs(ctx, "other", now.Add(time.Minute)); err != nil || n != 0 {
		t.Errorf("a run with no jobs: %d idle jobs (%v), want 0", n, err)
	}
}

// The coordinator orders a run's jobs for the simulators of the workers
// reporting now: two workers' slots count, one gone silent does not.
func TestSimulatorsOfLiveWorkers(t *testing.T) {
	r := startRig(t, t.TempDir(), DefaultQueueConfig())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if n := r.q.Simulators(ctx); n != 0 {
		t.Errorf("no worker: %d simulators", n)
	}
	kv, err := r.q.js.KeyValue(ctx, WorkersBucket)
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range []Health{
		{Worker: "w1", Slots: 16, Updated: time.Now()},
		{Worker: "w2", Slots: 4, Updated: time.Now().Add(-healthEvery)},
		{Worker: "w3", Slots: 8, Updated: time.Now().Add(-time.Minute)},
	} {
		data, _ := json.Marshal(h)
		if _, err := kv.Put(ctx, healthKey(Anonymous, h.Worker, fmt.Sprint("k", i)), data); err != nil {
			t.Fatal(err)
		}
	}
	if n := r.q.Simulators(ctx); n != 20 {
		t.Errorf("%d simulators, want 20 (16 + 4; the worker silent for a minute left out)", n)
	}
}
