package farm

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"

	"dialogfarm/dialog"
)

// pauses hold a worker's pulling back for a while: after it refused a job
// (its recipe differs from the run's, see refuse.go), and after its
// dialogues of several configs failed in a row. A worker that fails where
// others pass (its model endpoint out of reach from its machine, a plugin
// that does not load there) fails a job in seconds where a healthy one
// takes a dialogue's time, so it would take most jobs and use their
// attempts; paused, it leaves them to the others, and after the pause it
// tries again: one more failure pauses it twice as long, one dialogue that
// passes ends the pauses.
type pauses struct {
	until time.Time // no pulling before

	refuse time.Duration   // the last refusal's pause; 0 after a job was driven
	warned map[string]bool // the runs whose first refusal was logged as an error

	failed map[string]bool // the configs that failed since the last dialogue that passed
	fail   time.Duration   // the last failure pause; 0 while none
}

// pauseFor holds the pulling back for d from now, unless it is held longer.
func (p *pauses) pauseFor(d time.Duration) {
	if until := time.Now().Add(d); until.After(p.until) {
		p.until = until
	}
}

// settled counts a dialogue the worker drove to an outcome: one that
// passed ends the run of failures (and of refusals); a failure that
// another attempt may pass (retry), of a config not yet in the run,
// counts (one that cannot pass anywhere, a config that does not fit its
// repository, says nothing of the worker), and from cfg.PauseAfterFailures on,
// a failure that comes when no pause is on pauses the pulling (the
// dialogues its other slots were driving when it paused count without
// doubling it).
func (w *Worker) settled(job Job, d dialog.Dialogue, retry bool, log *zap.Logger) {
	last := failure(d)
	resumed, n, pause, first := w.countOutcome(job.Config.ID, d.Status == dialog.StatusOK, retry, last)
	switch {
	case resumed:
		log.Info("a dialogue passed after the failures that paused this worker: pulling as before")
	case pause > 0:
		w.ahead.release()
		msg := fmt.Sprintf("%d dialogues of as many configs failed in a row on this worker: it pulls no job for %s, so that other workers drive them", n, pause)
		if first {
			log.Error(msg+"; see the failures' steps and errors in this log and the run's attempts.jsonl",
				zap.String("last", last), zap.Duration("pause", pause))
		} else {
			log.Warn(msg, zap.String("last", last), zap.Duration("pause", pause))
		}
	}
}

// countOutcome does settled's counting under the worker's lock: resumed
// says a dialogue passed after a pause; n failures in a row began a pause
// above 0, first when it is the shortest.
func (w *Worker) countOutcome(id string, ok, retry bool, last string) (resumed bool, n int, pause time.Duration, first bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := &w.pauses
	p.refuse = 0
	if ok {
		resumed = p.fail > 0
		p.failed, p.fail = nil, 0
		w.health.FailedInARow, w.health.Failing, w.health.PausedUntil = 0, "", time.Time{}
		return resumed, 0, 0, false
	}
	if !retry {
		return false, 0, 0, false
	}
	if p.failed == nil {
		p.failed = map[string]bool{}
	}
	p.failed[id] = true
	n = len(p.failed)
	w.health.FailedInARow, w.health.Failing = n, last
	if limit := w.cfg.PauseAfterFailures; limit <= 0 || n < limit || time.Now().Before(p.until) {
		return false, n, 0, false
	}
	p.fail = min(max(2*p.fail, w.cfg.Pause), 10*w.cfg.Pause)
	p.pauseFor(p.fail)
	w.health.PausedUntil = p.until
	return false, n, p.fail, p.fail == w.cfg.Pause
}

// failure says in a line where and why d failed.
func failure(d dialog.Dialogue) string {
	s := d.FailedStep + ": " + d.Error
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return s
}

// waitPause waits until the worker may pull again after a pause; false
// when ctx ended.
func (w *Worker) waitPause(ctx context.Context) bool {
	w.mu.Lock()
	until := w.pauses.until
	w.mu.Unlock()
	if d := time.Until(until); d > 0 {
		return sleepCtx(ctx, d)
	}
	return ctx.Err() == nil
}
