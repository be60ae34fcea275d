package farm

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
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

func TestAutoSessions(t *testing.T) {
	const gib = 1 << 30
	for _, c := range []struct {
		cores int
		mem   uint64
		known bool
		want  int
	}{
		{cores: 2, mem: 16 * gib, known: true, want: 23},  // memory decides, not the cores: 1 + (16384-1800)/640
		{cores: 8, mem: 64 * gib, known: true, want: 64},  // at most 64, the ceiling of --sessions
		{cores: 2, mem: 3 * gib, known: true, want: 2},    // 1.8 GiB + 640 MiB fits, a third does not
		{cores: 4, mem: 4 * gib, known: true, want: 4},    // 1.8 GiB + 3 x 640 MiB = 3.7 GiB
		{cores: 2, mem: 1 * gib, known: true, want: 1},    // always one
		{cores: 2, mem: 0, known: false, want: 4},         // memory unknown: two per core
		{cores: 64, mem: 0, known: false, want: 64},       // and at most 64
		{cores: 1, mem: 2500 << 20, known: true, want: 2}, // 1.8 GiB + 640 MiB
		{cores: 16, mem: 5 * gib, known: true, want: 6},   // 1 + (5120-1800)/640 = 6
	} {
		if got := autoSessions(c.cores, c.mem, c.known); got != c.want {
			t.Errorf("autoSessions(%d cores, %d MiB, known %v) = %d, want %d", c.cores, c.mem>>20, c.known, got, c.want)
		}
	}
}

// The budget's reader of this machine: a core kept busy between two
// readings shows as busy CPU, and the available memory lies between the
// free memory (halved: other processes allocate meanwhile) and all of it.
func TestProcReaderReadsThisMachine(t *testing.T) {
	read := newProcReader()
	if _, err := read(); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(300 * time.Millisecond); time.Now().Before(end); {
	}
	u, err := read()
	if err != nil {
		t.Fatal(err)
	}
	if u.CPUBusy < 0.5/float64(runtime.NumCPU()) || u.CPUBusy > 1 {
		t.Errorf("CPU busy %.2f with one of %d cores kept busy", u.CPUBusy, runtime.NumCPU())
	}
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil {
		t.Fatal(err)
	}
	// MemAvailable counts the free memory and what can be reclaimed.
	if free, total := si.Freeram*uint64(si.Unit), si.Totalram*uint64(si.Unit); u.MemAvailable < free/2 || u.MemAvailable > total {
		t.Errorf("%d bytes available, %d free of %d", u.MemAvailable, free, total)
	}
}
