package pool

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"dialogfarm/dialog"
)

// ErrNoCandidates is returned when no member answered a request; the error
// joins every member's reason.
var ErrNoCandidates = errors.New("no pool member answered")

// Pool asks every member for a candidate answer to each request.
type Pool struct {
	cfg     Config
	members []*Member
	cache   *Cache
	log     *zap.Logger
}

// Option changes the policy New gives the members.
type Option func(*Policy)

// WithLimits takes the members' rpm and tpm limiters and the slots of
// their farm_max_concurrency from limits (nil: token buckets and slots of
// each member's own).
func WithLimits(limits Limits) Option { return func(p *Policy) { p.Limits = limits } }

// New builds a pool from cfg, whose keys must be resolved (ResolveKeys).
// The cache folder is created when CacheDir is set.
func New(cfg Config, log *zap.Logger, opts ...Option) (*Pool, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	p := &Pool{cfg: cfg, log: log}
	if cfg.CacheDir != "" {
		c, err := OpenCache(cfg.CacheDir)
		if err != nil {
			return nil, err
		}
		p.cache = c
	}
	policy := cfg.Policy()
	for _, o := range opts {
		o(&policy)
	}
	for _, mc := range cfg.Members {
		m, err := NewMember(mc, policy, p.cache, log)
		if err != nil {
			return nil, err
		}
		p.members = append(p.members, m)
	}
	return p, nil
}

// Cache is the pool's response cache, nil when off; a judge member built
// with NewMember can share it.
func (p *Pool) Cache() *Cache { return p.cache }

// Members are the pool's members in config order.
func (p *Pool) Members() []*Member { return p.members }

// Proposal is the outcome of asking the members: the candidates in member
// order, and the members that gave none with their reasons (failed,
// skipped by an open circuit, or late).
type Proposal struct {
	Candidates []dialog.Candidate
	Failures   []*MemberError
}

// Missing is the proposal's failures as the record keeps them.
func (p Proposal) Missing() []dialog.Missing {
	var out []dialog.Missing
	for _, f := range p.Failures {
		out = append(out, dialog.Missing{Member: f.Member, Reason: f.Error(), Late: f.Late,
			Skipped: errors.Is(f.Err, ErrCircuitOpen)})
	}
	return out
}

// result is one member's outcome.
type result struct {
	i   int
	c   dialog.Candidate
	err error
}

