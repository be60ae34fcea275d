package farm

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"dialogfarm/dialog"
)

// A run stopped and not to be resumed is taken off the farm: no worker
// drives its jobs any more and its outcomes go; a run going on is not,
// unless forced; a run forgotten can be enqueued again.
func TestForgetTakesARunOffTheFarm(t *testing.T) {
	r := startRig(t, t.TempDir(), DefaultQueueConfig())
	ctx := context.Background()
	log := zaptest.NewLogger(t)
	stopped := configs(4)
	going := []dialog.ChatConfig{{ID: "r2-a"}, {ID: "r2-b"}}
	if _, err := r.q.Enqueue(ctx, "stopped", stopped, 3, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := r.q.Enqueue(ctx, "going", going, 3, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := r.q.js.Publish(ctx, resultSubject("stopped", "cfg-001", "UA"), []byte("{}")); err != nil {
		t.Fatal(err)
	}
	// The run "going" collects (no worker yet: it waits).
	cctx, cancel := context.WithCancel(ctx)
	collected := make(chan Progress, 1)
	recs := newMemRecords()
	go func() {
		prog, _ := r.q.Collect(cctx, CollectConfig{Run: "going", Want: ids(going), Records: recs}, log)
		collected <- prog
	}()
	defer cancel()
	for start := time.Now(); ; time.Sleep(50 * time.Millisecond) {
		if err := r.q.notCollecting(ctx, "going", collectSources("going")); errors.Is(err, ErrRunCollecting) {
			break
		}
		if time.Since(start) > 10*time.Second {
			t.Fatal("the collector of run going never showed")
		}
	}
	if _, err := r.q.Forget(ctx, "going", false, log); !errors.Is(err, ErrRunCollecting) {
		t.Errorf("forgetting a run going on: %v, want ErrRunCollecting", err)
	}
	// As farm forget does it: a queue opened on the farm another process
	// set up.
	f, err := openQueue(ctx, t, r.nc).Forget(ctx, "stopped", false, log)
	if err != nil || f.Jobs != 4 || f.Outcomes != 1 {
		t.Fatalf("forget: %+v, %v; want 4 jobs and 1 outcome", f, err)
	}
	st, err := ReadStatus(ctx, r.q.js, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Runs) != 1 || st.Runs[0].Run != "going" || st.Queued != 2 || st.Results != 0 {
		t.Errorf("the farm after forgetting run stopped: %+v", st)
	}
	var mu sync.Mutex
	var drove []string
	stop := r.runWorker(t, WorkerConfig{ID: "w", Slots: 2}, funcDriver(func(ctx context.Context, slot int, c dialog.ChatConfig) (Outcome, error) {
		mu.Lock()
		drove = append(drove, c.ID)
		mu.Unlock()
		return Outcome{Dialogue: okDialogue(c)}, nil
	}), log)
	defer stop()
	if prog := <-collected; prog.OK != 2 {
		t.Errorf("run going: %+v", prog)
	}
	mu.Lock()
	if len(drove) != 2 {
		t.Errorf("the worker drove %v, want run going's 2 configs only", drove)
	}
	mu.Unlock()
	// Resumed after all, the forgotten run enqueues its configs again.
	if n, err := r.q.Enqueue(ctx, "stopped", stopped, 3, nil); err != nil || n != 4 {
		t.Fatalf("enqueue the forgotten run again: %d, %v", n, err)
	}
	prog, _, _ := collectOnce(t, r.q, "stopped", stopped)
	if prog.OK != 4 {
		t.Errorf("the forgotten run resumed: %+v", prog)
	}
}

// Outcomes that come after a run was collected (a redelivered job's second
// result) are told apart from those of a run whose coordinator stopped:
// the status calls them late, the metrics count them apart, so the alert
// on runs nobody collects does not fire for them.
func TestLateOutcomesAreToldApart(t *testing.T) {
	r := startRig(t, t.TempDir(), DefaultQueueConfig())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	log := zaptest.NewLogger(t)
	done, stopped := []dialog.ChatConfig{{ID: "d-a"}, {ID: "d-b"}}, []dialog.ChatConfig{{ID: "s-a"}}
	for run, cs := range map[string][]dialog.ChatConfig{"done": done, "stopped": stopped} {
		if _, err := r.q.Enqueue(ctx, run, cs, 3, nil); err != nil {
			t.Fatal(err)
		}
	}
	stop := r.runWorker(t, WorkerConfig{ID: "w", Slots: 2}, okDriver, log)
	defer stop()
	if prog, err := r.q.Collect(ctx, CollectConfig{Run: "done", Want: ids(done), Records: newMemRecords()}, log); err != nil || prog.OK != 2 {
		t.Fatalf("collect run done: %+v, %v", prog, err)
	}
	// Run stopped's coordinator stops before its last config: its
	// collector stays on the farm, and so does its result.
	sctx, scancel := context.WithTimeout(ctx, 3*time.Second)
	_, _ = r.q.Collect(sctx, CollectConfig{Run: "stopped", Want: append(ids(stopped), "s-never"), Records: newMemRecords()}, log)
	scancel()
	if _, err := r.q.js.Publish(ctx, resultSubject("done", "d-a", "UA"), []byte("{}")); err != nil {
		t.Fatal(err)
	}
	st, err := ReadStatus(ctx, r.q.js, "")
	if err != nil {
		t.Fatal(err)
	}
	late := map[string]bool{}
	for _, rs := range st.Runs {
		if rs.Results != 1 {
			t.Errorf("run %s: %d results, want 1", rs.Run, rs.Results)
		}
		late[rs.Run] = rs.Late
	}
	if len(late) != 2 || !late["done"] || late["stopped"] {
		t.Errorf("late runs %v, want done only", late)
	}
	text := st.Text(time.Now())
	for _, want := range []string{
		"run done: 0 jobs waiting or in flight; 1 results and 0 dead letters came after it was collected or forgotten",
		"run stopped: 0 jobs waiting or in flight; 1 results and 0 dead letters not collected yet",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("status lacks %q:\n%s", want, text)
		}
	}
	body := string(scrapeFarmMetrics(t, r.q.js))
	for _, want := range []string{
		`dialogfarm_farm_run_outcomes_late{kind="results",run="done"} 1`,
		`dialogfarm_farm_run_outcomes_waiting{kind="results",run="stopped"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s:\n%s", want, body)
		}
	}
	if strings.Contains(body, `dialogfarm_farm_run_outcomes_waiting{kind="results",run="done"}`) {
		t.Errorf("run done's late result counts as waiting for its collector:\n%s", body)
	}
}
