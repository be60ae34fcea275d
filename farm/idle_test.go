package farm

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"dialogfarm/dialog"
)

// A worker told to stop when idle drives every job the farm has, the
// first one three times as long as its idle time, and then stops on its
// own: a dialogue in progress is never cut short, and no job is left.
func TestAnIdleWorkerStops(t *testing.T) {
	r := startRig(t, t.TempDir(), DefaultQueueConfig())
	cs := configs(3)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := r.q.Enqueue(ctx, "run1", cs, 3, nil); err != nil {
		t.Fatal(err)
	}
	nc, err := r.srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
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
