package farm

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// puller is what a lookahead takes jobs from: the workers' consumer.
type puller interface {
	FetchNoWait(batch int) (jetstream.MessageBatch, error)
	Next(opts ...jetstream.FetchOpt) (jetstream.Msg, error)
}

// lookahead hands a worker's slots their jobs, each preferring one on the
// repository its window shows. A window shows one repository, and a job
// on another one reloads its whole workbench: a window's start-up again,
// with a new extension host. The coordinator orders the queue so that
// windows taking jobs in turn keep their repositories (pipeline's
// queueOrder), but dialogues end out of order, and the queue's next job
// is then often on another window's repository. A slot that asks for a
// job takes one on its repository from the jobs the worker already
// pulled, or pulls what the queue has now (one slot at a time, the worker
// holding at most one unassigned job per window in use) to find one; with none, a
// fresh window, or one whose repository has no job left, takes the held
// job on the repository the fewest windows show, so the windows spread
// over the repositories. A job held longer than hold goes to the next
// slot that asks, whatever its repository.
type lookahead struct {
	src  puller
	wait time.Duration // how long a pull waits when no job is held
	hold time.Duration

	pulling sync.Mutex // held by the slot pulling ahead

	mu    sync.Mutex
	held  []heldJob // in the order they were pulled
	shows []string  // each slot's repository, "" before its first job
}

type heldJob struct {
	msg   jetstream.Msg
	repo  string
	since time.Time
}

func newLookahead(src puller, slots int, wait, hold time.Duration) *lookahead {
	return &lookahead{src: src, wait: wait, hold: hold, shows: make([]string, slots)}
}

// repoKey is the repository a job is driven in: its object in the farm
// when it names one, else its path; "" when the job does not decode (the
// slot that takes it terminates it).
func repoKey(data []byte) string {
	var j struct {
		Config struct {
			Repo string `json:"repo"`
		} `json:"config"`
		Repo *RepoRef `json:"repo"`
	}
	if json.Unmarshal(data, &j) != nil {
		return ""
	}
	if j.Repo != nil {
		return j.Repo.Object
	}
	return j.Config.Repo
}

// next returns slot's next job, waiting up to the lookahead's wait for
// one when none is held; nats.ErrTimeout or jetstream.ErrNoMessages when
// none came.
func (l *lookahead) next(ctx context.Context, slot int) (jetstream.Msg, error) {
	for ctx.Err() == nil {
		if m, ok := l.pick(slot, false); ok {
			return m, nil
		}
		n, m, err := l.pullFor(slot)
		if m != nil || err != nil {
			return m, err
		}
		if n > 0 {
			continue
		}
		if m, ok := l.pick(slot, true); ok {
			return m, nil
		}
		// Nothing held and nothing queued: wait for a job.
		m, err = l.src.Next(jetstream.FetchMaxWait(l.wait))
		if err != nil {
			return nil, err
		}
		l.keep(m)
	}
	return nil, ctx.Err()
}

// pullFor pulls what the queue has now into the held jobs, one slot at a
// time: a slot that waited for another's pull first looks at what that
// one brought (m, when it holds a job on slot's repository). n is how
// many jobs came.
func (l *lookahead) pullFor(slot int) (n int, m jetstream.Msg, err error) {
	l.pulling.Lock()
	defer l.pulling.Unlock()
	if m, ok := l.pick(slot, false); ok {
		return 0, m, nil
	}
	if room := l.room(); room > 0 {
		n, err = l.pull(room)
	}
	return n, nil, err
}

// room is how many more jobs the worker may hold unassigned: one per
// window in use (a slot that took a job), at least one. A worker of many
// slots that its CPU budget admits few at a time (--sessions auto) holds
// no more than the windows it drives, away from the farm's other workers.
func (l *lookahead) room() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	inUse := 0
	for _, r := range l.shows {
		if r != "" {
			inUse++
		}
	}
	return max(inUse, 1) - len(l.held)
}

// pull holds up to n jobs the queue has now and returns how many came.
func (l *lookahead) pull(n int) (int, error) {
	batch, err := l.src.FetchNoWait(n)
	if err != nil {
		return 0, err
	}
	var got []jetstream.Msg
	for m := range batch.Messages() {
		got = append(got, m)
	}
	if err := batch.Error(); err != nil && len(got) == 0 &&
		!errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, nats.ErrTimeout) {
		return 0, err
	}
	l.keep(got...)
	return len(got), nil
}

// keep holds pulled jobs unassigned.
func (l *lookahead) keep(msgs ...jetstream.Msg) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range msgs {
		l.held = append(l.held, heldJob{msg: m, repo: repoKey(m.Data()), since: time.Now()})
	}
}

// pick takes a held job for slot: one held past hold, else one on the
// slot's repository, else (with anyRepo) the one on the repository the fewest
// windows show, the earliest pulled among equals.
func (l *lookahead) pick(slot int, anyRepo bool) (jetstream.Msg, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.held) == 0 {
		return nil, false
	}
	i := -1
	if time.Since(l.held[0].since) > l.hold {
		i = 0
	}
	if i < 0 && l.shows[slot] != "" {
		for k, h := range l.held {
			if h.repo == l.shows[slot] {
				i = k
				break
			}
		}
	}
	if i < 0 && anyRepo {
		windows := map[string]int{}
		for _, r := range l.shows {
			windows[r]++
		}
		for k, h := range l.held {
			if i < 0 || windows[h.repo] < windows[l.held[i].repo] {
				i = k
			}
		}
	}
	if i < 0 {
		return nil, false
	}
	h := l.held[i]
	l.held = append(l.held[:i], l.held[i+1:]...)
	l.shows[slot] = h.repo
	return h.msg, true
}

// holding says whether the worker holds a job no slot took yet.
func (l *lookahead) holding() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.held) > 0
}

// beat tells the server the held jobs are still being worked on.
func (l *lookahead) beat() {
	l.mu.Lock()
	held := make([]jetstream.Msg, len(l.held))
	for i, h := range l.held {
		held[i] = h.msg
	}
	l.mu.Unlock()
	for _, m := range held {
		_ = m.InProgress()
	}
}

// release hands every held job back to the queue, for another worker.
func (l *lookahead) release() {
	l.mu.Lock()
	held := l.held
	l.held = nil
	l.mu.Unlock()
	for _, h := range held {
		_ = h.msg.Nak()
	}
}
