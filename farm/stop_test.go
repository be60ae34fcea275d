package farm

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"go.uber.org/zap/zaptest"

	"dialogfarm/dialog"
)

// A worker told to drain pulls no more jobs, hands back those it pulled
// ahead, finishes the dialogue in progress and stops; the rest stay on
// the queue for other workers.
func TestWorkerDrains(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r, nc := enqueuedRig(ctx, t, 4)
	started, release := make(chan string, 4), make(chan struct{})
	drain := make(chan struct{})
	w := NewWorker(WorkerConfig{ID: "w1", Slots: 1, FetchWait: 200 * time.Millisecond, Drain: drain}, openQueue(ctx, t, nc),
		funcDriver(func(ctx context.Context, slot int, c dialog.ChatConfig) (Outcome, error) {
			started <- c.ID
			select {
			case <-release:
			case <-ctx.Done():
				return Outcome{}, ctx.Err()
			}
			return Outcome{Dialogue: okDialogue(c)}, nil
		}), nil, zaptest.NewLogger(t))
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	first := <-started
	close(drain)
	close(release)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("drained worker: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("the drained worker did not stop")
	}
	if len(started) > 0 {
		t.Errorf("the draining worker started %s", <-started)
	}
	st, err := ReadStatus(ctx, r.q.js, "run1")
	if err != nil {
		t.Fatal(err)
	}
	if st.Results != 1 || st.Queued != 3 || st.InFlight != 0 || len(st.Workers) != 0 {
		t.Errorf("after the drain: %d results (want the one in progress, %s), %d queued (want 3), %d in flight, workers %+v",
			st.Results, first, st.Queued, st.InFlight, st.Workers)
	}
}

// A worker told to stop when idle drives every job the farm has, the
// first one three times as long as its idle time, and then stops on its
// own: a dialogue in progress is never cut short, and no job is left.
func TestAnIdleWorkerStops(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r, nc := enqueuedRig(ctx, t, 3)
	const idle = 400 * time.Millisecond
	var driven, cut atomic.Int32
	w := NewWorker(WorkerConfig{ID: "w1", Slots: 2, FetchWait: 100 * time.Millisecond, IdleExit: idle}, openQueue(ctx, t, nc),
		funcDriver(func(ctx context.Context, slot int, c dialog.ChatConfig) (Outcome, error) {
			if driven.Add(1) == 1 {
				select {
				case <-time.After(3 * idle):
				case <-ctx.Done():
					cut.Add(1)
					return Outcome{}, ctx.Err()
				}
			}
			return Outcome{Dialogue: okDialogue(c)}, nil
		}), nil, zaptest.NewLogger(t))
	if err := w.Run(ctx); err != nil {
		t.Fatalf("idle worker: %v", err)
	}
	if ctx.Err() != nil {
		t.Fatal("the idle worker did not stop")
	}
	if driven.Load() != 3 || cut.Load() != 0 {
		t.Errorf("the worker drove %d dialogues, %d cut short; want 3, none", driven.Load(), cut.Load())
	}
	st, err := ReadStatus(ctx, r.q.js, "run1")
	if err != nil {
		t.Fatal(err)
	}
	if st.Results != 3 || st.Queued != 0 {
		t.Errorf("after the idle worker stopped: %d results, %d queued; want 3, 0", st.Results, st.Queued)
	}
}

// enqueuedRig is a farm with n configs of run1 enqueued, and a connection
// of its own for a worker.
func enqueuedRig(ctx context.Context, t *testing.T, n int) (*rig, *nats.Conn) {
	t.Helper()
	r := startRig(t, t.TempDir(), DefaultQueueConfig())
	if _, err := r.q.Enqueue(ctx, "run1", configs(n), 3, nil); err != nil {
		t.Fatal(err)
	}
	nc, err := r.srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return r, nc
}

func TestWorkerStopsWhenItsDriverCannotDrive(t *testing.T) {
	r := startRig(t, t.TempDir(), DefaultQueueConfig())
	cs := configs(3)
	if _, err := r.q.Enqueue(context.Background(), "run1", cs, 3, nil); err != nil {
		t.Fatal(err)
	}
	broken := fmt.Errorf("%w: extension pub.x failed to activate", ErrCannotDrive)
	var tries atomic.Int32
	w := NewWorker(WorkerConfig{ID: "broken", Slots: 2, FetchWait: 200 * time.Millisecond}, r.q,
		funcDriver(func(ctx context.Context, slot int, c dialog.ChatConfig) (Outcome, error) {
			tries.Add(1)
			return Outcome{}, broken
		}), nil, zaptest.NewLogger(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := w.Run(ctx); !errors.Is(err, broken) {
		t.Fatalf("Run = %v, want the driver's error", err)
	}
	if ctx.Err() != nil || tries.Load() > 2 {
		t.Errorf("the worker tried %d jobs (at most one per slot) and its context: %v", tries.Load(), ctx.Err())
	}
	stop := r.runWorkers(t, 1, 1, okDriver, zaptest.NewLogger(t))
	defer stop()
	recs := newMemRecords()
	var attempts []Attempt
	var dead []DeadLetter
	if prog := collect(t, r.q, "run1", ids(cs), recs, &attempts, &dead); prog.OK != len(cs) || len(dead) != 0 {
		t.Fatalf("progress %+v, %d dead", prog, len(dead))
	}
	for _, c := range cs {
		if recs.appends[c.ID] != 1 {
			t.Errorf("%s recorded %d times", c.ID, recs.appends[c.ID])
		}
	}
}
