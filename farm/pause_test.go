package farm

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"dialogfarm/dialog"
)

func failedDialogue(c dialog.ChatConfig) dialog.Dialogue {
	return dialog.Dialogue{ConfigID: c.ID, Config: c, Status: dialog.StatusFailed,
		FailedStep: "ask", Error: "model endpoint: dial tcp 10.0.0.9:443: connect: connection refused"}
}

// A worker whose every dialogue fails at once (its model endpoint is out
// of reach from its machine) would take job after job from a healthy
// worker that needs a dialogue's time for each, and use their attempts:
// here every config would be tried on it up to three times. It pauses
// after a few failures instead, and the healthy worker drives them all.
func TestASickWorkerPauses(t *testing.T) {
	r := startRig(t, t.TempDir(), DefaultQueueConfig())
	cs := configs(16)
	ctx := context.Background()
	if _, err := r.q.Enqueue(ctx, "run1", cs, 3, nil); err != nil {
		t.Fatal(err)
	}
	var sick, healthy atomic.Int32
	const limit = 3
	stopSick := r.runWorker(t, WorkerConfig{ID: "sick", Slots: 2, PauseAfterFailures: limit, Pause: time.Minute},
		funcDriver(func(ctx context.Context, slot int, c dialog.ChatConfig) (Outcome, error) {
			sick.Add(1)
			return Outcome{Dialogue: failedDialogue(c), Retry: true}, nil
		}), zaptest.NewLogger(t))
	defer stopSick()
	stopHealthy := r.runWorker(t, WorkerConfig{ID: "healthy", Slots: 2},
		funcDriver(func(ctx context.Context, slot int, c dialog.ChatConfig) (Outcome, error) {
			healthy.Add(1)
			select {
			case <-time.After(100 * time.Millisecond):
			case <-ctx.Done():
				return Outcome{}, ctx.Err()
			}
			return Outcome{Dialogue: okDialogue(c)}, nil
		}), zaptest.NewLogger(t))
	defer stopHealthy()

	prog, recs, _ := collectOnce(t, r.q, "run1", cs)
	if prog.OK != len(cs) {
		t.Errorf("progress %+v: want all %d ok", prog, len(cs))
	}
	for _, c := range cs {
		if !recs.ok[c.ID] {
			t.Errorf("%s: %s", c.ID, recs.status[c.ID])
		}
	}
	// The failures that paused it, and at most one more per other slot
	// (a dialogue it had started).
	if n := sick.Load(); n > limit+1 {
		t.Errorf("the sick worker drove %d dialogues, want at most %d", n, limit+1)
	}
	// Its health says it is paused, and why.
	var h Health
	start := time.Now()
	for !h.Paused(time.Now()) {
		if time.Since(start) > 3*healthEvery {
			t.Fatalf("the sick worker's health never said it was paused: %+v", h)
		}
		time.Sleep(100 * time.Millisecond)
		st, err := ReadStatus(ctx, r.q.js, "run1")
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range st.Workers {
			if w.Worker == "sick" {
				h = w
			}
		}
	}
	// The farm's metrics count it apart from the healthy one.
	checkFarmMetrics(t, r, `dialogfarm_farm_workers{state="paused"} 1`, `dialogfarm_farm_workers{state="healthy"} 1`)
	text := Status{Workers: []Health{h}}.Text(time.Now())
	if h.FailedInARow < limit || !strings.Contains(text, "sick on") || !strings.Contains(text, "paused for") ||
		!strings.Contains(text, "failed in a row, the last at ask: model endpoint: dial tcp") {
		t.Errorf("the sick worker's health: %+v\n%s", h, text)
	}
}

// What counts as failures in a row: each config once, none after a
// dialogue that passed, none that no attempt can pass; a failure while paused does not make the pause
// longer, one after it does.
func TestFailuresInARow(t *testing.T) {
	r := startRig(t, t.TempDir(), DefaultQueueConfig())
	w := NewWorker(WorkerConfig{ID: "w", PauseAfterFailures: 3, Pause: time.Minute}, r.q, nil, nil, zaptest.NewLogger(t))
	log := zaptest.NewLogger(t)
	cs := configs(6)
	fail := func(c dialog.ChatConfig) { w.settled(Job{Config: c}, failedDialogue(c), true, log) }
	state := func() (int, time.Duration, bool) {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.health.FailedInARow, w.pauses.fail, w.health.Paused(time.Now())
	}
	check := func(what string, n int, pause time.Duration, paused bool) {
		t.Helper()
		if gn, gp, gpaused := state(); gn != n || gp != pause || gpaused != paused {
			t.Errorf("%s: %d in a row, pause %s, paused %v; want %d, %s, %v", what, gn, gp, gpaused, n, pause, paused)
		}
	}
	fail(cs[0])
	fail(cs[0])
	fail(cs[1])
	check("the same config twice and another", 2, 0, false)
	w.settled(Job{Config: cs[2]}, okDialogue(cs[2]), false, log)
	check("after a dialogue that passed", 0, 0, false)
	fail(cs[0])
	fail(cs[1])
	w.settled(Job{Config: cs[2]}, failedDialogue(cs[2]), false, log)
	check("a failure no attempt can pass", 2, 0, false)
	fail(cs[2])
	check("three configs", 3, time.Minute, true)
	if w.health.Failing != "ask: model endpoint: dial tcp 10.0.0.9:443: connect: connection refused" {
		t.Errorf("the last failure: %q", w.health.Failing)
	}
	fail(cs[3])
	check("one more while paused", 4, time.Minute, true)
	w.mu.Lock()
	w.pauses.until = time.Now().Add(-time.Second)
	w.mu.Unlock()
	fail(cs[4])
	check("one more after the pause", 5, 2*time.Minute, true)
	w.settled(Job{Config: cs[5]}, okDialogue(cs[5]), false, log)
	check("a dialogue that passed", 0, 0, false)
	if w.health.Failing != "" || !w.health.PausedUntil.IsZero() {
		t.Errorf("the health still says %q, paused until %s", w.health.Failing, w.health.PausedUntil)
	}

	never := NewWorker(WorkerConfig{ID: "never"}, r.q, nil, nil, zaptest.NewLogger(t))
	for _, c := range cs {
		never.settled(Job{Config: c}, failedDialogue(c), true, log)
	}
	if never.health.FailedInARow != len(cs) || never.health.Paused(time.Now()) {
		t.Errorf("a worker without PauseAfterFailures: %+v", never.health)
	}
}
