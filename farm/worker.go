package farm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"dialogfarm/dialog"
)

// Driver drives one config in one simulator slot (a browser window).
type Driver interface {
	// DriveOne returns the dialogue, ok or failed. An error means the
	// config was not driven to an outcome and is not recorded; the job
	// goes back to the queue. An error that wraps ErrCannotDrive (say,
	// the plugin fails to activate) also stops the worker with it.
	DriveOne(ctx context.Context, slot int, c dialog.ChatConfig) (Outcome, error)
}

// ErrCannotDrive, wrapped by a Driver's error, says no other config can
// be driven either: the worker stops with that error instead of pulling
// the next job.
var ErrCannotDrive = errors.New("the simulators cannot drive")

// Outcome is one attempt at a config.
type Outcome struct {
	Dialogue dialog.Dialogue
	// Retry says a failed dialogue may pass on another attempt (a step
	// that timed out under load, an editor that crashed); false for a
	// config that cannot fit its repository.
	Retry bool
}

// WorkerConfig configures one worker process's simulators.
type WorkerConfig struct {
	// ID names the worker in results, health and logs.
	ID string
	// Slots is how many simulators pull jobs at once.
	Slots int
	// Heartbeat is how often a job in flight tells the server it is
	// still being worked on; default a third of the ack wait.
	Heartbeat time.Duration
	// Backoff is the wait before attempt n+1 of a failed dialogue
	// (the last value repeats).
	Backoff []time.Duration
	// FetchWait is how long one pull waits for a job.
	FetchWait time.Duration
	// Budget, when set, admits each dialogue by the machine's CPU and
	// memory (--sessions auto); nil admits every slot at once.
	Budget *Budget
	// Editors, when set, names the editor the simulators run in, whose
	// CPU and memory the worker's health reports.
	Editors EditorPIDs
	// Repos, when set, fetches and keeps the repositories jobs name in
	// the farm's repos bucket: the worker drives in its own copy and never
	// at the coordinator's path. Nil drives at Config.Repo (a worker
	// that shares the run folder). The worker trims it when it starts
	// and lets go of its slots' repositories when it stops.
	Repos *RepoCache
	// SendFiles sends a failed dialogue's artifacts back through the
	// farm's files bucket (a worker that does not share the run folder).
	SendFiles bool
	// Recipe, when set, is this worker's (its plugins, pool, judge and
	// follow-up model): it refuses a job whose run's recipe differs. Nil
	// drives every job.
	Recipe *Recipe
	// Pause is how long the worker pulls no job after refusing one, or
	// after PauseAfterFailures failures in a row; each further refusal,
	// or failure once a pause is over, doubles it, up to 10 times.
	Pause time.Duration
	// PauseAfterFailures, when positive, pauses the worker's pulling once
	// that many of its dialogues, each of another config, failed in a row
	// (see pause.go); 0 never pauses for failures.
	PauseAfterFailures int
	// Drain, when closed, stops the worker pulling jobs: it hands back
	// the jobs it pulled ahead, finishes the dialogues in progress and
	// returns from Run (a worker stopped for an upgrade loses no work).
	Drain <-chan struct{}
	// IdleExit, when positive, stops the worker (Run returns nil) once
	// it has driven no dialogue and been handed no job for that long: a
	// machine started for a batch of runs goes when the farm has no more
	// work for it.
	IdleExit time.Duration
}

// DefaultWorkerConfig is one slot named after the host and process.
func DefaultWorkerConfig() WorkerConfig {
	host, _ := os.Hostname()
	return WorkerConfig{
		ID:        fmt.Sprintf("%s-%d", host, os.Getpid()),
		Slots:     1,
		Backoff:   []time.Duration{2 * time.Second, 10 * time.Second, 30 * time.Second},
		FetchWait: 2 * time.Second,
		// Long enough that a worker refusing a whole run uses few of its
		// jobs' deliveries while the workers that match are busy.
		Pause: 30 * time.Second,
	}
}

// Worker pulls jobs and drives them.
type Worker struct {
	cfg     WorkerConfig
	q       *Queue
	drv     Driver
	metrics *Metrics
	log     *zap.Logger
	ahead   *lookahead

	mu     sync.Mutex
	health Health
	pauses pauses
	active time.Time // when a dialogue last started or ended, or a job came
}

