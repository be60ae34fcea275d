package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap/zaptest"

	"dialogfarm/dialog"
	"dialogfarm/farm"
)

// recordingDriver drives every config ok, once gate is closed, and notes
// the order.
type recordingDriver struct {
	mu    sync.Mutex
	order []string
	gate  chan struct{}
}

func (d *recordingDriver) DriveOne(ctx context.Context, _ int, c dialog.ChatConfig) (farm.Outcome, error) {
	d.mu.Lock()
	d.order = append(d.order, c.ID)
	d.mu.Unlock()
	select {
	case <-ctx.Done():
		return farm.Outcome{}, ctx.Err()
	case <-d.gate:
	}
	return farm.Outcome{Dialogue: dialog.Dialogue{ConfigID: c.ID, Config: c, Status: dialog.StatusOK, Seconds: 0.01}}, nil
}

// sharedFarm is a farm served on loopback, its streams set up, with one
// worker of one simulator driving on d; it returns its address, a
// repository to run on and a client's view of the farm.
func sharedFarm(ctx context.Context, t *testing.T, d farm.Driver) (url, repo string, js jetstream.JetStream) {
	t.Helper()
	repo = t.TempDir()
	if err := os.WriteFile(filepath.Join(repo, "a.py"), []byte("print(1)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv, err := farm.StartServer(ctx, farm.ServerConfig{StoreDir: t.TempDir(), Listen: "127.0.0.1:-1", InsecureAnonymous: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	nc, err := farm.Dial(ctx, farm.ClientConfig{URL: srv.ClientURL()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, _ = farm.JetStream(nc)
	q, err := farm.Setup(ctx, js, farm.DefaultQueueConfig())
	if err != nil {
		t.Fatal(err)
	}
	w := farm.NewWorker(farm.WorkerConfig{ID: "w", Slots: 1, FetchWait: 100 * time.Millisecond}, q, d, nil, zaptest.NewLogger(t))
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { _ = w.Run(wctx) })
	t.Cleanup(func() { stop(); wg.Wait() })
	return srv.ClientURL(), repo, js
}

// waitQueued returns once the farm holds n jobs (waiting or in flight).
func waitQueued(ctx context.Context, t *testing.T, js jetstream.JetStream, n uint64) {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		st, err := farm.ReadStatus(ctx, js, "")
		if err == nil && st.Queued >= n {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the farm never held %d jobs: %+v %v", n, st, err)
		case <-tick.C:
		}
	}
}

// farmRunOn runs n configs named prefix-i on the shared farm at url with
// the given backlog, driven by the farm's workers alone.
func farmRunOn(ctx context.Context, t *testing.T, url, repo, prefix string, n, backlog int) (int, error) {
	return farmRunIn(ctx, t, t.TempDir(), url, repo, prefix, n, backlog)
}

// farmRunIn is farmRunOn in the run folder out.
func farmRunIn(ctx context.Context, t *testing.T, out, url, repo, prefix string, n, backlog int) (int, error) {
	cfg := DriveConfig{Farm: DefaultFarmConfig()}
	cfg.Run.Out = out
	cfg.Farm.NATS = farm.ClientConfig{URL: url}
	cfg.Farm.Local, cfg.Farm.WatchEvery, cfg.Farm.Backlog = false, 0, backlog
	cs := make([]dialog.ChatConfig, n)
	for i := range cs {
		cs[i] = dialog.ChatConfig{ID: fmt.Sprintf("%s-%02d", prefix, i), Repo: repo}
	}
	sum, err := farmRun(ctx, cfg, cs, zaptest.NewLogger(t), nil)
	return sum.OK, err
}

