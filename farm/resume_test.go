package farm

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"dialogfarm/dialog"
)

// A run stopped while its workers drive on (its coordinator's machine
// restarted, say): resumed, it collects the configs they drove meanwhile
// instead of driving them again; one that failed meanwhile is driven
// again, as a resumed run does with its failed configs.
func TestAResumedRunKeepsWhatWorkersDrove(t *testing.T) {
	r := startRig(t, t.TempDir(), DefaultQueueConfig())
	r.q.SetRunKey("run1", testRunKey)
	cs := configs(6)
	failing := cs[5].ID
	ctx := context.Background()
	if _, err := r.q.Enqueue(ctx, "run1", cs, 1, nil); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	driven := map[string]int{}
	stop := r.runWorker(t, WorkerConfig{ID: "w", Slots: 2}, funcDriver(func(ctx context.Context, slot int, c dialog.ChatConfig) (Outcome, error) {
		mu.Lock()
		driven[c.ID]++
		mu.Unlock()
		if c.ID == failing {
			return Outcome{Dialogue: failedDialogue(c), Retry: true}, nil
		}
		return Outcome{Dialogue: okDialogue(c)}, nil
	}), zaptest.NewLogger(t))
	defer stop()
	// No collector meanwhile: every outcome waits on the farm.
	for start := time.Now(); ; time.Sleep(50 * time.Millisecond) {
		st, err := ReadStatus(ctx, r.q.js, "run1")
		if err != nil {
			t.Fatal(err)
		}
		if st.Results == uint64(len(cs)) {
			break
		}
		if time.Since(start) > 20*time.Second {
			t.Fatalf("the worker's results never all reached the farm: %+v", st)
		}
	}
	// The run comes back: its folder has no record yet.
	n, err := r.q.Enqueue(ctx, "run1", cs, 1, nil)
	if err != nil || n != len(cs) {
		t.Fatalf("resumed enqueue: %d configs, %v", n, err)
	}
	prog, recs, _ := collectOnce(t, r.q, "run1", cs)
	if prog.OK != len(cs)-1 || prog.Failed != 1 {
		t.Errorf("progress %+v: want %d ok and the failing one failed", prog, len(cs)-1)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, c := range cs {
		want := 1
		if c.ID == failing {
			want = 2
		}
		if driven[c.ID] != want {
			t.Errorf("%s driven %d times, want %d (%s)", c.ID, driven[c.ID], want, recs.status[c.ID])
		}
	}
}