// NewWorker returns a worker on q; metrics may be nil.
func NewWorker(cfg WorkerConfig, q *Queue, drv Driver, metrics *Metrics, log *zap.Logger) *Worker {
	if cfg.Slots < 1 {
		cfg.Slots = 1
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = max(q.cfg.AckWait/3, 100*time.Millisecond)
	}
	if cfg.FetchWait <= 0 {
		cfg.FetchWait = 2 * time.Second
	}
	if len(cfg.Backoff) == 0 {
		cfg.Backoff = DefaultWorkerConfig().Backoff
	}
	if cfg.Pause <= 0 {
		cfg.Pause = DefaultWorkerConfig().Pause
	}
	host, _ := os.Hostname()
	return &Worker{cfg: cfg, q: q, drv: drv, metrics: metrics, log: log.With(zap.String("worker", cfg.ID)),
		ahead:  newLookahead(q.workers, cfg.Slots, cfg.FetchWait, holdUnassigned),
		health: Health{Worker: cfg.ID, Host: host, Slots: cfg.Slots, Started: time.Now().UTC()},
		active: time.Now()}
}

// holdUnassigned is how long a job the worker pulled ahead waits for a
// window on its repository before the next slot that asks takes it. It
// is a bound for the rare job no window comes back for: a held job goes
// to a slot with no job of its own repository held anyway once the
// worker holds one per window in use. The first dialogues of 16 fresh
// windows, which load one after the other, end over a minute after their
// jobs were pulled: 30 s handed the rest of those jobs out in queue order.
const holdUnassigned = 3 * time.Minute

