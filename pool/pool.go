package pool

import (
	"context"
	"errors"
	"fmt"

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

// New builds a pool from cfg, whose keys must be resolved (ResolveKeys).
// The cache folder is created when CacheDir is set.
func New(cfg Config, log *zap.Logger) (*Pool, error) {
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
	for _, mc := range cfg.Members {
		m, err := NewMember(mc, cfg.Retry, p.cache, log)
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

// Proposal is the outcome of asking every member: the candidates in member
// order, and the members that failed with their reasons.
type Proposal struct {
	Candidates []dialog.Candidate
	Failures   []*MemberError
}

// Propose asks every member concurrently (at most Config.Concurrency at
// once) and waits for all of them. Members fail independently: the
// proposal holds whatever came back. It is an error wrapping
// ErrNoCandidates, with every member's reason, when nothing did, and ctx's
// error when ctx ended.
func (p *Pool) Propose(ctx context.Context, req Request) (Proposal, error) {
	cands := make([]*dialog.Candidate, len(p.members))
	fails := make([]*MemberError, len(p.members))
	var g errgroup.Group // not WithContext: one member's failure must not cancel the others
	if p.cfg.Concurrency > 0 {
		g.SetLimit(p.cfg.Concurrency)
	}
	for i, m := range p.members {
		g.Go(func() error {
			c, err := m.Ask(ctx, req)
			if err != nil {
				var me *MemberError
				if !errors.As(err, &me) {
					me = &MemberError{Member: m.Name(), Err: err}
				}
				fails[i] = me
				return nil
			}
			cands[i] = &c
			return nil
		})
	}
	_ = g.Wait() // the goroutines never return an error
	var out Proposal
	for i, m := range p.members {
		if cands[i] != nil {
			out.Candidates = append(out.Candidates, *cands[i])
		}
		if fails[i] != nil {
			out.Failures = append(out.Failures, fails[i])
		}
		if ctx.Err() == nil { // a cancelled request says nothing about the member
			p.track(m, fails[i])
		}
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
// named none) without the failures, which are logged and counted in Stats:
// the candidates of the members that answered, or an error when none did.
// It makes Pool a judge.Proposer.
func (p *Pool) Candidates(ctx context.Context, msgs []dialog.Message, temperature *float32) ([]dialog.Candidate, error) {
	prop, err := p.Propose(ctx, Request{Messages: msgs, Temperature: temperature})
	return prop.Candidates, err
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
