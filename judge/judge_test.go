package judge

import (
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"dialogfarm/dialog"
	"dialogfarm/dialog/vocab"
	"dialogfarm/internal/golden"
	"dialogfarm/internal/llmtest"
	"dialogfarm/pool"
)

// judgeModel is a pool member talking to s, as the CLI builds the judge's
// Completer; retries are fast.
func judgeModel(tb testing.TB, s *llmtest.Server) *pool.Member {
	tb.Helper()
	cfg := pool.DefaultMemberConfig()
	cfg.Name, cfg.BaseURL, cfg.Model, cfg.Timeout = "judge", s.URL, "judge-model", 5*time.Second
	zero := float32(0)
	cfg.Temperature = &zero
	m, err := pool.NewMember(cfg, pool.Policy{Retry: pool.RetryConfig{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond, MaxRetryAfter: time.Second}}, nil, zaptest.NewLogger(tb))
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// answerIn is the candidate answer inside a judge prompt.
func answerIn(r llmtest.Request) string {
	u := r.LastUser()
	for i := len(r.Messages) - 1; i >= 0; i-- { // a retry's last user message is the correction
		if strings.Contains(r.Messages[i].Content, "<<<ANSWER\n") {
			u = r.Messages[i].Content
			break
		}
	}
	_, rest, _ := strings.Cut(u, "<<<ANSWER\n")
	ans, _, _ := strings.Cut(rest, "\nANSWER>>>")
	return ans
}

func newJudge(tb testing.TB, llm Completer) *Judge {
	tb.Helper()
	j, err := New(DefaultConfig(), llm, zaptest.NewLogger(tb))
	if err != nil {
		tb.Fatal(err)
	}
	return j
}

const goodExplain = "It counts how often each word occurs in s, ignoring case: strings.Fields splits on whitespace and each lower-cased word's count goes up by one."

func TestJudgeRepairsMalformedJSON(t *testing.T) {
	outputs := map[string]string{
		"plain":           `{"score": 4, "reason": "good"}`,
		"fenced":          "```json\n{\"score\": 5, \"reason\": \"great\"}\n```",
		"prose around":    "Here is my verdict: {\"score\": \"3\", \"reason\": \"ok {really}\"} Thanks!",
		"trailing comma":  `{"score": 2.0, "reason": "weak",}`,
		"single quotes":   `{'score': 4, 'reason': 'fine'}`,
		"out of range":    `{"score": 7, "reason": "too good"}`,
		"no object":       `I would give it a four.`,
		"fractional":      `{"score": 3.5, "reason": "between"}`,
		"missing score":   `{"reason": "forgot"}`,
		"unterminated":    `{"score": 4, "reason": "cut`,
		"nested in array": `[{"score": 1, "reason": "bad"}]`,
	}
	want := map[string]int{"plain": 4, "fenced": 5, "prose around": 3, "trailing comma": 2, "single quotes": 4, "nested in array": 1}
	for name, out := range outputs {
		t.Run(name, func(t *testing.T) {
			s, reason, err := parseScore(out)
			if w, ok := want[name]; ok {
				if err != nil || s != w || reason == "" {
					t.Errorf("parseScore = %d, %q, %v; want %d", s, reason, err, w)
				}
			} else if err == nil {
				t.Errorf("parseScore(%q) = %d, accepted", out, s)
			}
		})
	}
}

func TestJudgeRetriesThenUnparseable(t *testing.T) {
	s := llmtest.New(t, func(r llmtest.Request) llmtest.Reply {
		switch {
		case strings.Contains(answerIn(r), "retry-me") && len(r.Messages) > 2:
			return llmtest.Reply{Text: `{"score": 5, "reason": "fine on second try"}`}
		default:
			return llmtest.Reply{Text: "Score: excellent!!"}
		}
	})
	j := newJudge(t, judgeModel(t, s))
	subj := pluginSubject(t, "go", goCode, "Explain this code please.")
	vs, err := j.Judge(t.Context(), subj, []dialog.Candidate{{Member: "a", Text: goodExplain + " never-readable"}, {Member: "b", Text: goodExplain + " retry-me"}})
	if err != nil {
		t.Fatal(err)
	}
	bad, good := vs[0], vs[1]
	if !bad.Unparsable || bad.Score != 0 || bad.LLMScore != 0 || !strings.Contains(bad.LLMReason, "unparseable") || bad.Rank != 2 {
		t.Errorf("unreadable verdict = %+v", bad)
	}
	if good.Unparsable || good.LLMScore != 5 || good.Score != 5 || good.Rank != 1 || good.JudgeModel != "judge-model" {
		t.Errorf("retried verdict = %+v", good)
	}
	// candidate a: 1 + MaxRetries(2) asks; candidate b: 2 asks.
	if n := len(s.Requests()); n != 5 {
		t.Errorf("%d judge calls, want 5", n)
	}
	for _, r := range s.Requests() {
		if len(r.Messages) > 2 && !strings.Contains(r.LastUser(), "could not be read") {
			t.Errorf("a retry does not say what was wrong: %q", r.LastUser())
		}
	}
}

func TestJudgeScoresMinusDeductions(t *testing.T) {
	s := llmtest.New(t, func(r llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: `{"score": 5, "reason": "judge liked it"}`}
	})
	j := newJudge(t, judgeModel(t, s))
	subj := pluginSubject(t, "go", goCode, "这个函数是做什么的？请解释。")
	cands := []dialog.Candidate{
		{Member: "en", Text: goodExplain}, // locale_mismatch −2 → 3
		{Member: "zh", Text: "这个函数统计字符串中每个单词出现的次数，先用 strings.Fields 按空白拆分，再把每个单词转成小写后计数。"}, // 5
		{Member: "empty", Text: "  "}, // near_empty −4, → clamped 1
	}
	vs, err := j.Judge(t.Context(), subj, cands)
	if err != nil {
		t.Fatal(err)
	}
	got := []float64{vs[0].Score, vs[1].Score, vs[2].Score}
	if got[0] != 3 || got[1] != 5 || got[2] != 1 {
		t.Fatalf("scores %v, want [3 5 1]; verdicts %+v", got, vs)
	}
	if vs[1].Rank != 1 || vs[0].Rank != 2 || vs[2].Rank != 3 || Best(vs) != 1 {
		t.Errorf("ranks %d %d %d", vs[0].Rank, vs[1].Rank, vs[2].Rank)
	}
	if d := vs[0].Deductions; len(d) != 1 || d[0].Rule != RuleLocaleMismatch || d[0].Weight != 2 || d[0].Reason == "" {
		t.Errorf("deductions of the English answer: %+v", d)
	}
	// The judge saw the exact request and the intent's rubric.
	p := s.Requests()[0].LastUser()
	if !strings.Contains(p, "Intent: explain") || !strings.Contains(p, "The developer asked what the code does") ||
		!strings.Contains(p, `"content": "You are Ask, a coding assistant."`) {
		t.Errorf("judge prompt lacks intent, rubric or request:\n%s", p)
	}
}

