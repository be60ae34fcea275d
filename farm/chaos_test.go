package farm

import (
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"dialogfarm/dialog"
)

// reopen is what opening dialogues.jsonl again does: ok records stay,
// failed ones move to attempts and are driven again.
func (m *memRecords) reopen() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for id := range m.appends {
		if !m.ok[id] {
			delete(m.appends, id)
			delete(m.status, id)
		}
	}
}

// chaosKills is how many times TestChaos kills the process: a few in
// `make test`, DIALOGFARM_CHAOS_KILLS (12 in `make chaos`) otherwise.
func chaosKills(tb testing.TB) int {
	if s := os.Getenv("DIALOGFARM_CHAOS_KILLS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			tb.Fatalf("DIALOGFARM_CHAOS_KILLS=%q: %v", s, err)
		}
		return n
	}
	return 3
}

// TestChaos kills the whole farm process (server, workers, collector) at
// random moments while 20% of attempts fail as a model fault would (429,
// 5xx, time-outs) and some simulators hang until the kill; after each kill
// the run resumes from the same store. At the end every config has exactly
// one record: ok, failed after its attempts, or dead-lettered.
func TestChaos(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("DIALOGFARM_CHAOS_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (DIALOGFARM_CHAOS_SEED reproduces it)", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	var rngMu sync.Mutex
	roll := func() float64 { rngMu.Lock(); defer rngMu.Unlock(); return rng.Float64() }

	// Enough configs that the kills fall while the run is in progress: a
	// lifetime records about 20 of them.
	kills := chaosKills(t)
	dir := t.TempDir()
	cs := configs(40 * kills)
	recs := newMemRecords()
	var hangs atomic.Bool // simulators hang only while kills are coming
	hangs.Store(true)
	drv := funcDriver(func(ctx context.Context, slot int, c dialog.ChatConfig) (Outcome, error) {
		d := okDialogue(c)
		switch p := roll(); {
		case p < 0.05 && hangs.Load(): // the simulator hangs: only the kill ends it
			<-ctx.Done()
			return Outcome{}, ctx.Err()
		case p < 0.25: // a model fault surfaces as a failed turn
			d.Status, d.FailedStep, d.Error = dialog.StatusFailed, "turn1_answer", "upstream 429"
			return Outcome{Dialogue: d, Retry: true}, nil
		}
		select {
		case <-time.After(time.Duration(5+roll()*20) * time.Millisecond):
		case <-ctx.Done():
			return Outcome{}, ctx.Err()
		}
		return Outcome{Dialogue: d}, nil
	})
	qc := DefaultQueueConfig()
	qc.MaxDeliver = 5
	lifetime := func(limit time.Duration) bool {
		recs.reopen()
		r := startRig(t, dir, qc)
		r.q.SetRunKey("chaos", testRunKey) // kept by the coordinator, as in its run folder
		if err := r.q.Reclaim(context.Background()); err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, c := range cs {
			if !recs.Done(c.ID) {
				want = append(want, c.ID)
			}
		}
		if _, err := r.q.Enqueue(context.Background(), "chaos", cs, 3, recs.Done); err != nil {
			t.Fatal(err)
		}
		stop := r.runWorkers(t, 2, 3, drv, zap.NewNop())
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		_, err := r.q.Collect(ctx, CollectConfig{Run: "chaos", Want: want, Records: recs}, zap.NewNop())
		cancel()
		stop()   // kill: workers end mid-dialogue, nothing acknowledged
		r.stop() // the server goes with the process
		return err == nil
	}
	midRun := 0
	for i := range kills {
		lifetime(time.Duration(30+roll()*150) * time.Millisecond)
		n := recs.count()
		if n < len(cs) {
			midRun++
		}
		t.Logf("kill %d: %d of %d configs recorded", i+1, n, len(cs))
	}
	if midRun < (kills+1)/2 {
		t.Errorf("only %d of %d kills fell before the run was done", midRun, kills)
	}
	hangs.Store(false)
	finished := lifetime(60 * time.Second)
	if !finished {
		t.Fatalf("the run did not finish after %d kills", kills)
	}
	ok, failed := 0, 0
	for _, c := range cs {
		if n := recs.appends[c.ID]; n != 1 {
			t.Errorf("%s recorded %d times", c.ID, n)
		}
		if recs.ok[c.ID] {
			ok++
		} else {
			failed++
		}
	}
	t.Logf("%d ok, %d failed or dead-lettered after %d kills", ok, failed, kills)
}
