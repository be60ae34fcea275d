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
	p := &w.pauses
	p.refuse = min(max(2*p.refuse, w.cfg.Pause), 10*w.cfg.Pause)
	p.pauseFor(p.refuse)
	pause, first := p.refuse, !p.warned[job.Run]
	if p.warned == nil {
		p.warned = map[string]bool{}
	}
	p.warned[job.Run] = true
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
