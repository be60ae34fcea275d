package driver

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	"golang.org/x/sync/errgroup"

	"dialogfarm/dialog"
	"dialogfarm/driver/editor"
	"dialogfarm/farm"
)

// The editor's tests drive their configs the way `dialogfarm drive` and
// `run` do (pipeline's driveFarm, which this package cannot import):
// through the embedded NATS JetStream queue, a farm worker pulling a job
// on each simulator slot of the Runner (OpenSessions, DriveSlot), and the
// collector writing one record per config into the run folder's
// dialogues.jsonl. The queue's store is in the run folder and outlives a
// call, as a resumed run's does.

// slotDriver lets a farm worker drive on a Runner's slots.
type slotDriver struct{ r *Runner }

var _ farm.Driver = slotDriver{}

func (d slotDriver) DriveOne(ctx context.Context, slot int, c dialog.ChatConfig) (farm.Outcome, error) {
	dl, retry, err := d.r.DriveSlot(ctx, slot, c)
	if _, ok := errors.AsType[*editor.ActivationError](err); ok {
		err = fmt.Errorf("%w: %w", farm.ErrCannotDrive, err)
	}
	return farm.Outcome{Dialogue: dl, Retry: retry}, err
}

// farmRun is what a farm drive did.
type farmRun struct {
	Summary
	// Attempts are the failed attempts that were tried again.
	Attempts []dialog.Dialogue
}

// driveOnFarm drives the configs not yet recorded ok on up to
// r.cfg.Sessions slots through the farm, each config attempted up to
// attempts times (a failure that may pass is tried again after 100 ms).
// It returns the worker's error (the plugin failed to activate) as the
// error.
func driveOnFarm(ctx context.Context, t *testing.T, r *Runner, configs []dialog.ChatConfig, attempts int) (farmRun, error) {
	t.Helper()
	records, err := OpenRecordLog(r.cfg.Out)
	if err != nil {
		t.Fatal(err)
	}
	defer records.Close()
	res := farmRun{Summary: Summary{Records: records.Path()}}
	var todo []dialog.ChatConfig
	var want []string
	for _, c := range configs {
		if records.Done(c.ID) {
			res.Skipped++
			continue
		}
		todo, want = append(todo, c), append(want, c.ID)
	}
	if len(todo) == 0 {
		return res, nil
	}
	srv, err := farm.StartServer(ctx, farm.ServerConfig{StoreDir: filepath.Join(r.cfg.Out, "farm")})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	nc, err := srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := farm.JetStream(nc)
	if err != nil {
		t.Fatal(err)
	}
	q, err := farm.Setup(ctx, js, farm.DefaultQueueConfig())
	if err == nil {
		err = q.Reclaim(ctx)
	}
	if err == nil {
		_, err = q.Enqueue(ctx, "local", todo, attempts, records.Done)
	}
	if err != nil {
		t.Fatal(err)
	}
	slots := min(max(r.cfg.Sessions, 1), len(todo))
	if err := r.OpenSessions(ctx, slots); err != nil {
		t.Fatal(err)
	}
	log := zaptest.NewLogger(t)
	w := farm.NewWorker(farm.WorkerConfig{ID: "test", Slots: slots, FetchWait: 200 * time.Millisecond,
		Backoff: []time.Duration{100 * time.Millisecond}}, q, slotDriver{r}, nil, log)
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	wctx, stopWorker := context.WithCancel(gctx)
	defer stopWorker()
	g.Go(func() error { return w.Run(wctx) })
	g.Go(func() error {
		defer stopWorker()
		p, err := q.Collect(gctx, farm.CollectConfig{Run: "local", Want: want, Records: records,
			Attempts: func(v any) error {
				mu.Lock()
				defer mu.Unlock()
				res.Attempts = append(res.Attempts, v.(farm.Attempt).Dialogue)
				return nil
			}}, log)
		res.OK, res.Failed = p.OK, p.Failed+p.Dead
		if err != nil {
			return fmt.Errorf("collect: %w", err)
		}
		return nil
	})
	err = g.Wait()
	return res, err
}

// mustDriveOnFarm is driveOnFarm that fails the test on an error.
func mustDriveOnFarm(ctx context.Context, t *testing.T, r *Runner, configs []dialog.ChatConfig, attempts int) farmRun {
	t.Helper()
	res, err := driveOnFarm(ctx, t, r, configs, attempts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}
