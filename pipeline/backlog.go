package pipeline

import (
	"context"
	"time"

	"go.uber.org/zap"

	"dialogfarm/dialog"
	"dialogfarm/farm"
)

// A run on a shared farm enqueues its configs a part at a time: at most
// a backlog of them wait or are in flight, and more are enqueued as their
// outcomes come in. The farm's queue hands out jobs in the order they
// were enqueued, so a run that enqueued all its configs at once held
// every worker until the last of them was out, and a run started after
// it waited for all of them; with backlogs, it waits for the backlogs of
// the runs before it at most. A run that stops (its machine rebooted)
// leaves no more than its backlog to the workers.
const (
	// BacklogAll enqueues every config at once (FarmConfig.Backlog).
	BacklogAll = -1
	// backlogPerSimulator is the auto backlog per simulator of the farm:
	// one job in its window, one its worker holds ahead, and one waiting
	// on the farm for when those are done before the run enqueues more.
	backlogPerSimulator = 3
	// minBacklog is the least auto backlog, for a farm whose workers have
	// not reported yet.
	minBacklog = 32
	// backlogReadEvery is how often an auto backlog reads the farm's
	// simulators again.
	backlogReadEvery = 30 * time.Second
)

// backlog enqueues a run's configs (todo, in queue order) a part at a
// time.
type backlog struct {
	e    *farm.Enqueuer
	q    *farm.Queue
	size int // FarmConfig.Backlog: 0 auto, BacklogAll, or a number
	// enqueue enqueues configs through e with the run's options.
	enqueue func(ctx context.Context, cs []dialog.ChatConfig) (int, error)
	log     *zap.Logger

	auto   int
	autoAt time.Time
}

// want is how many of the run's configs may wait or be in flight now.
func (b *backlog) want(ctx context.Context) int {
	if b.size > 0 {
		return b.size
	}
	if b.autoAt.IsZero() || time.Since(b.autoAt) >= backlogReadEvery {
		b.auto, b.autoAt = max(minBacklog, backlogPerSimulator*b.q.Simulators(ctx)), time.Now()
	}
	return b.auto
}

// run enqueues todo: at once for BacklogAll; else first the configs an
// earlier start of the run left on the farm (their jobs, their results
// not collected), then the others as the run's outcomes come in, each
// number of outcomes collected (farm.Progress.Done) read from done, so
// that at most a backlog of them wait or are in flight. A config the farm
// does not take (its server restarting) is tried again, for up to
// enqueueGiveUp. It returns once every config is enqueued, or ctx ended.
func (b *backlog) run(ctx context.Context, todo []dialog.ChatConfig, done <-chan int) error {
	if b.size == BacklogAll {
		_, err := b.enqueue(ctx, todo)
		return err
	}
	var again, fresh []dialog.ChatConfig
	for _, c := range todo {
		if b.e.OnFarm(c.ID) {
			again = append(again, c)
		} else {
			fresh = append(fresh, c)
		}
	}
	list := append(again, fresh...)
	queued, collected, room := 0, 0, len(again)
	var failing time.Time // since when enqueueing fails
	for i := 0; i < len(list); {
		if room == 0 {
			// Enqueue in parts of a quarter of the backlog at least, each
			// a few requests to the farm, rather than one per outcome.
			want := b.want(ctx)
			if r := want - (queued - collected); r >= max(1, want/4) {
				room = r
				continue
			}
			select {
			case <-ctx.Done():
				return nil
			case collected = <-done:
			}
			continue
		}
		n, err := b.enqueue(ctx, list[i:i+1])
		switch {
		case err == nil:
			queued, room, failing = queued+n, room-1, time.Time{}
			i++
		case ctx.Err() != nil:
			return nil
		case failing.IsZero():
			failing = time.Now()
			b.log.Warn("enqueue a config of the run: trying again", zap.String("config", list[i].ID), zap.Error(err))
		case time.Since(failing) > enqueueGiveUp:
			return err
		}
		if err != nil {
			t := time.NewTimer(enqueueRetry)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil
			case <-t.C:
			}
		}
	}
	b.log.Debug("every config of the run is enqueued", zap.Int("configs", len(todo)))
	return nil
}

// How a backlog enqueues a config the farm did not take: again after
// enqueueRetry, for up to enqueueGiveUp.
const (
	enqueueRetry  = time.Second
	enqueueGiveUp = 10 * time.Minute
)
