package farm

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"dialogfarm/dialog"
)

// refusal is a worker's state of refusing jobs whose run's recipe differs
// from its own.
type refusal struct {
	pause  time.Duration // the last pause; 0 after a job was driven
	until  time.Time     // no pulling before
	warned map[string]bool
}

// differences says how the worker's recipe differs from job's run's; none
// when either is unknown.
func (w *Worker) differences(job Job) []string {
	if w.cfg.Recipe == nil || job.Recipe == nil {
		return nil
	}
	return w.cfg.Recipe.Differences(*job.Recipe)
}

// refuse hands job back to the queue rather than drive it with a recipe
// other than its run's. An attempt tells the run why (its log and
// attempts.jsonl), the worker's health says which run it refuses, and the
// worker pauses its pulling, handing back the jobs it pulled ahead: the
// refused job comes back after the pause, when another worker has not
// taken it meanwhile. Each refusal uses one of the job's deliveries (a
// job refused every time is dead-lettered with the reason).
func (w *Worker) refuse(ctx context.Context, msg jetstream.Msg, job Job, dl Delivery, attempt int, diffs []string, log *zap.Logger) {
	reason := fmt.Sprintf("worker %s refused it: its recipe differs from the run's (%s)", w.cfg.ID, strings.Join(diffs, "; "))
	w.mu.Lock()
	r := &w.refusal
	r.pause = min(max(2*r.pause, w.cfg.RefusePause), 10*w.cfg.RefusePause)
	r.until = time.Now().Add(r.pause)
	pause, first := r.pause, !r.warned[job.Run]
	if r.warned == nil {
		r.warned = map[string]bool{}
	}
	r.warned[job.Run] = true
	w.health.Refused++
	w.health.Refusing, w.health.RefusedAt = "run "+job.Run+": "+strings.Join(diffs, "; "), time.Now().UTC()
	w.mu.Unlock()

	d := dialog.Dialogue{ConfigID: job.Config.ID, Config: job.Config, Status: dialog.StatusFailed,
		FailedStep: FailedStepRecipe, Error: reason, Worker: w.cfg.ID, StartedAt: time.Now().UTC()}
	a := Attempt{Run: job.Run, Worker: w.cfg.ID, Attempt: attempt, RetryIn: pause.Seconds(), Delivery: dl, Dialogue: d}
	if err := w.publish(ctx, attemptSubject(job.Run, job.Config.ID, w.q.user), a); err != nil {
		log.Warn("publish the refusal", zap.Error(err))
	}
	_ = msg.NakWithDelay(pause)
	w.ahead.release()
	if first {
		log.Error("refusing this run's jobs: this worker's recipe differs from the run's; start the worker with the run's --config, --adapter, --context-lines and --query-model, and the same dialogfarm version",
			zap.Strings("differences", diffs), zap.Duration("pause", pause))
	} else {
		log.Info("refused a job; pausing", zap.Duration("pause", pause))
	}
}

// drove ends a run of refusals: the next one pauses the worker for the
// shortest time again.
func (w *Worker) drove() {
	w.mu.Lock()
	w.refusal.pause = 0
	w.mu.Unlock()
}

// waitPause waits until the worker may pull again after refusing a job;
// false when ctx ended.
func (w *Worker) waitPause(ctx context.Context) bool {
	w.mu.Lock()
	until := w.refusal.until
	w.mu.Unlock()
	if d := time.Until(until); d > 0 {
		return sleepCtx(ctx, d)
	}
	return ctx.Err() == nil
}
