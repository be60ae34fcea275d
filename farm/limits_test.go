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
				if err := l.WaitN(ctx, 1); err != nil {
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
	r, ctx, limits, logs := workersLimits(t)
	var limiters []*Limiter
	for _, l := range limits {
		limiters = append(limiters, l.Limiter(LimitSpec{Key: "rpm-shared", Model: "m", Unit: "calls", PerMinute: 600, Burst: 1}))
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
	far, _ := json.Marshal(booking{Full: time.Now().Add(10 * time.Hour).UnixNano(), PerMinute: 60, Burst: 1, Unit: "calls", Model: "m"})
	if _, err := kv.Put(ctx, "rpm-far", far); err != nil {
		t.Fatal(err)
	}
	l := NewLimits(zaptest.NewLogger(t))
	l.Bind(ctx, r.workerQueues[0])
	if err := l.Limiter(LimitSpec{Key: "rpm-far", Model: "m", Unit: "calls", PerMinute: 60, Burst: 1}).WaitN(ctx, 1); err != nil {
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
	if next := time.Unix(0, b.Full); time.Until(next) > 2*time.Minute {
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
	if took := waitAll(t, ctx, 3, unbound.Limiter(LimitSpec{Key: "rpm-local", PerMinute: 600, Burst: 1})); took < 180*time.Millisecond {
		t.Errorf("3 calls at 600 a minute took %v, want at least 200 ms less a little", took)
	}
	core, logs := observer.New(zapcore.WarnLevel)
	bound := NewLimits(zap.New(core))
	bound.Bind(ctx, r.workerQueues[1])
	if err := r.cjs.DeleteKeyValue(ctx, LimitsBucket); err != nil {
		t.Fatal(err)
	}
	if took := waitAll(t, ctx, 3, bound.Limiter(LimitSpec{Key: "rpm-gone", PerMinute: 600, Burst: 1})); took < 180*time.Millisecond {
		t.Errorf("3 calls at 600 a minute with the bucket gone took %v, want at least 200 ms less a little", took)
	}
	if n := logs.FilterMessageSnippet("could not book").Len(); n != 1 {
		t.Errorf("%d warnings that a booking failed, want 1: %v", n, logs.All())
	}
	core, logs = observer.New(zapcore.WarnLevel)
	l := NewLimits(zap.New(core))
	l.Bind(ctx, r.workerQueues[0])
	if took := waitAll(t, ctx, 3, l.Limiter(LimitSpec{Key: "rpm-local", PerMinute: 600, Burst: 1})); took < 180*time.Millisecond {
		t.Errorf("3 calls at 600 a minute took %v, want at least 200 ms less a little", took)
	}
	if n := logs.FilterMessageSnippet("keeps no shared rate limits").Len(); n != 1 {
		t.Errorf("%d warnings that the farm keeps no shared limits, want 1: %v", n, logs.All())
	}
}

// The farm's status and metrics show each shared limit and how long a
// call would wait for it: three calls booked at 6 a minute, one at once,
// make the next one wait 30 s; 30,000 tokens booked of a limit of 20,000
// a minute (as much at once), about 30 s.
func TestTheStatusShowsTheSharedLimits(t *testing.T) {
	r, ctx, l := boundLimits(t)
	calls := l.Limiter(LimitSpec{Key: "rpm-slow", Model: "coder-7b", Unit: "calls", PerMinute: 6, Burst: 1})
	for range 3 {
		if _, err := calls.book(ctx, l.bucket(), 1); err != nil {
			t.Fatal(err)
		}
	}
	tokens := l.Limiter(LimitSpec{Key: "tpm-slow", Model: "coder-7b", Unit: "tokens", PerMinute: 20000, Burst: 20000})
	for _, n := range []int{15000, 15000} {
		if _, err := tokens.book(ctx, l.bucket(), n); err != nil {
			t.Fatal(err)
		}
	}
	st, err := ReadStatus(ctx, r.cjs, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Limits) != 2 {
		t.Fatalf("status limits %+v, want the two in use", st.Limits)
	}
	c, k := st.Limits[0], st.Limits[1]
	if c.Model != "coder-7b" || c.Unit != "calls" || c.PerMinute != 6 || c.Limit != "rpm-slow" || c.Taken != 3 ||
		c.Wait < 25*time.Second || c.Wait > 30*time.Second {
		t.Errorf("status of the calls limit %+v, want 3 of coder-7b's 6 a minute taken, a call waiting about 30 s", c)
	}
	// A call waits for the 1 token it lacks: up to 30 s and one token's
	// 3 ms right after the bookings.
	if k.Unit != "tokens" || k.Taken < 29000 || k.Taken > 30000 || k.Wait < 25*time.Second || k.Wait > 30*time.Second+time.Minute/20000 {
		t.Errorf("status of the tokens limit %+v, want about 30000 taken, a call waiting about 30 s", k)
	}
	text := st.Text(time.Now())
	for _, want := range []string{
		"rate limit of model coder-7b: 6 calls a minute across the farm, 1 at once; 3 taken now; a call now waits ",
		"rate limit of model coder-7b: 20000 tokens a minute across the farm, 20000 at once; ",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("status text lacks %q:\n%s", want, text)
		}
	}
	body := scrapeFarmMetrics(t, r.cjs)
	for _, re := range []string{
		`\ndialogfarm_farm_rate_limit_wait_seconds\{limit="rpm-slow",model="coder-7b",unit="calls"\} (2[5-9]|30)\.`,
		`\ndialogfarm_farm_rate_limit_taken\{limit="rpm-slow",model="coder-7b",unit="calls"\} 3\n`,
		`\ndialogfarm_farm_rate_limit_wait_seconds\{limit="tpm-slow",model="coder-7b",unit="tokens"\} 2[5-9]\.`,
	} {
		if !regexp.MustCompile(re).Match(body) {
			t.Errorf("the metrics lack %s:\n%s", re, body)
		}
	}
}

// A bucket of tokens lets a minute's worth go at once, then makes the
// next call wait for the tokens it lacks; a call booked after it went
// (the tokens of an answer longer than was booked) waits for nothing and
// holds back the one after.
func TestASharedTokenBucket(t *testing.T) {
	_, ctx, l := boundLimits(t)
	tokens := l.Limiter(LimitSpec{Key: "tpm-b", Unit: "tokens", PerMinute: 6000, Burst: 6000}) // 100 a second
	now := time.Now()
	for i, c := range []struct{ n, waitMin, waitMax int }{
		{3000, 0, 0}, {3000, 0, 0}, // the bucket's 6000 at once
		{500, 4, 6},    // 500 lacking: 5 s
		{7000, 64, 66}, // more than a bucket counts as a bucket: 5 s + 60 s
	} {
		at, err := tokens.book(ctx, l.bucket(), tokens.units(c.n))
		if err != nil {
			t.Fatal(err)
		}
		if w := at.Sub(now); w < time.Duration(c.waitMin)*time.Second-time.Second || w > time.Duration(c.waitMax)*time.Second+time.Second {
			t.Errorf("booking %d of %d tokens may go in %v, want %d to %d s", i+1, c.n, w, c.waitMin, c.waitMax)
		}
	}
	tokens.Book(1000) // after the fact: no wait, 10 s more
	at, err := tokens.book(ctx, l.bucket(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if w := at.Sub(now); w < 74*time.Second || w > 76*time.Second {
		t.Errorf("a token after 1000 booked after the fact may go in %v, want about 75 s", w)
	}
}

// boundLimits are a worker's limits bound to a farm with two workers,
// and a context for the test.
func boundLimits(t *testing.T) (*attackRig, context.Context, *Limits) {
	t.Helper()
	r := startAttackRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	l := NewLimits(zaptest.NewLogger(t))
	l.Bind(ctx, r.workerQueues[0])
	return r, ctx, l
}
