package respond

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"dialogfarm/capture"
	"dialogfarm/dialog"
	"dialogfarm/judge"
)

// Proposer supplies the candidate answers to one captured request and the
// members that gave none; *pool.Pool implements it. It fails only when
// there is no candidate.
type Proposer interface {
	Candidates(ctx context.Context, msgs []dialog.Message, temperature *float32) ([]dialog.Candidate, []dialog.Missing, error)
}

// Judge scores and ranks candidates; *judge.Judge implements it.
type Judge interface {
	Judge(ctx context.Context, s judge.Subject, cands []dialog.Candidate) ([]dialog.Verdict, error)
}

// Name is the Answer.Responder of a pool-and-judge responder.
const Name = "pool"

// Responder is the capture endpoint's responder made of a candidate pool
// and a judge.
type Responder struct {
	pool  Proposer
	judge Judge
	log   *zap.Logger
	// Name is the Answer.Responder this responder records; the package's
	// Name unless set (e.g. "offline" or "openai" for a one-candidate pool).
	Name string
	// Lookup, when set, gives the chat config of a session, so the
	// subject's intent, language and locale come from the config rather
	// than being read from the request.
	Lookup func(session string) (dialog.ChatConfig, bool)
	// Reader, when set, reads the request's user message by the format
	// of the plugin that sent it (its adapter's prompt: section, chosen
	// by the config's plugin field), so the subject's query, intent,
	// language and locale come from the developer's own words; unset, the
	// whole message is taken as their words.
	Reader judge.MessageReader
}

var _ capture.Responder = (*Responder)(nil)

// New composes pool and judge.
func New(pool Proposer, judge Judge, log *zap.Logger) *Responder {
	return &Responder{pool: pool, judge: judge, log: log, Name: Name}
}

// Respond asks the pool, judges the candidates and answers with the best.
// The members that gave no candidate are recorded with their reasons.
// When judging fails (only when ctx ends: a failing judge model gives
// rules-only verdicts) the candidates are still returned, and recorded,
// with the error.
func (r *Responder) Respond(ctx context.Context, req capture.Request) (capture.Answer, error) {
	ans := capture.Answer{Responder: r.Name}
	msgs := make([]dialog.Message, 0, len(req.Messages))
	for _, m := range req.Messages {
		msgs = append(msgs, dialog.Message{Role: m.Role, Content: m.Content})
	}
	cands, missing, err := r.pool.Candidates(ctx, msgs, req.Temperature)
	ans.Missing = missing
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
	subject := judge.NewSubject(dialog.ChatRequest{Model: req.Model, Messages: msgs}, cfg, r.Reader)
	verdicts, err := r.judge.Judge(ctx, subject, cands)
	if err != nil {
		return ans, fmt.Errorf("judge %s#%d: %w", req.Session, req.Seq, err)
	}
	ans.Verdicts = verdicts
	best := cands[judge.Best(verdicts)]
	ans.Text, ans.Model, ans.Offline = best.Text, best.Model, best.Offline
	r.log.Debug("answered from the pool", zap.String("session", req.Session), zap.Int("seq", req.Seq),
		zap.String("member", best.Member), zap.Float64("score", verdicts[judge.Best(verdicts)].Score),
		zap.Int("candidates", len(cands)), zap.Int("missing", len(missing)), zap.String("intent", subject.Intent))
	return ans, nil
}