func TestRulesOnlyMode(t *testing.T) {
	j := newJudge(t, nil)
	vs, err := j.Judge(t.Context(), pluginSubject(t, "go", goCode, "Fix the bug."), []dialog.Candidate{
		{Text: "Fixed:\n```go\nfunc WordCount(s string) map[string]int { return nil }\n```"},
		{Text: "Lower-case before splitting and it works."},
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vs {
		if !v.RulesOnly || !strings.Contains(v.LLMReason, "rules-only") || v.LLMScore != 0 || v.JudgeModel != "" {
			t.Errorf("verdict %d does not say rules-only: %+v", i, v)
		}
	}
	if vs[0].Score != 5 || vs[1].Score != 3 || vs[0].Rank != 1 {
		t.Errorf("rules-only scores %v %v (want 5, 3 for missing code)", vs[0].Score, vs[1].Score)
	}
}

func TestRankTies(t *testing.T) {
	d := func(w float64) []dialog.Deduction { return []dialog.Deduction{{Rule: "r", Weight: w}} }
	cases := []struct {
		name string
		vs   []dialog.Verdict
		want []int // ranks in candidate order
	}{
		{"higher score first", []dialog.Verdict{{Score: 3}, {Score: 5}, {Score: 4}}, []int{3, 1, 2}},
		{"tie: fewer deductions", []dialog.Verdict{{Score: 4, LLMScore: 5, Deductions: d(1)}, {Score: 4, LLMScore: 4}}, []int{2, 1}},
		{"tie after clamping: higher llm score", []dialog.Verdict{{Score: 1, LLMScore: 2, Deductions: d(4)}, {Score: 1, LLMScore: 3, Deductions: d(4)}}, []int{2, 1}},
		{"full tie: member order", []dialog.Verdict{{Score: 5, LLMScore: 5}, {Score: 5, LLMScore: 5}, {Score: 5, LLMScore: 5}}, []int{1, 2, 3}},
		{"unparseable last", []dialog.Verdict{{Score: 0, Unparsable: true}, {Score: 1, LLMScore: 1}}, []int{2, 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for i := range c.vs {
				c.vs[i].Candidate = i
			}
			Rank(c.vs)
			for i, v := range c.vs {
				if v.Rank != c.want[i] {
					t.Errorf("candidate %d rank %d, want %d", i, v.Rank, c.want[i])
				}
			}
		})
	}
}

func TestJudgePromptGolden(t *testing.T) {
	subj := pluginSubject(t, "go", goCode, "Explain this code please.")
	msgs, err := prompt(DefaultRubrics()[subj.Intent], subj, goodExplain)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString("=== " + m.Role + "\n" + m.Content + "\n")
	}
	golden.Check(t, filepath.Join("testdata", "prompt_explain.golden"), []byte(b.String()))
}

func TestUnknownRubricIntent(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Rubrics = map[string]string{"poetry": "rhymes"}
	if _, err := New(cfg, nil, zaptest.NewLogger(t)); err == nil {
		t.Error("a rubric for an unknown intent was accepted")
	}
	cfg.Rubrics = map[string]string{"optimize": "custom optimise rubric"}
	j, err := New(cfg, nil, zaptest.NewLogger(t))
	if err != nil || j.rubrics[vocab.IntentOptimize] != "custom optimise rubric" {
		t.Errorf("rubric override: %v", err)
	}
	// A config written for the judge's older spellings still loads.
	cfg.Rubrics = map[string]string{"optimise": "old optimise", "general": "old general"}
	j, err = New(cfg, nil, zaptest.NewLogger(t))
	if err != nil || j.rubrics[vocab.IntentOptimize] != "old optimise" || j.rubrics[vocab.IntentQuestion] != "old general" {
		t.Errorf("older spellings: %v", err)
	}
	cfg.Rubrics = map[string]string{"optimise": "a", "optimize": "b"}
	if _, err := New(cfg, nil, zaptest.NewLogger(t)); err == nil || !strings.Contains(err.Error(), "names the same intent") {
		t.Errorf("two spellings of one intent: err = %v", err)
	}
	cfg.Rubrics = nil
	cfg.Params.MaxChars = map[string]int{"general": 10}
	j, err = New(cfg, nil, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	ds := Deductions(j.rules, Subject{Intent: vocab.IntentQuestion}, "an answer of more than ten characters")
	if len(ds) != 1 || ds[0].Rule != RuleTooLong {
		t.Errorf("max_chars under the older spelling general: deductions %v", ds)
	}
}

func TestConfigRanges(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	cfg := DefaultConfig()
	neg, nan := -100.0, math.NaN()
	cfg.MaxRetries, cfg.Concurrency = -3, 0
	cfg.Params.MinChars, cfg.Params.VerbatimShare, cfg.Params.VerbatimLines = -5, 7, 0
	cfg.Params.MaxChars = map[string]int{vocab.IntentExplain: 0}
	cfg.Rules = map[string]RuleConfig{RuleTooLong: {Weight: &neg}, RuleRefusal: {Weight: &nan}}
	_, err := New(cfg, nil, zaptest.NewLogger(t))
	for _, want := range []string{
		"max_retries is -3, want 0 to 10",
		"concurrency is 0, want 1 to 64",
		"params.min_chars is -5, want 0 to 100000",
		"params.verbatim_lines is 0, want 1 to 10000",
		"params.verbatim_share is 7, want 0 to 1",
		"params.max_chars.explain is 0, want 1 to 10000000",
		"rules.too_long.weight is -100, want 0 to 5",
		"rules.refusal_boilerplate.weight is NaN, want 0 to 5",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("New: %v\nlacks %q", err, want)
		}
	}
}
