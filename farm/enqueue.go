package farm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"dialogfarm/dialog"
)

// EnqueueOption changes how Enqueue makes jobs.
type EnqueueOption func(*Job)

// WithRepos names each config's repository in the farm's repos bucket
// (ShipRepos made refs, by the repository's folder).
func WithRepos(refs map[string]RepoRef) EnqueueOption {
	return func(j *Job) {
		if ref, ok := refs[j.Config.Repo]; ok {
			j.Repo = &ref
		}
	}
}

// Enqueue publishes a job for every config that skip does not name and
// that has no job queued yet. A config that is enqueued again loses any
// earlier result or dead letter (it is being driven again, as a resumed
// run drives configs whose record failed). It returns how many jobs are
// queued for configs (new and already waiting).
func (q *Queue) Enqueue(ctx context.Context, run string, configs []dialog.ChatConfig, maxAttempts int, skip func(id string) bool, opts ...EnqueueOption) (int, error) {
	e, err := q.Enqueuer(ctx, run)
	if err != nil {
		return 0, err
	}
	return e.Enqueue(ctx, configs, maxAttempts, skip, opts...)
}

// Enqueuer enqueues one run's configs, in as many parts as its caller
// likes, on what the farm held of the run when it was made.
type Enqueuer struct {
	q       *Queue
	run     string
	key     []byte
	waiting map[string]bool // configs with an ok result the collector takes
	jobs    map[string]bool // subject tokens of the configs with a job
}

// Enqueuer looks up what the farm holds of run: its ok results not
// collected yet and its jobs.
func (q *Queue) Enqueuer(ctx context.Context, run string) (*Enqueuer, error) {
	key, err := q.runKey(run)
	if err != nil {
		return nil, err
	}
	waiting, err := q.okWaiting(ctx, run, key)
	if err != nil {
		return nil, err
	}
	info, err := q.jobs.Info(ctx, jetstream.WithSubjectFilter(runJobs(run)))
	if err != nil {
		return nil, fmt.Errorf("look up the jobs of run %s: %w", run, err)
	}
	jobs := map[string]bool{}
	for subj := range info.State.Subjects {
		jobs[subj[strings.LastIndexByte(subj, '.')+1:]] = true
	}
	return &Enqueuer{q: q, run: run, key: key, waiting: waiting, jobs: jobs}, nil
}

// OnFarm says whether config id had a job or an ok result waiting on the
// farm when e was made (an earlier start of the run enqueued it).
func (e *Enqueuer) OnFarm(id string) bool { return e.waiting[id] || e.jobs[token(id)] }

// Enqueue is Queue.Enqueue for e's run.
func (e *Enqueuer) Enqueue(ctx context.Context, configs []dialog.ChatConfig, maxAttempts int, skip func(id string) bool, opts ...EnqueueOption) (int, error) {
	q, run, key := e.q, e.run, e.key
	queued := 0
	for _, c := range configs {
		if skip != nil && skip(c.ID) {
			continue
		}
		queued++
		if e.waiting[c.ID] {
			continue // driven while the run was away: its collector takes it
		}
		if m, err := q.jobs.GetLastMsgForSubject(ctx, jobSubject(run, c.ID)); err == nil {
			if ownJob(m.Data, key, run, c.ID) {
				continue // still queued or in flight from an earlier start
			}
			// Not a job this run enqueued: a message another client had
			// the server put on the subject. It must not stand for one.
			if err := q.jobs.DeleteMsg(ctx, m.Sequence); err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
				return queued, fmt.Errorf("delete a stray message on job %s: %w", c.ID, err)
			}
		} else if !errors.Is(err, jetstream.ErrMsgNotFound) {
			return queued, fmt.Errorf("look up job %s: %w", c.ID, err)
		}
		for _, p := range []struct {
			s    jetstream.Stream
			subj string
		}{{q.results, resultSubject(run, c.ID, "*")}, {q.dead, deadSubject(run, c.ID)}} {
			if err := p.s.Purge(ctx, jetstream.WithPurgeSubject(p.subj)); err != nil {
				return queued, fmt.Errorf("clear earlier outcome of %s: %w", c.ID, err)
			}
		}
		nonce, err := newNonce()
		if err != nil {
			return queued, err
		}
		job := Job{Run: run, Config: c, MaxAttempts: maxAttempts, Nonce: nonce, Token: seal(key, run, c.ID, nonce)}
		for _, o := range opts {
			o(&job)
		}
		data, err := json.Marshal(job)
		if err != nil {
			return queued, fmt.Errorf("encode job %s: %w", c.ID, err)
		}
		if err := retry(ctx, q.js.Conn(), func(ctx context.Context) error {
			_, err := q.js.Publish(ctx, jobSubject(run, c.ID), data)
			return err
		}); err != nil {
			return queued, fmt.Errorf("enqueue %s: %w", c.ID, err)
		}
	}
	return queued, nil
}

// okWaiting are the configs of run that have an ok result on the farm its
// collector would take (sealed for the run, on the subject of the config
// and of the worker that published it): a run resumed after it was
// stopped, while the workers drove its jobs on, keeps these rather than
// driving the configs again. A failed result is not kept: a resumed run
// drives its failed configs again.
func (q *Queue) okWaiting(ctx context.Context, run string, key []byte) (map[string]bool, error) {
	prefix := resultPrefix(run)
	info, err := q.results.Info(ctx, jetstream.WithSubjectFilter(prefix+">"))
	if err != nil {
		return nil, fmt.Errorf("look up the results of run %s: %w", run, err)
	}
	ok := map[string]bool{}
	for subj := range info.State.Subjects {
		config, _, bound := subjectUser(subj, prefix)
		if !bound {
			continue
		}
		m, err := q.results.GetLastMsgForSubject(ctx, subj)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("look up the results of run %s: %w", run, err)
		}
		var r Result
		if json.Unmarshal(m.Data, &r) != nil {
			continue
		}
		id := r.Dialogue.ConfigID
		if r.Run == run && config == token(id) && r.Dialogue.Status == dialog.StatusOK &&
			sealed(key, run, id, r.Delivery.Nonce, r.Delivery.Token) {
			ok[id] = true
		}
	}
	return ok, nil
}

// ownJob says whether data is a job of run for config id sealed with key.
func ownJob(data, key []byte, run, id string) bool {
	var j Job
	return json.Unmarshal(data, &j) == nil && j.Run == run && j.Config.ID == id && sealed(key, run, id, j.Nonce, j.Token)
}
