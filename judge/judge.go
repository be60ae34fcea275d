package judge

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"

	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"dialogfarm/dialog"
	"dialogfarm/dialog/vocab"
	"dialogfarm/internal/bounds"
)

// Config configures a Judge. The judge model's endpoint is not part of it:
// the caller passes a Completer (or nil for rules-only mode).
type Config struct {
	// MaxRetries is how many times a judge model whose output stays
	// unparseable after repair is asked again.
	MaxRetries int `yaml:"max_retries" json:"max_retries"`
	// Concurrency bounds the candidates scored at once per turn.
	Concurrency int `yaml:"concurrency" json:"concurrency"`
	// Rubrics overrides the rubric of some intents (DefaultRubrics).
	Rubrics map[string]string `yaml:"rubrics" json:"rubrics,omitempty"`
	// Rules overrides rule weights or disables rules, by name.
	Rules map[string]RuleConfig `yaml:"rules" json:"rules,omitempty"`
	// Params tunes the rules' thresholds.
	Params RuleParams `yaml:"params" json:"params"`
}

// DefaultConfig is the judge's default configuration.
func DefaultConfig() Config {
	return Config{MaxRetries: 2, Concurrency: 4, Params: DefaultRuleParams()}
}

// Judge scores candidates: the LLM score (or 5 in rules-only mode) minus
// the deductions of the rules that fire, clamped to 1..5, then ranks them.
type Judge struct {
	cfg     Config
	llm     Completer
	rules   []Rule
	rubrics map[string]string
	log     *zap.Logger
	exec    Executor      // optional; see WithExecutor
	reader  MessageReader // optional; see WithReader
}

// Validate checks every number of the config against its range (NaN and
// infinities are out of every range):
//
//	max_retries 0 to 10; concurrency 1 to 64; params.min_chars 0 to
//	100000; params.max_chars.<intent> 1 to 10000000; params.verbatim_lines
//	1 to 10000; params.verbatim_share 0 to 1; rules.<rule>.weight 0 to 5
//	(a deduction from a 1-5 score; a negative one would add to it).
func (c Config) Validate() error {
	fs := []bounds.Field{
		bounds.Int("max_retries", c.MaxRetries, 0, 10),
		bounds.Int("concurrency", c.Concurrency, 1, 64),
		bounds.Int("params.min_chars", c.Params.MinChars, 0, 100_000),
		bounds.Int("params.verbatim_lines", c.Params.VerbatimLines, 1, 10_000),
		bounds.Float("params.verbatim_share", c.Params.VerbatimShare, 0, 1),
	}
	for _, intent := range slices.Sorted(maps.Keys(c.Params.MaxChars)) {
		fs = append(fs, bounds.Int("params.max_chars."+intent, c.Params.MaxChars[intent], 1, 10_000_000))
	}
	for _, name := range slices.Sorted(maps.Keys(c.Rules)) {
		if w := c.Rules[name].Weight; w != nil {
			fs = append(fs, bounds.Float("rules."+name+".weight", *w, 0, 5))
		}
	}
	return bounds.Check(fs...)
}

// New builds a Judge. With a nil llm it runs in rules-only mode and every
// verdict says so.
func New(cfg Config, llm Completer, log *zap.Logger) (*Judge, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("judge config: %w", err)
	}
	rules, err := BuildRules(cfg.Params, cfg.Rules)
	if err != nil {
		return nil, err
	}
	rubrics := DefaultRubrics()
	overrides, err := byIntent(cfg.Rubrics, "judge rubric")
	if err != nil {
		return nil, err
	}
	maps.Copy(rubrics, overrides)
	return &Judge{cfg: cfg, llm: llm, rules: rules, rubrics: rubrics, log: log}, nil
}

// WithReader makes Rejudge read recorded requests with r (the formats of
// the plugins that sent them; see NewSubject).
func (j *Judge) WithReader(r MessageReader) *Judge {
	j.reader = r
	return j
}

// RulesOnly reports whether the judge has no model.
func (j *Judge) RulesOnly() bool { return j.llm == nil }

