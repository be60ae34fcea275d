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

var runRecipe = Recipe{Plugins: []string{"ask: dialogfarm.askplugin@0.3.0 (adapter 0a1b2c3d4e5f)"},
	Answers: "pool: a=model-a, b=model-b", Judge: "rules only (config 5f4e3d2c1b0a)"}

// A worker set up with another recipe than the run's (here the offline
// stand-in instead of the pool) refuses its jobs: it drives none, the run
// hears why, and a worker that matches drives every config once.
func TestWorkerRefusesAnotherRecipe(t *testing.T) {
	r := startRig(t, t.TempDir(), DefaultQueueConfig())
	cs := configs(6)
	ctx := context.Background()
	if _, err := r.q.Enqueue(ctx, "run1", cs, 3, nil, WithRecipe(runRecipe)); err != nil {
		t.Fatal(err)
	}
	other := runRecipe
	other.Answers = "offline"
	var wrong atomic.Int32
	refused := make(chan Attempt, 16)
	stopBad := r.runWorker(t, WorkerConfig{ID: "bad", Slots: 2, Recipe: &other, Pause: time.Second},
		funcDriver(func(ctx context.Context, slot int, c dialog.ChatConfig) (Outcome, error) {
			wrong.Add(1)
			return Outcome{Dialogue: okDialogue(c)}, nil
		}), zaptest.NewLogger(t))
	defer stopBad()

	recs := newMemRecords()
	ccx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	done := make(chan Progress, 1)
	go func() {
		prog, err := r.q.Collect(ccx, CollectConfig{Run: "run1", Want: ids(cs), Records: recs,
			Attempts: func(v any) error {
				select {
				case refused <- v.(Attempt):
				default:
				}
				return nil
			}},
			zaptest.NewLogger(t))
		if err != nil {
			t.Errorf("collect: %v", err)
		}
		done <- prog
	}()
	var a Attempt
	select {
	case a = <-refused:
	case <-ccx.Done():
		t.Fatal("no refusal reached the run")
	}
	if a.Worker != "bad" || a.Dialogue.FailedStep != FailedStepRecipe ||
		!strings.Contains(a.Dialogue.Error, `answers: the run's "pool: a=model-a, b=model-b", this worker's "offline"`) {
		t.Errorf("the refusal: worker %q, step %q, error %q", a.Worker, a.Dialogue.FailedStep, a.Dialogue.Error)
	}
	same := runRecipe
	same.Plugins = append([]string(nil), runRecipe.Plugins...)
	stopGood := r.runWorker(t, WorkerConfig{ID: "good", Slots: 2, Recipe: &same},
		okDriver, zaptest.NewLogger(t))
	defer stopGood()
	prog := <-done
	if prog.OK != len(cs) || prog.Retried != 0 {
		t.Errorf("progress %+v: want %d ok and no retry (a refusal is none)", prog, len(cs))
	}
	for _, c := range cs {
		if recs.appends[c.ID] != 1 || recs.status[c.ID] != "ok:" {
			t.Errorf("%s recorded %d times, %s", c.ID, recs.appends[c.ID], recs.status[c.ID])
		}
	}
	if n := wrong.Load(); n > 0 {
		t.Errorf("the worker with another recipe drove %d configs", n)
	}
	// The worker's health says what it refuses (it reports every 5 s).
	var st Status
	start := time.Now()
	for st.Workers == nil || st.Workers[0].Refused == 0 {
		if time.Since(start) > 15*time.Second {
			t.Fatalf("the worker's health never counted a refusal: %+v", st.Workers)
		}
		time.Sleep(100 * time.Millisecond)
		var err error
		if st, err = ReadStatus(ctx, r.q.js, "run1"); err != nil {
			t.Fatal(err)
		}
	}
	if text := st.Text(time.Now()); !strings.Contains(text, "of run run1: answers:") {
		t.Errorf("status says\n%s", text)
	}
}

// A job every worker refuses is dead-lettered, saying why.
func TestRefusedEveryTimeIsDeadLettered(t *testing.T) {
	qc := DefaultQueueConfig()
	qc.MaxDeliver = 3
	r := startRig(t, t.TempDir(), qc)
	cs := configs(1)
	if _, err := r.q.Enqueue(context.Background(), "run1", cs, 1, nil, WithRecipe(runRecipe)); err != nil {
		t.Fatal(err)
	}
	other := runRecipe
	other.Plugins = []string{"ask: dialogfarm.askplugin@0.2.9 (adapter 0a1b2c3d4e5f)"}
	stop := r.runWorker(t, WorkerConfig{ID: "old", Slots: 1, Recipe: &other, Pause: 10 * time.Millisecond},
		funcDriver(func(ctx context.Context, slot int, c dialog.ChatConfig) (Outcome, error) {
			t.Error("drove a job it should refuse")
			return Outcome{Dialogue: okDialogue(c)}, nil
		}), zaptest.NewLogger(t))
	defer stop()
	recs := newMemRecords()
	var attempts []Attempt
	var dead []DeadLetter
	prog := collect(t, r.q, "run1", ids(cs), recs, &attempts, &dead)
	if prog.Dead != 1 || len(dead) != 1 {
		t.Fatalf("progress %+v, dead letters %+v", prog, dead)
	}
	if want := "plugins: the run's [ask: dialogfarm.askplugin@0.3.0"; !strings.Contains(dead[0].Reason, want) ||
		!strings.Contains(dead[0].Reason, "worker old refused it") {
		t.Errorf("the dead letter's reason %q does not say the worker refused it (%s…)", dead[0].Reason, want)
	}
	if len(attempts) != 3 {
		t.Errorf("%d refusals in attempts, want one per delivery (3)", len(attempts))
	}
}

// Jobs of a run without a recipe (an older coordinator), or a worker
// without one, are driven as before.
func TestRecipeDifferences(t *testing.T) {
	w := &Worker{cfg: WorkerConfig{Recipe: &runRecipe}}
	if d := w.differences(Job{}); d != nil {
		t.Errorf("a job without a recipe: %v", d)
	}
	if d := (&Worker{}).differences(Job{Recipe: &runRecipe}); d != nil {
		t.Errorf("a worker without a recipe: %v", d)
	}
	same := runRecipe
	if d := w.differences(Job{Recipe: &same}); d != nil {
		t.Errorf("the same recipe: %v", d)
	}
	other := runRecipe
	other.Judge, other.FollowUps = "model judge-x (config 5f4e3d2c1b0a)", "model q"
	d := w.differences(Job{Recipe: &other})
	want := []string{`judge: the run's "model judge-x (config 5f4e3d2c1b0a)", this worker's "rules only (config 5f4e3d2c1b0a)"`,
		`follow-ups: the run's "model q", this worker's (none)`}
	if strings.Join(d, "\n") != strings.Join(want, "\n") {
		t.Errorf("differences\n%s\nwant\n%s", strings.Join(d, "\n"), strings.Join(want, "\n"))
	}
}