// Run pulls and drives jobs on every slot until ctx ends (the dialogues
// in progress are handed back) or the drain closes (they are finished
// first). The jobs it pulled ahead and did not start go back to the
// queue when it returns.
func (w *Worker) Run(ctx context.Context) error {
	defer w.ahead.release()
	if r := w.cfg.Repos; r != nil {
		r.Trim()
		defer r.Release()
	}
	// The health reports and the held jobs' heartbeats last until the
	// slots are done.
	aux, stopAux := context.WithCancel(ctx)
	var bg sync.WaitGroup
	bg.Go(func() { w.reportHealth(aux) })
	bg.Go(func() { every(aux, w.cfg.Heartbeat, func(time.Time) { w.ahead.beat() }) })
	defer bg.Wait()
	defer stopAux()
	g, gctx := errgroup.WithContext(ctx)
	pulling, stopPulling := context.WithCancel(gctx)
	defer stopPulling()
	if d := w.cfg.Drain; d != nil {
		go func() {
			select {
			case <-d:
				w.count(func(h *Health) { h.Draining = true })
				w.log.Info("draining: no more jobs; finishing the dialogues in progress", zap.Int("busy", w.busyNow()))
				stopPulling()
				w.ahead.release()
			case <-pulling.Done():
			}
		}()
	}
	if d := w.cfg.IdleExit; d > 0 {
		bg.Go(func() {
			if w.waitIdle(pulling, d) {
				w.count(func(h *Health) { h.Draining = true })
				w.log.Info("no job for a while: stopping", zap.Duration("idle", d))
				stopPulling()
			}
		})
	}
	for slot := range w.cfg.Slots {
		g.Go(func() error { return w.pull(gctx, pulling, slot) })
	}
	err := g.Wait()
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// pull drives the jobs slot pulls, while pulling lasts; each on ctx.
func (w *Worker) pull(ctx, pulling context.Context, slot int) error {
	backoff := 100 * time.Millisecond
	for pulling.Err() == nil && !w.draining() {
		if !w.waitPause(pulling) {
			return nil
		}
		if b := w.cfg.Budget; b != nil {
			if err := b.Acquire(pulling); err != nil {
				return nil
			}
		}
		// The pull's expiry goes to the server, and the client waits a
		// second longer: a job the server hands out just before expiry
		// still reaches this worker. (With a context deadline the client
		// gave up 10% before it, and a job delivered in that gap sat
		// unacked for the whole ack wait, 60 s, under load.)
		msg, err := w.ahead.next(pulling, slot)
		stopping := pulling.Err() != nil || w.draining()
		if err != nil || stopping {
			if w.cfg.Budget != nil {
				w.cfg.Budget.Release()
			}
		}
		if stopping {
			if err == nil {
				_ = msg.Nak() // hand the job straight back for another worker
			}
			return nil
		}
		if err != nil {
			if errors.Is(err, nats.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, jetstream.ErrNoMessages) {
				continue
			}
			w.log.Warn("pull a job", zap.Int("slot", slot), zap.Error(err))
			if !sleepCtx(pulling, backoff) {
				return nil
			}
			backoff = min(2*backoff, 5*time.Second)
			continue
		}
		backoff = 100 * time.Millisecond
		w.touch()
		err = w.handle(ctx, slot, msg)
		if w.cfg.Budget != nil {
			w.cfg.Budget.Release()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// handle drives one job and settles its message: result and ack, attempt
// and delayed redelivery, or a nak when the worker is stopping or its
// driver cannot drive (that error is returned: the worker stops).
func (w *Worker) handle(ctx context.Context, slot int, msg jetstream.Msg) error {
	meta, err := msg.Metadata()
	if err != nil {
		w.log.Warn("job without metadata", zap.Error(err))
		_ = msg.Term()
		return nil
	}
	attempt := int(meta.NumDelivered)
	var job Job
	if err := json.Unmarshal(msg.Data(), &job); err != nil || job.Config.ID == "" {
		w.log.Error("undecodable job; terminated", zap.String("subject", msg.Subject()), zap.Error(err))
		_ = msg.TermWithReason("undecodable job")
		return nil
	}
	log := w.log.With(zap.String("run", job.Run), zap.String("config", job.Config.ID), zap.Int("attempt", attempt))
	dl := Delivery{Nonce: job.Nonce, Token: job.Token, JobSeq: meta.Sequence.Stream}
	if diffs := w.differences(job); len(diffs) > 0 {
		w.refuse(ctx, msg, job, dl, attempt, diffs, log)
		return nil
	}
	w.busy(+1)
	defer w.busy(-1)

	stop := make(chan struct{})
	var beats sync.WaitGroup
	beats.Go(func() {
		t := time.NewTicker(w.cfg.Heartbeat)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				if err := msg.InProgress(); err != nil {
					log.Warn("in-progress heartbeat", zap.Error(err))
				}
			}
		}
	})
	out, err := w.drive(ctx, slot, job)
	close(stop)
	beats.Wait()
	if err != nil {
		_ = msg.Nak()
		if ctx.Err() == nil && errors.Is(err, ErrCannotDrive) {
			log.Error("the simulators cannot drive; the job is handed back and this worker stops", zap.Error(err))
			return fmt.Errorf("worker %s: %w", w.cfg.ID, err)
		}
		log.Info("job not finished; handed back", zap.Error(err))
		return nil
	}
	d := out.Dialogue
	d.Worker = w.cfg.ID
	w.settled(job, d, out.Retry, log)
	var files []FileRef
	if w.cfg.SendFiles && d.Artifacts != "" {
		if files, err = w.q.sendFiles(ctx, job.Run, job.Config.ID, attempt, d.Artifacts); err != nil {
			log.Warn("send the dialogue's artifacts back; kept here", zap.String("dir", d.Artifacts), zap.Error(err))
		} else {
			dropSent(d.Artifacts, files)
		}
	}
	w.metrics.observe(d)
	if d.Status != dialog.StatusOK && out.Retry && attempt < job.MaxAttempts {
		delay := w.cfg.Backoff[min(attempt-1, len(w.cfg.Backoff)-1)]
		a := Attempt{Run: job.Run, Worker: w.cfg.ID, Attempt: attempt, RetryIn: delay.Seconds(), Delivery: dl, Dialogue: d, Files: files}
		if err := w.publish(ctx, attemptSubject(job.Run, job.Config.ID, w.q.user), a); err != nil {
			log.Warn("publish attempt", zap.Error(err))
		}
		log.Warn("dialogue failed; retrying", zap.String("step", d.FailedStep), zap.String("error", d.Error), zap.Duration("in", delay))
		w.metrics.retried()
		w.count(func(h *Health) { h.Retried++ })
		_ = msg.NakWithDelay(delay)
		return nil
	}
	res := Result{Run: job.Run, Worker: w.cfg.ID, Attempt: attempt, Delivery: dl, Dialogue: d, Files: files}
	if err := w.publish(ctx, resultSubject(job.Run, job.Config.ID, w.q.user), res); err != nil {
		log.Warn("publish result; handed back", zap.Error(err))
		_ = msg.Nak()
		return nil
	}
	// The result is published: acknowledge even when the run is ending
	// (the collector stops the workers once the last result is in).
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := msg.DoubleAck(actx); err != nil {
		log.Warn("ack job (the result is kept; a redelivery will find it)", zap.Error(err))
	}
	w.count(func(h *Health) {
		if d.Status == dialog.StatusOK {
			h.Done++
		} else {
			h.Failed++
		}
	})
	return nil
}

// drive drives job's config, in the worker's copy of its repository when
// the job names one in the farm and the worker keeps a cache; the record
// keeps the coordinator's path. A repository that cannot be fetched fails
// the attempt (it is retried), unless the worker is stopping.
func (w *Worker) drive(ctx context.Context, slot int, job Job) (Outcome, error) {
	c := job.Config
	if job.Repo != nil && w.cfg.Repos != nil {
		path, err := w.cfg.Repos.Path(ctx, slot, *job.Repo)
		if ctx.Err() != nil {
			return Outcome{}, ctx.Err()
		}
		if err != nil {
			d := dialog.Dialogue{ConfigID: c.ID, Config: c, Status: dialog.StatusFailed, FailedStep: FailedStepFetchRepo,
				Error: err.Error(), StartedAt: time.Now().UTC()}
			return Outcome{Dialogue: d, Retry: true}, nil
		}
		c.Repo = path
	}
	out, err := w.drv.DriveOne(ctx, slot, c)
	if out.Dialogue.Config.Repo == c.Repo {
		out.Dialogue.Config.Repo = job.Config.Repo
	}
	return out, err
}

// FailedStepFetchRepo is the failed step of an attempt whose repository
// could not be fetched from the farm.
const FailedStepFetchRepo = "fetch_repository"

// publish sends v on subject.
func (w *Worker) publish(ctx context.Context, subject string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", subject, err)
	}
	return retry(context.WithoutCancel(ctx), w.q.js.Conn(), func(ctx context.Context) error {
		_, err := w.q.js.Publish(ctx, subject, data)
		return err
	})
}

// draining reports whether the worker was told to drain: a slot checks
// it before each job as well as the pull's context, which the drain ends
// a moment later.
func (w *Worker) draining() bool {
	select {
	case <-w.cfg.Drain:
		return true
	default:
		return false
	}
}

func (w *Worker) busyNow() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.health.Busy
}

func (w *Worker) busy(n int) {
	w.count(func(h *Health) { h.Busy += n })
	w.metrics.busy(n)
	w.touch()
}

// touch notes that the worker has work now.
func (w *Worker) touch() {
	w.mu.Lock()
	w.active = time.Now()
	w.mu.Unlock()
}

// waitIdle returns true once the worker has had no dialogue in progress,
// no job held and no job come for d; false when ctx ends first.
func (w *Worker) waitIdle(ctx context.Context, d time.Duration) bool {
	t := time.NewTicker(min(d/4, 5*time.Second))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case now := <-t.C:
			w.mu.Lock()
			idle := w.health.Busy == 0 && now.Sub(w.active) >= d
			w.mu.Unlock()
			if idle && !w.ahead.holding() {
				return true
			}
		}
	}
}

func (w *Worker) count(f func(*Health)) {
	w.mu.Lock()
	f(&w.health)
	w.mu.Unlock()
}

// every calls f every d until ctx ends.
func every(ctx context.Context, d time.Duration, f func(now time.Time)) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			f(now)
		}
	}
}

// sleepCtx waits d or until ctx ends; false when ctx ended.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
