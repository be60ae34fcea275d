package farm

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
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
		limiters = append(limiters, l.Limiter("rpm-shared", 600, "m"))
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
	far, _ := json.Marshal(booking{Next: time.Now().Add(10 * time.Hour).UnixNano(), RPM: 60, Model: "m"})
	if _, err := kv.Put(ctx, "rpm-far", far); err != nil {
		t.Fatal(err)
	}
	l := NewLimits(zaptest.NewLogger(t))
	l.Bind(ctx, r.workerQueues[0])
	if err := l.Limiter("rpm-far", 60, "m").Wait(ctx); err != nil {
		t.Fatal(err)
	}
	e, err := kv.Get(ctx, "rpm-far")
	if err != nil {
		t.Fatal(err)
	}
	var b booking
	if err := json.Unmarshal(e.Value(), &b); err != nil {
		t.Fatal(err)
	}
	if next := time.Unix(0, b.Next); time.Until(next) > 2*time.Minute {
		t.Errorf("after a booking 10 h out the next free time is %v away, want about a second", time.Until(next))
	}
}

// Without a farm, on a farm whose streams have no limits bucket, and
// once a booking failed, each process keeps the limit on its own, and
// says so once.
func TestLimitsWithoutTheFarmsBucketStayLocal(t *testing.T) {
	r := startAttackRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	unbound := NewLimits(zaptest.NewLogger(t))
	if took := waitAll(t, ctx, 3, unbound.Limiter("rpm-local", 600, "m")); took < 180*time.Millisecond {
		t.Errorf("3 calls at 600 a minute took %v, want at least 200 ms less a little", took)
	}
	core, logs := observer.New(zapcore.WarnLevel)
	bound := NewLimits(zap.New(core))
	bound.Bind(ctx, r.workerQueues[1])
	if err := r.cjs.DeleteKeyValue(ctx, LimitsBucket); err != nil {
		t.Fatal(err)
	}
	if took := waitAll(t, ctx, 3, bound.Limiter("rpm-gone", 600, "m")); took < 180*time.Millisecond {
		t.Errorf("3 calls at 600 a minute with the bucket gone took %v, want at least 200 ms less a little", took)
	}
	if n := logs.FilterMessageSnippet("could not book").Len(); n != 1 {
		t.Errorf("%d warnings that a booking failed, want 1: %v", n, logs.All())
	}
	core, logs = observer.New(zapcore.WarnLevel)
	l := NewLimits(zap.New(core))
	l.Bind(ctx, r.workerQueues[0])
	if took := waitAll(t, ctx, 3, l.Limiter("rpm-local", 600, "m")); took < 180*time.Millisecond {
		t.Errorf("3 calls at 600 a minute took %v, want at least 200 ms less a little", took)
	}
	if n := logs.FilterMessageSnippet("keeps no shared rate limits").Len(); n != 1 {
		t.Errorf("%d warnings that the farm keeps no shared limits, want 1: %v", n, logs.All())
	}
}

// The farm's status and metrics show each shared limit and how far ahead
// its calls are booked: three calls booked at 6 a minute hold the next
// free time 30 s ahead.
func TestTheStatusShowsTheSharedLimits(t *testing.T) {
	r := startAttackRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l := NewLimits(zaptest.NewLogger(t))
	l.Bind(ctx, r.workerQueues[0])
	lim := l.Limiter("rpm-slow", 6, "coder-7b")
	for range 3 {
		if _, err := lim.book(ctx, l.bucket()); err != nil {
			t.Fatal(err)
		}
	}
	st, err := ReadStatus(ctx, r.cjs, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Limits) != 1 {
		t.Fatalf("status limits %+v, want the one in use", st.Limits)
	}
	if got := st.Limits[0]; got.Model != "coder-7b" || got.RPM != 6 || got.Limit != "rpm-slow" ||
		got.Ahead < 25*time.Second || got.Ahead > 30*time.Second {
		t.Errorf("status limit %+v, want coder-7b at 6 a minute, booked about 30 s ahead", got)
	}
	if text := st.Text(time.Now()); !strings.Contains(text, "rate limit of model coder-7b: 6 calls a minute across the farm; calls booked ") {
		t.Errorf("status text lacks the limit:\n%s", text)
	}
	body := scrapeFarmMetrics(t, r.cjs)
	if !regexp.MustCompile(`\ndialogfarm_farm_model_calls_booked_ahead_seconds\{limit="rpm-slow",model="coder-7b",rpm="6"\} (2[5-9]|30)\.`).Match(body) {
		t.Errorf("the metrics lack the limit booked about 30 s ahead:\n%s", body)
	}
}
