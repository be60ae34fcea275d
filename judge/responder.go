package judge

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"dialogfarm/capture"
	"dialogfarm/dialog"
)

// Proposer supplies the candidate answers to one captured request;
// *pool.Pool implements it. It fails only when there is no candidate.
type Proposer interface {
	Candidates(ctx context.Context, msgs []dialog.Message, temperature *float32) ([]dialog.Candidate, error)
}

// ResponderName is the Answer.Responder of the composed responder.
const ResponderName = "pool"

// Responder is the capture endpoint's responder made of a candidate pool
// and a judge: every member answers, the judge scores and ranks the
// candidates, and the rank-1 candidate is the answer the plugin receives,
// so the dialogue continues with it. Every candidate and verdict goes into
// the Answer, and from there into the dialogue record.
//
// It lives in judge because choosing the answer is the judge's decision;
// the pool is reached through the small Proposer interface, so pool and
// judge stay independent of each other.
type Responder struct {
	pool  Proposer
	judge *Judge
	log   *zap.Logger
	// Name is the Answer.Responder this responder records; ResponderName
	// unless set (e.g. "offline" or "openai" for a one-candidate pool).
	Name string
	// Lookup, when set, gives the chat config of a session, so the
	// subject's intent, language and locale come from the config rather
	// than being read from the request.
	Lookup func(session string) (dialog.ChatConfig, bool)
}

var _ capture.Responder = (*Responder)(nil)

// NewResponder composes pool and judge.
func NewResponder(pool Proposer, judge *Judge, log *zap.Logger) *Responder {
	return &Responder{pool: pool, judge: judge, log: log, Name: ResponderName}
}

// Respond asks the pool, judges the candidates and answers with the best.
// When judging fails the candidates are still returned (and recorded) with
// the error.
func (r *Responder) Respond(ctx context.Context, req capture.Request) (capture.Answer, error) {
	ans := capture.Answer{Responder: r.Name}
	msgs := make([]dialog.Message, 0, len(req.Messages))
	for _, m := range req.Messages {
		msgs = append(msgs, dialog.Message{Role: m.Role, Content: m.Content})
	}
	cands, err := r.pool.Candidates(ctx, msgs, req.Temperature)
	if err != nil {
		return ans, fmt.Errorf("candidates for %s#%d: %w", req.Session, req.Seq, err)
	}
	ans.Candidates = cands
	var cfg *dialog.ChatConfig
	if r.Lookup != nil {
		if c, ok := r.Lookup(req.Session); ok {
			cfg = &c
		}
	}
	subject := NewSubject(dialog.ChatRequest{Model: req.Model, Messages: msgs}, cfg)
	verdicts, err := r.judge.Judge(ctx, subject, cands)
	if err != nil {
		return ans, fmt.Errorf("judge %s#%d: %w", req.Session, req.Seq, err)
	}
	ans.Verdicts = verdicts
	best := cands[Best(verdicts)]
	ans.Text, ans.Model, ans.Offline = best.Text, best.Model, best.Offline
	r.log.Debug("answered from the pool", zap.String("session", req.Session), zap.Int("seq", req.Seq),
		zap.String("member", best.Member), zap.Float64("score", verdicts[Best(verdicts)].Score),
		zap.Int("candidates", len(cands)), zap.String("intent", subject.Intent))
	return ans, nil
}