// Judge returns one verdict per candidate, in candidate order, with Rank
// set (1 is best; see Rank). A judge model that fails (after its retries)
// gives a rules-only verdict with JudgeError saying why, so a turn keeps
// its candidates and an answer; output it could not read gives an
// unparseable verdict. Only the end of ctx is an error.
func (j *Judge) Judge(ctx context.Context, s Subject, cands []dialog.Candidate) ([]dialog.Verdict, error) {
	if s.Intent == "" {
		s.Intent = vocab.IntentQuestion
	}
	verdicts := make([]dialog.Verdict, len(cands))
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(j.cfg.Concurrency)
	for i, c := range cands {
		g.Go(func() error {
			v, err := j.verdict(ctx, s, c.Text)
			if err != nil {
				return fmt.Errorf("judge candidate %d (%s): %w", i, c.Member, err)
			}
			v.Candidate = i
			verdicts[i] = v
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	Rank(verdicts)
	return verdicts, nil
}

// verdict scores one answer.
func (j *Judge) verdict(ctx context.Context, s Subject, answer string) (dialog.Verdict, error) {
	v := dialog.Verdict{Deductions: Deductions(j.rules, s, answer)}
	if err := j.executed(ctx, s, answer, &v); err != nil {
		return v, err
	}
	base := 5
	if j.llm == nil {
		v.RulesOnly = true
		v.LLMReason = "rules-only mode: no judge model configured; the score is 5 minus rule deductions"
	} else {
		msgs, err := prompt(j.rubrics[s.Intent], s, answer)
		if err != nil {
			return v, err
		}
		got, err := score(ctx, j.llm, msgs, j.cfg.MaxRetries)
		v.JudgeModel = got.Model
		switch {
		case errors.Is(err, ErrUnparseable):
			j.log.Warn("judge output unparseable", zap.Error(err))
			v.Unparsable = true
			v.LLMReason = err.Error()
			return v, nil // Score stays 0: unscored, ranked last, never kept
		case err != nil && ctx.Err() != nil:
			return v, err
		case err != nil:
			j.log.Warn("judge model failed: rules-only verdict", zap.Error(err))
			v.RulesOnly, v.JudgeError = true, err.Error()
			v.LLMReason = "rules-only fallback: the judge model gave no score; the score is 5 minus rule deductions"
		default:
			base, v.LLMScore, v.LLMReason = got.Score, got.Score, got.Reason
		}
	}
	v.Score = FinalScore(float64(base), v.Deductions)
	return v, nil
}

// FinalScore is score minus the deductions' weights, clamped to 1..5.
func FinalScore(score float64, ds []dialog.Deduction) float64 {
	for _, d := range ds {
		score -= d.Weight
	}
	return min(max(score, 1), 5)
}

// Rank sets the verdicts' Rank fields, 1 for the best. The order is:
// higher final score first; unparseable verdicts (score 0) after every
// scored one; among equal scores, the smaller total deduction weight (the
// answer with fewer and lighter rule violations), then the higher LLM
// score (which differs only when clamping hid deductions), then the
// lower candidate index — the pool's member order, so the member listed
// first in the config is preferred. The rule is deterministic: the same
// verdicts always rank the same.
func Rank(vs []dialog.Verdict) {
	order := make([]int, len(vs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return better(vs[order[a]], vs[order[b]]) })
	for r, i := range order {
		vs[i].Rank = r + 1
	}
}

func better(a, b dialog.Verdict) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	if da, db := deducted(a), deducted(b); da != db {
		return da < db
	}
	if a.LLMScore != b.LLMScore {
		return a.LLMScore > b.LLMScore
	}
	return a.Candidate < b.Candidate
}

func deducted(v dialog.Verdict) float64 {
	var w float64
	for _, d := range v.Deductions {
		w += d.Weight
	}
	return w
}

// Best is the index of the rank-1 verdict's candidate, or -1 if there are
// no verdicts.
func Best(vs []dialog.Verdict) int {
	for _, v := range vs {
		if v.Rank == 1 {
			return v.Candidate
		}
	}
	return -1
}

// byIntent keys m by canonical intent: an older spelling ("optimise",
// "general") names the intent; a key that names none, or two keys that
// name one, are errors.
func byIntent[V any](m map[string]V, what string) (map[string]V, error) {
	out := make(map[string]V, len(m))
	from := map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		n := vocab.Intent(k)
		switch {
		case n == "":
			return nil, fmt.Errorf("%s for %q: no such intent (have %v)", what, k, vocab.Values(vocab.DimIntent))
		case from[n] != "":
			return nil, fmt.Errorf("%s for %q: %q names the same intent, %s", what, k, from[n], n)
		}
		from[n] = k
		out[n] = m[k]
	}
	return out, nil
}