// Propose asks every member concurrently (at most Config.Concurrency at
// once) and returns once Config.Quorum members (default all) have
// answered, every member has answered or failed, or Config.Deadline has
// passed with at least one candidate. Members still asking then are
// cancelled and recorded as late. Members fail independently: the proposal
// holds whatever came back. It is an error wrapping ErrNoCandidates, with
// every member's reason, when nothing did, and ctx's error when ctx ended.
func (p *Pool) Propose(ctx context.Context, req Request) (Proposal, error) {
	n := len(p.members)
	mctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make(chan result, n)
	var sem chan struct{}
	if p.cfg.Concurrency > 0 {
		sem = make(chan struct{}, p.cfg.Concurrency)
	}
	var g errgroup.Group // not WithContext: one member's failure must not cancel the others
	for i, m := range p.members {
		g.Go(func() error {
			if sem != nil {
				select {
				case sem <- struct{}{}:
					defer func() { <-sem }()
				case <-mctx.Done():
					results <- result{i: i, err: mctx.Err()}
					return nil
				}
			}
			c, err := m.Ask(mctx, req)
			results <- result{i: i, c: c, err: err}
			return nil
		})
	}
	quorum := p.cfg.Quorum
	if quorum <= 0 || quorum > n {
		quorum = n
	}
	var deadline <-chan time.Time
	if p.cfg.Deadline > 0 {
		t := time.NewTimer(p.cfg.Deadline)
		defer t.Stop()
		deadline = t.C
	}
	cands := make([]*dialog.Candidate, n)
	fails := make([]*MemberError, n)
	take := func(r result) {
		if r.err == nil {
			cands[r.i] = &r.c
			return
		}
		me, ok := errors.AsType[*MemberError](r.err)
		if !ok {
			me = &MemberError{Member: p.members[r.i].Name(), Err: r.err}
		}
		fails[r.i] = me
	}
	got, answered, late := 0, 0, ""
wait:
	for got < n {
		select {
		case r := <-results:
			got++
			take(r)
			if r.err == nil {
				answered++
			}
			if answered >= quorum && got < n {
				late = fmt.Sprintf("not needed: %d of %d members answered first (quorum %d)", answered, n, quorum)
				break wait
			}
			if deadline == nil && p.cfg.Deadline > 0 && answered > 0 && got < n {
				late = fmt.Sprintf("no answer within the pool deadline of %v", p.cfg.Deadline)
				break wait
			}
		case <-deadline:
			deadline = nil
			if answered > 0 {
				late = fmt.Sprintf("no answer within the pool deadline of %v", p.cfg.Deadline)
				break wait
			}
		case <-ctx.Done():
			break wait
		}
	}
	cancel()
	_ = g.Wait() // the goroutines never return an error; cancelled members return at once
	close(results)
	for r := range results {
		if r.err != nil && ctx.Err() == nil && late != "" && errors.Is(r.err, context.Canceled) {
			// cut off by the quorum or deadline, not a failure of the member
			r.err = &MemberError{Member: p.members[r.i].Name(), Late: true, Err: errors.New(late)}
			p.members[r.i].record(func(s *Stats) { s.Late++ })
		}
		take(r)
	}
	var out Proposal
	for i, m := range p.members {
		if cands[i] != nil {
			out.Candidates = append(out.Candidates, *cands[i])
		}
		if fails[i] != nil {
			out.Failures = append(out.Failures, fails[i])
		}
		if ctx.Err() == nil && (fails[i] == nil || !fails[i].Late) { // cancelled or late says nothing about the member
			p.track(m, fails[i])
		}
	}
	if len(out.Candidates) > 0 && len(out.Candidates) < n {
		p.log.Info("answering without every member", zap.Int("candidates", len(out.Candidates)), zap.Int("members", n),
			zap.String("why", late))
	}
	if err := ctx.Err(); err != nil {
		return out, fmt.Errorf("ask the pool: %w", err)
	}
	if len(out.Candidates) == 0 {
		errs := make([]error, 0, len(out.Failures))
		for _, f := range out.Failures {
			errs = append(errs, f)
		}
		return out, fmt.Errorf("%w: %w", ErrNoCandidates, errors.Join(errs...))
	}
	return out, nil
}

// Candidates is Propose for msgs (and the request's temperature, nil if it
// named none): the candidates of the members that answered and the
// members that gave none, or an error when none answered. It makes Pool
// the responder's proposer.
func (p *Pool) Candidates(ctx context.Context, msgs []dialog.Message, temperature *float32) ([]dialog.Candidate, []dialog.Missing, error) {
	prop, err := p.Propose(ctx, Request{Messages: msgs, Temperature: temperature})
	return prop.Candidates, prop.Missing(), err
}

// track keeps a member's failing streak and reports a member that keeps
// failing: a warning for each failure, an error when the streak reaches
// FailingAfter and every FailingAfter failures after that.
func (p *Pool) track(m *Member, fail *MemberError) {
	var streak int
	m.record(func(s *Stats) {
		if fail == nil {
			s.FailingStreak, s.Failing = 0, false
			return
		}
		s.FailingStreak++
		s.Failing = p.cfg.FailingAfter > 0 && s.FailingStreak >= p.cfg.FailingAfter
		streak = s.FailingStreak
	})
	if fail == nil {
		return
	}
	p.log.Warn("pool member gave no candidate", zap.String("member", m.Name()), zap.Error(fail))
	if n := p.cfg.FailingAfter; n > 0 && streak >= n && streak%n == 0 {
		p.log.Error("pool member keeps failing", zap.String("member", m.Name()),
			zap.Int("failed_in_a_row", streak), zap.Error(fail))
	}
}

// Stats returns every member's accounting, in member order.
func (p *Pool) Stats() []Stats {
	out := make([]Stats, 0, len(p.members))
	for _, m := range p.members {
		out = append(out, m.Stats())
	}
	return out
}
