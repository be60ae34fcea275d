package farm

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
)

// ErrRunCollecting says a run's collector is pulling its outcomes: a run
// process is going on.
var ErrRunCollecting = errors.New("the run is going on: its collector pulls its outcomes")

// Forgotten is what Forget took off the farm.
type Forgotten struct {
	// Jobs are the run's configs whose jobs waited or were in flight;
	// Outcomes those whose result or dead letter was not collected.
	Jobs, Outcomes uint64
}

// Forget takes run off the farm: the jobs no worker is to drive any more,
// its outcomes not collected and its collector's consumers. A run stopped
// and not to be resumed otherwise keeps the workers busy with its jobs
// and its outcomes on the farm for 30 days. A dialogue in progress
// finishes on its worker, and its result stays until then. The run folder
// keeps its records: `run` in it again enqueues what it has not recorded.
// Forget refuses, with ErrRunCollecting, while a collector pulls the
// run's outcomes (a run process is going on: stop it first), unless
// force.
func (q *Queue) Forget(ctx context.Context, run string, force bool, log *zap.Logger) (Forgotten, error) {
	sources := collectSources(run)
	if !force {
		if err := q.notCollecting(ctx, run, sources); err != nil {
			return Forgotten{}, err
		}
	}
	st, err := ReadStatus(ctx, q.js, run)
	if err != nil {
		return Forgotten{}, fmt.Errorf("forget run %s: %w", run, err)
	}
	f := Forgotten{Jobs: st.Queued, Outcomes: st.Results + st.Dead}
	jobs, err := q.js.Stream(ctx, JobsStream)
	if err == nil {
		err = jobs.Purge(ctx, jetstream.WithPurgeSubject(runJobs(run)))
	}
	if err != nil {
		return f, fmt.Errorf("forget run %s: take its jobs off the farm: %w", run, err)
	}
	q.forget(ctx, run, sources, log)
	return f, nil
}

// notCollecting checks the run's collector consumers a few times over a
// second or so: a collector keeps a pull request waiting on each of them
// (renewed every 5 s), one stopped has none within 5 s.
func (q *Queue) notCollecting(ctx context.Context, run string, sources []collectSource) error {
	tick := time.NewTicker(400 * time.Millisecond)
	defer tick.Stop()
	for range 3 {
		for _, src := range sources {
			c, err := q.js.Consumer(ctx, src.stream, src.consumer)
			if errors.Is(err, jetstream.ErrConsumerNotFound) {
				continue
			}
			if err != nil {
				return fmt.Errorf("forget run %s: look up its collector: %w", run, err)
			}
			info, err := c.Info(ctx)
			if err != nil {
				return fmt.Errorf("forget run %s: look up its collector: %w", run, err)
			}
			if info.NumWaiting > 0 {
				return fmt.Errorf("forget run %s: %w; stop it first (or farm forget --force)", run, ErrRunCollecting)
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return nil
}
