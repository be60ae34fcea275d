package farm

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"
)

// waitAll runs n Waits on each limiter at once and returns how long they
// took together.
func waitAll(t *testing.T, ctx context.Context, n int, limiters ...*Limiter) time.Duration {
	t.Helper()
	start := time.Now()
	var wg sync.WaitGroup
	for _, l := range limiters {
		for range n {
			wg.Go(func() {
				if err := l.Wait(ctx); err != nil {
					t.Error(err)
				}
			})
		}
	}
	wg.Wait()
	return time.Since(start)
}

// Two workers, each with a limit of 600 calls a minute on the same model,
// make 10 calls between them at 100 ms apart at the least, as one process
// would: the farm books them one after the other. Each on its own would
// space its own 5 only (400 ms).
func TestWorkersShareARateLimit(t *testing.T) {
	r := startAttackRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	core, logs := observer.New(zapcore.WarnLevel)
	var limiters []*Limiter
	for _, wq := range r.workerQueues {
		l := NewLimits(zap.New(core))
		l.Bind(ctx, wq)
		limiters = append(limiters, l.Limiter("rpm-shared", 600))
	}
	if took := waitAll(t, ctx, 5, limiters...); took < 850*time.Millisecond {
		t.Errorf("10 calls under one limit of 600 a minute from two workers took %v, want at least 900 ms less a little", took)
	}
	for _, e := range logs.All() {
		t.Errorf("a worker fell back to a limit of its own: %s %v", e.Message, e.ContextMap())
	}
	// The booking is in the farm, where the coordinator sees it.
	kv, err := r.cjs.KeyValue(ctx, LimitsBucket)
	if err != nil {
		t.Fatal(err)
	}
	e, err := kv.Get(ctx, "rpm-shared")
	if err != nil {
		t.Fatalf("the shared limit's booking: %v", err)
	}
	if e.Revision() < 10 {
		t.Errorf("the shared limit's revision is %d after 10 calls, want 10 bookings at least", e.Revision())
	}
}

// A booking further out than maxBooked (a clock far ahead, or a worker
// that means harm) is taken as free now, so it holds up nobody for long.
func TestAFarOffBookingIsTakenAsFree(t *testing.T) {
	r := startAttackRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kv, err := r.cjs.KeyValue(ctx, LimitsBucket)
	if err != nil {
		t.Fatal(err)
	}
	far := time.Now().Add(10 * time.Hour).UnixNano()
	if _, err := kv.Put(ctx, "rpm-far", []byte(strconv.FormatInt(far, 10))); err != nil {
		t.Fatal(err)
	}
	l := NewLimits(zaptest.NewLogger(t))
	l.Bind(ctx, r.workerQueues[0])
	if err := l.Limiter("rpm-far", 60).Wait(ctx); err != nil {
		t.Fatal(err)
	}
	e, err := kv.Get(ctx, "rpm-far")
	if err != nil {
		t.Fatal(err)
	}
	ns, _ := strconv.ParseInt(string(e.Value()), 10, 64)
	if next := time.Unix(0, ns); time.Until(next) > 2*time.Minute {
		t.Errorf("after a booking 10 h out the next free time is %v away, want about a second", time.Until(next))
	}
}

// Without a farm, and on a farm whose streams have no limits bucket,
// each process keeps the limit on its own, and says so once.
func TestLimitsWithoutTheFarmsBucketStayLocal(t *testing.T) {
	r := startAttackRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	unbound := NewLimits(zaptest.NewLogger(t))
	if took := waitAll(t, ctx, 3, unbound.Limiter("rpm-local", 600)); took < 180*time.Millisecond {
		t.Errorf("3 calls at 600 a minute took %v, want at least 200 ms less a little", took)
	}
	if err := r.cjs.DeleteKeyValue(ctx, LimitsBucket); err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zapcore.WarnLevel)
	l := NewLimits(zap.New(core))
	l.Bind(ctx, r.workerQueues[0])
	if took := waitAll(t, ctx, 3, l.Limiter("rpm-local", 600)); took < 180*time.Millisecond {
		t.Errorf("3 calls at 600 a minute took %v, want at least 200 ms less a little", took)
	}
	if n := logs.FilterMessageSnippet("keeps no shared rate limits").Len(); n != 1 {
		t.Errorf("%d warnings that the farm keeps no shared limits, want 1: %v", n, logs.All())
	}
}
