package farm

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"
)

// holdAll runs n calls on each of slots at once, each holding its slot
// for hold, and returns the most calls that were in flight together.
func holdAll(t *testing.T, ctx context.Context, n int, hold time.Duration, slots ...*Slots) int {
	t.Helper()
	var in, most atomic.Int64
	var wg sync.WaitGroup
	for _, s := range slots {
		for range n {
			wg.Go(func() {
				release, err := s.Acquire(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				now := in.Add(1)
				for m := most.Load(); now > m && !most.CompareAndSwap(m, now); m = most.Load() {
				}
				<-time.After(hold)
				in.Add(-1)
				release()
			})
		}
	}
	wg.Wait()
	return int(most.Load())
}

// Two workers with a farm_max_concurrency of 3 on one model have at most
// 3 calls in flight between them, not 3 each, and all 12 calls go.
func TestWorkersShareCallsInFlight(t *testing.T) {
	r, ctx, limits, logs := workersLimits(t)
	var slots []*Slots
	for _, l := range limits {
		slots = append(slots, l.Slots(SlotSpec{Key: "conc-shared", Model: "m", Max: 3}))
	}
	if most := holdAll(t, ctx, 6, 100*time.Millisecond, slots...); most > 3 || most < 2 {
		t.Errorf("two workers had %d calls in flight at once under one farm_max_concurrency of 3, want 3", most)
	}
	for _, e := range logs.All() {
		t.Errorf("a worker fell back to slots of its own: %s %v", e.Message, e.ContextMap())
	}
	st, err := ReadStatus(ctx, r.cjs, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Slots) != 1 || st.Slots[0].InFlight != 0 || st.Slots[0].Max != 3 {
		t.Errorf("status after every call ended: %+v, want one bound of 3 with none in flight", st.Slots)
	}
}

// The farm's status and metrics show the calls in flight, and a call
// beyond the bound waits until one ends.
func TestTheStatusShowsTheCallsInFlight(t *testing.T) {
	r, ctx, limits, _ := workersLimits(t)
	var held []func()
	var slots []*Slots
	for i, l := range limits {
		s := l.Slots(SlotSpec{Key: "conc-st", Model: "coder-7b", Max: 3})
		slots = append(slots, s)
		for range 2 - i {
			release, err := s.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			held = append(held, release)
		}
	}
	wctx, wcancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer wcancel()
	if _, err := slots[1].Acquire(wctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a fourth call under a bound of 3 did not wait: %v", err)
	}
	st := checkOneSlot(t, ctx, r.cjs, SlotStatus{Limit: "conc-st", Model: "coder-7b", Max: 3, InFlight: 3, Processes: 2})
	if text := st.Text(time.Now()); !strings.Contains(text, "calls in flight to model coder-7b: 3 of at most 3 across the farm, from 2 processes\n") {
		t.Errorf("status text lacks the calls in flight:\n%s", text)
	}
	body := scrapeFarmMetrics(t, r.cjs)
	for _, re := range []string{
		`\ndialogfarm_farm_model_calls_in_flight\{limit="conc-st",model="coder-7b"\} 3\n`,
		`\ndialogfarm_farm_model_calls_in_flight_max\{limit="conc-st",model="coder-7b"\} 3\n`,
	} {
		if !regexp.MustCompile(re).Match(body) {
			t.Errorf("the metrics lack %s:\n%s", re, body)
		}
	}
	held[0]()
	held[0]() // a second release frees nothing more
	release, err := slots[1].Acquire(ctx)
	if err != nil {
		t.Fatalf("a call after one ended: %v", err)
	}
	release()
	if st, err = ReadStatus(ctx, r.cjs, ""); err != nil {
		t.Fatal(err)
	}
	if len(st.Slots) != 1 || st.Slots[0].InFlight != 2 {
		t.Errorf("status after one of 3 calls ended twice and another came and went: %+v, want 2 in flight", st.Slots)
	}
}

// The slots of a process that stopped renewing them (killed mid-call) are
// free once its lease ends, and an entry said to count hours ahead (a
// clock that disagrees, or a worker that means harm) counts for nothing.
func TestTheSlotsOfAStoppedProcessAreFreed(t *testing.T) {
	r, ctx, l := boundLimits(t)
	kv, err := r.cjs.KeyValue(ctx, LimitsBucket)
	if err != nil {
		t.Fatal(err)
	}
	put := func(key string, until time.Duration) {
		t.Helper()
		v, _ := json.Marshal(inFlight{Max: 2, Model: "m", Procs: map[string]procCalls{"gone": {N: 2, U: time.Now().Add(until).UnixNano()}}})
		if _, err := kv.Put(ctx, key, v); err != nil {
			t.Fatal(err)
		}
	}
	put("conc-gone", 1500*time.Millisecond)
	start := time.Now()
	release, err := l.Slots(SlotSpec{Key: "conc-gone", Model: "m", Max: 2}).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	release()
	if waited := time.Since(start); waited < time.Second || waited > 5*time.Second {
		t.Errorf("a call waited %v for the slots of a process whose lease ends in 1.5 s, want about 1.5 s", waited)
	}
	put("conc-far", 10*time.Hour)
	start = time.Now()
	release, err = l.Slots(SlotSpec{Key: "conc-far", Model: "m", Max: 2}).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	release()
	if waited := time.Since(start); waited > time.Second {
		t.Errorf("a call waited %v behind slots said to be held 10 h ahead, want none", waited)
	}
}

// Without a farm each process bounds its own calls to the bound.
func TestSlotsWithoutAFarmAreTheProcesss(t *testing.T) {
	s := NewLimits(zaptest.NewLogger(t)).Slots(SlotSpec{Key: "conc-local", Max: 2})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if most := holdAll(t, ctx, 5, 50*time.Millisecond, s); most != 2 {
		t.Errorf("%d calls in flight at once under a bound of 2 without a farm, want 2", most)
	}
}

// workersLimits are the limits of each of two workers of a farm, bound,
// with the warnings they log, and a context for the test.
func workersLimits(t *testing.T) (*attackRig, context.Context, []*Limits, *observer.ObservedLogs) {
	t.Helper()
	r := startAttackRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	core, logs := observer.New(zapcore.WarnLevel)
	var limits []*Limits
	for _, wq := range r.workerQueues {
		l := NewLimits(zap.New(core))
		l.Bind(ctx, wq)
		limits = append(limits, l)
	}
	return r, ctx, limits, logs
}

// Two members of one process that call under the same key (a pool member
// and the judge on one model and key) count their calls together: the
// farm holds one count per process and key.
func TestMembersOfAProcessShareItsCount(t *testing.T) {
	r, ctx, limits, _ := workersLimits(t)
	spec := SlotSpec{Key: "conc-two", Model: "m", Max: 4}
	a, b := limits[0].Slots(spec), limits[0].Slots(spec)
	for _, s := range []*Slots{a, b} {
		release, err := s.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer release()
	}
	checkOneSlot(t, ctx, r.cjs, SlotStatus{Limit: "conc-two", Model: "m", Max: 4, InFlight: 2, Processes: 1})
}

// checkOneSlot reads the farm's status and checks that it shows one bound
// on calls in flight, want; it returns the status.
func checkOneSlot(t *testing.T, ctx context.Context, js jetstream.JetStream, want SlotStatus) Status {
	t.Helper()
	st, err := ReadStatus(ctx, js, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Slots) != 1 || st.Slots[0] != want {
		t.Errorf("status %+v, want %+v", st.Slots, want)
	}
	return st
}
