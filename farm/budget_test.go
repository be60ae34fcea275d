package farm

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"dialogfarm/dialog"
)

func fakeBudget(max int, u *atomic.Pointer[Usage]) *Budget {
	b := NewBudget(max)
	b.Every = 5 * time.Millisecond
	b.read = func() (Usage, error) { return *u.Load(), nil }
	return b
}

func TestBudgetAdmits(t *testing.T) {
	var u atomic.Pointer[Usage]
	u.Store(&Usage{CPUBusy: 0.99, MemAvailable: 8 << 30})
	b := fakeBudget(3, &u)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// The first dialogue always starts, however busy the machine.
	if err := b.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	short, stop := context.WithTimeout(ctx, 50*time.Millisecond)
	if err := b.Acquire(short); err == nil {
		t.Fatal("a second dialogue started on a machine at 99% CPU")
	}
	stop()
	u.Store(&Usage{CPUBusy: 0.4, MemAvailable: 256 << 20})
	short, stop = context.WithTimeout(ctx, 50*time.Millisecond)
	if err := b.Acquire(short); err == nil {
		t.Fatal("a second dialogue started with 256 MiB of memory left")
	}
	stop()
	u.Store(&Usage{CPUBusy: 0.4, MemAvailable: 8 << 30})
	for range 2 {
		if err := b.Acquire(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if b.Busy() != 3 {
		t.Fatalf("busy %d", b.Busy())
	}
	short, stop = context.WithTimeout(ctx, 50*time.Millisecond)
	if err := b.Acquire(short); err == nil {
		t.Fatal("more dialogues than Max")
	}
	stop()
	b.Release()
	if err := b.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestWorkerHonoursBudget(t *testing.T) {
	r := startRig(t, t.TempDir(), DefaultQueueConfig())
	cs := configs(6)
	if _, err := r.q.Enqueue(context.Background(), "b", cs, 1, nil); err != nil {
		t.Fatal(err)
	}
	var u atomic.Pointer[Usage]
	u.Store(&Usage{CPUBusy: 1, MemAvailable: 8 << 30})
	var mu sync.Mutex
	now, peak := 0, 0
	drv := funcDriver(func(ctx context.Context, slot int, c dialog.ChatConfig) (Outcome, error) {
		mu.Lock()
		now++
		peak = max(peak, now)
		mu.Unlock()
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		now--
		mu.Unlock()
		return Outcome{Dialogue: okDialogue(c)}, nil
	})
	w := NewWorker(WorkerConfig{ID: "w", Slots: 3, FetchWait: 100 * time.Millisecond, Budget: fakeBudget(3, &u)},
		r.q, drv, nil, zaptest.NewLogger(t))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = w.Run(ctx); close(done) }()
	recs := newMemRecords()
	var attempts []Attempt
	var dead []DeadLetter
	collect(t, r.q, "b", ids(cs), recs, &attempts, &dead)
	cancel()
	<-done
	if peak != 1 {
		t.Errorf("%d dialogues at once on a saturated machine, want 1", peak)
	}
}