// Runs on a shared farm take turns: a run started while another one's 30
// configs wait has its 3 driven after the first run's backlog (4 here, its
// jobs held by the worker included), not after all 30 of them, as when
// every config is enqueued at once. The worker is held until both runs
// have enqueued.
func TestRunsOnASharedFarmTakeTurns(t *testing.T) {
	for _, c := range []struct {
		name      string
		backlog   int
		bigFirst  uint64 // the big run's jobs on the farm before the small run starts
		bigBefore int    // the big run's configs driven before the small run's last
	}{
		{"backlog", 4, 4, 4},
		{"all at once", BacklogAll, 30, 30},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			d := &recordingDriver{gate: make(chan struct{})}
			url, repo, js := sharedFarm(ctx, t, d)
			var wg sync.WaitGroup
			var bigOK, smallOK int
			var bigErr, smallErr error
			wg.Go(func() { bigOK, bigErr = farmRunOn(ctx, t, url, repo, "big", 30, c.backlog) })
			waitQueued(ctx, t, js, c.bigFirst)
			wg.Go(func() { smallOK, smallErr = farmRunOn(ctx, t, url, repo, "small", 3, c.backlog) })
			waitQueued(ctx, t, js, c.bigFirst+3)
			close(d.gate)
			wg.Wait()
			if bigErr != nil || bigOK != 30 || smallErr != nil || smallOK != 3 {
				t.Fatalf("the big run: %d ok, %v; the small one: %d ok, %v", bigOK, bigErr, smallOK, smallErr)
			}
			d.mu.Lock()
			defer d.mu.Unlock()
			last := -1
			for i, id := range d.order {
				if strings.HasPrefix(id, "small-") {
					last = i
				}
			}
			big := 0
			for _, id := range d.order[:last] {
				if strings.HasPrefix(id, "big-") {
					big++
				}
			}
			if big != c.bigBefore {
				t.Errorf("%d of the big run's configs were driven before the small run's last, want %d (order %v)", big, c.bigBefore, d.order)
			}
			if len(d.order) != 33 {
				t.Errorf("%d dialogues driven, want 33 (each config once)", len(d.order))
			}
		})
	}
}

// A run stopped with part of its configs enqueued, while the worker drives
// on, and started again, enqueues the rest and collects what the worker
// drove meanwhile: one record per config, each driven once.
func TestABacklogRunStoppedAndResumed(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d := &recordingDriver{gate: make(chan struct{})}
	close(d.gate)
	url, repo, js := sharedFarm(ctx, t, d)
	out := t.TempDir()
	first, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { _, _ = farmRunIn(first, t, out, url, repo, "c", 16, 4) })
	// Stop the run once it has some records (its backlog on the farm).
	waitDriven(ctx, t, d, 3)
	stop()
	wg.Wait()
	st, err := farm.ReadStatus(ctx, js, "")
	if err != nil {
		t.Fatal(err)
	}
	ok, err := farmRunIn(ctx, t, out, url, repo, "c", 16, 4)
	if err != nil || ok+countRecords(t, out, 0) < 16 {
		t.Fatalf("the resumed run: %d ok, %v (the farm held %d jobs and %d results when it started)", ok, err, st.Queued, st.Results)
	}
	if n := countRecords(t, out, 16); n != 16 {
		t.Errorf("%d records, want 16", n)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	seen := map[string]int{}
	for _, id := range d.order {
		seen[id]++
		if seen[id] > 1 {
			t.Errorf("%s driven %d times", id, seen[id])
		}
	}
}

// waitDriven returns once d has driven n dialogues.
func waitDriven(ctx context.Context, t *testing.T, d *recordingDriver, n int) {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		d.mu.Lock()
		got := len(d.order)
		d.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%d dialogues driven, waited for %d", got, n)
		case <-tick.C:
		}
	}
}

// countRecords counts the records in out's record log, one per config,
// and fails the test if a config has two (want > 0 checks them).
func countRecords(t *testing.T, out string, want int) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(out, "dialogues.jsonl"))
	if err != nil {
		return 0
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if want > 0 {
		ids := map[string]bool{}
		for _, l := range lines {
			var r struct {
				ConfigID string `json:"config_id"`
			}
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatal(err)
			}
			if ids[r.ConfigID] {
				t.Errorf("two records of %s", r.ConfigID)
			}
			ids[r.ConfigID] = true
		}
	}
	return len(lines)
}
