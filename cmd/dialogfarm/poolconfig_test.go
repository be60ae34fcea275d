package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/viper"
	"go.uber.org/zap/zaptest"

	"dialogfarm/capture"
	"dialogfarm/internal/llmtest"
	"dialogfarm/judge"
	"dialogfarm/pool"
)

// poolTestApp is an app whose --set flag values are sets.
func poolTestApp(tb testing.TB, sets ...string) *app {
	tb.Helper()
	a := &app{v: viper.New(), log: zaptest.NewLogger(tb), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}
	a.v.Set("set", sets)
	return a
}

func writePoolYAML(tb testing.TB, text string) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "dialogfarm.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

func TestLoadExampleConfig(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-example-key")
	s, err := poolTestApp(t).loadPoolSettings(filepath.Join("..", "..", "dialogfarm.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.resolveKeys(true); err != nil {
		t.Fatal(err)
	}
	if n := len(s.Pool.Members); n != 3 {
		t.Fatalf("%d members, want 3", n)
	}
	gpt, qwen, ds := s.Pool.Members[0], s.Pool.Members[1], s.Pool.Members[2]
	if gpt.Name != "gpt-4o-mini" || gpt.RPM != 500 || gpt.TPM != 200000 || gpt.InputPrice != 0.15 || gpt.Timeout != 2*time.Minute || gpt.APIKey != "sk-example-key" {
		t.Errorf("gpt member %+v", gpt)
	}
	if qwen.APIKeyEnv != "" || qwen.APIKey != "" || !qwen.Stream || qwen.Temperature != nil || qwen.Timeout != 3*time.Minute {
		t.Errorf("qwen member (defaults for omitted fields) %+v", qwen)
	}
	if ds.BaseURL != "http://127.0.0.1:11434/v1" || ds.MaxConcurrency != 2 {
		t.Errorf("ollama member %+v", ds)
	}
	if s.Pool.Retry.MaxAttempts != 4 || s.Pool.Retry.MaxRetryAfter != 2*time.Minute || s.Pool.CacheDir != "cache" {
		t.Errorf("pool %+v", s.Pool)
	}
	if s.Pool.Quorum != 0 || s.Pool.Deadline != 0 || s.Pool.Breaker != (pool.BreakerConfig{Failures: 5, Cooldown: time.Minute}) {
		t.Errorf("pool fault knobs %+v", s.Pool)
	}
	if err := s.Pool.Validate(); err != nil {
		t.Errorf("the example's pool does not validate: %v", err)
	}
	jm := s.JudgeModel
	if jm == nil || jm.Model != "gpt-4o" || jm.Name != "judge" || *jm.Temperature != 0 || jm.Stream || jm.APIKey != "sk-example-key" {
		t.Fatalf("judge endpoint %+v", jm)
	}
	if w := s.Judge.Rules["too_long"].Weight; w == nil || *w != 1 || s.Judge.Params.MaxChars["explain"] != 6000 || s.Judge.Params.VerbatimShare != 0.6 {
		t.Errorf("judge config %+v", s.Judge)
	}
	if _, err := judge.New(s.Judge, nil, zaptest.NewLogger(t)); err != nil {
		t.Errorf("the example's judge config does not build: %v", err)
	}
}

func TestPoolConfigOverrides(t *testing.T) {
	path := writePoolYAML(t, `
pool:
  retry: {max_attempts: 5}
  members:
    - {name: coder-a, base_url: "http://127.0.0.1:1/v1", model: a}
    - {name: coder-b, base_url: "http://127.0.0.1:2/v1", model: b, rpm: 10}
judge:
  params: {min_chars: 5}
`)
	t.Setenv("DIALOGFARM_POOL_RETRY_MAX_ATTEMPTS", "2")
	t.Setenv("DIALOGFARM_POOL_MEMBERS_CODER_B_RPM", "30")
	t.Setenv("DIALOGFARM_POOL_MEMBERS_0_TEMPERATURE", "0.5")
	t.Setenv("DIALOGFARM_POOL_MEMBERS_1_TIMEOUT", "45s")
	t.Setenv("DIALOGFARM_JUDGE_PARAMS_MAX_CHARS_EXPLAIN", "100")
	t.Setenv("DIALOGFARM_JUDGE_RULES_TOO_LONG_WEIGHT", "0.5")
	t.Setenv("DIALOGFARM_JUDGE_ENDPOINT_MODEL", "judge-x")
	t.Setenv("DIALOGFARM_JUDGE_ENDPOINT_BASE_URL", "http://127.0.0.1:3/v1")
	t.Setenv("DIALOGFARM_POOL_DEADLINE", "20s")
	t.Setenv("DIALOGFARM_POOL_BREAKER_COOLDOWN", "30s")
	a := poolTestApp(t, "pool.retry.max_attempts=3", "pool.members.coder-a.model=a2", "judge.rules.code_language_mismatch.disabled=true",
		"pool.quorum=1", "pool.breaker.failures=2")
	s, err := a.loadPoolSettings(path)
	if err != nil {
		t.Fatal(err)
	}
	a0, b := s.Pool.Members[0], s.Pool.Members[1]
	if s.Pool.Retry.MaxAttempts != 3 {
		t.Errorf("max_attempts %d: file 5 < env 2 < --set 3", s.Pool.Retry.MaxAttempts)
	}
	if b.RPM != 30 || b.Timeout != 45*time.Second || a0.Temperature == nil || *a0.Temperature != 0.5 || a0.Model != "a2" {
		t.Errorf("members after overrides: %+v / %+v", a0, b)
	}
	if s.Judge.Params.MaxChars["explain"] != 100 || s.Judge.Params.MinChars != 5 || *s.Judge.Rules["too_long"].Weight != 0.5 ||
		!s.Judge.Rules["code_language_mismatch"].Disabled {
		t.Errorf("judge after overrides: %+v", s.Judge)
	}
	if s.Pool.Quorum != 1 || s.Pool.Deadline != 20*time.Second || s.Pool.Breaker != (pool.BreakerConfig{Failures: 2, Cooldown: 30 * time.Second}) {
		t.Errorf("fault knobs after overrides: quorum %d deadline %v breaker %+v", s.Pool.Quorum, s.Pool.Deadline, s.Pool.Breaker)
	}
	if s.JudgeModel == nil || s.JudgeModel.Model != "judge-x" || s.JudgeModel.MaxTokens != 300 {
		t.Errorf("judge endpoint from env: %+v", s.JudgeModel)
	}
}

func TestPoolConfigErrors(t *testing.T) {
	cases := []struct {
		name, yaml string
		sets       []string
		want       string
	}{
		{"typo", "pool: {retry: {max_attempt: 3}}", nil, "max_attempt"},
		{"bad duration", "pool: {members: [{name: a, timeout: soon}]}", nil, "timeout"},
		{"unknown member", "pool: {members: [{name: a}]}", []string{"pool.members.b.model=x"}, `no pool member "b"`},
		{"bad set", "pool: {}", []string{"model"}, "want path=value"},
		{"outside sections", "pool: {}", []string{"drive.x=1"}, "want pool."},
		{"bad deadline", "pool: {deadline: soon}", nil, "deadline"},
		{"breaker typo", "pool: {breaker: {failure: 3}}", nil, "failure"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := poolTestApp(t, c.sets...).loadPoolSettings(writePoolYAML(t, c.yaml))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want it to mention %q", err, c.want)
			}
		})
	}
}

func TestMissingKeyNamesTheVariable(t *testing.T) {
	s, err := poolTestApp(t).loadPoolSettings(writePoolYAML(t, `
pool: {members: [{name: a, base_url: "https://x/v1", model: m, api_key_env: DIALOGFARM_TEST_NO_SUCH_KEY}]}
judge: {endpoint: {base_url: "https://x/v1", model: j, api_key_env: DIALOGFARM_TEST_NO_JUDGE_KEY}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.resolveKeys(false); err == nil || strings.Contains(err.Error(), "NO_SUCH_KEY") || !strings.Contains(err.Error(), "DIALOGFARM_TEST_NO_JUDGE_KEY") {
		t.Errorf("judge-only key check: %v", err)
	}
	if _, err := newPoolResponder(s, t.TempDir(), nil, zaptest.NewLogger(t)); err == nil || !strings.Contains(err.Error(), "DIALOGFARM_TEST_NO_SUCH_KEY") {
		t.Errorf("pool key check: %v", err)
	}
}

func TestNewPoolResponder(t *testing.T) {
	models := llmtest.New(t, func(r llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: r.Model + " says: it adds the numbers of the slice and returns the total."}
	})
	t.Setenv("POOL_TEST_KEY", "sk-pool-test")
	path := writePoolYAML(t, `
pool:
  retry: {base_delay: 1ms, max_delay: 2ms}
  members:
    - {name: m1, base_url: "`+models.URL+`", model: one, api_key_env: POOL_TEST_KEY}
    - {name: m2, base_url: "`+models.URL+`", model: two}
    - {name: m3, base_url: "`+models.URL+`", model: three}
`)
	s, err := poolTestApp(t).loadPoolSettings(path)
	if err != nil {
		t.Fatal(err)
	}
	runDir := t.TempDir()
	r, err := newPoolResponder(s, runDir, nil, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	var _ capture.Responder = r
	req := capture.Request{Session: "s", Seq: 1, Messages: []capture.Message{{Role: "user", Content: "What does Sum do?"}}}
	for range 2 {
		ans, err := r.Respond(context.Background(), req)
		if err != nil || len(ans.Candidates) != 3 || len(ans.Verdicts) != 3 || !ans.Verdicts[0].RulesOnly || ans.Model != "one" {
			t.Fatalf("answer %+v, %v", ans, err)
		}
	}
	if n := len(models.Requests()); n != 3 {
		t.Errorf("%d model calls for two identical requests, want 3 (the second is cached)", n)
	}
	if entries, _ := filepath.Glob(filepath.Join(runDir, "cache", "*", "*.json")); len(entries) != 3 {
		t.Errorf("cache under the run folder holds %d entries, want 3", len(entries))
	}
	var out bytes.Buffer
	r.report(&out)
	if !strings.Contains(out.String(), "m1") || !strings.Contains(out.String(), "cache hits") || strings.Contains(out.String(), "sk-pool-test") {
		t.Errorf("report:\n%s", out.String())
	}
}

// TestSetFlagThroughCobra passes --set through cobra and viper as the
// commands do: values keep their commas and "=" signs.
func TestSetFlagThroughCobra(t *testing.T) {
	a := &app{v: viper.New(), log: zaptest.NewLogger(t), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}
	cmd := judgeCmd(a)
	if err := cmd.ParseFlags([]string{"--set", "judge.rubrics.explain=Be strict, very strict; a=b", "--set", "judge.max_retries=5"}); err != nil {
		t.Fatal(err)
	}
	if err := a.v.BindPFlags(cmd.Flags()); err != nil {
		t.Fatal(err)
	}
	s, err := a.loadPoolSettings(writePoolYAML(t, "judge: {max_retries: 1}"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Judge.Rubrics["explain"] != "Be strict, very strict; a=b" || s.Judge.MaxRetries != 5 {
		t.Errorf("rubric %q, max_retries %d", s.Judge.Rubrics["explain"], s.Judge.MaxRetries)
	}
}

// A process whose models took no call (a run the farm's workers drove)
// prints one line saying so, not a table of zeros; one that called them,
// the table.
func TestModelStatsOfAProcessThatCalledNone(t *testing.T) {
	var none, some bytes.Buffer
	writeStats(&none, []pool.Stats{{Member: "coder-a", Model: "m1"}})
	if got := none.String(); !strings.HasPrefix(got, "models: no call from this process") || strings.Contains(got, "coder-a") {
		t.Errorf("stats of no call:\n%s", got)
	}
	writeStats(&some, []pool.Stats{{Member: "coder-a", Model: "m1", Calls: 3, Answers: 3, LimitWait: 12.34}, {Member: "judge", Model: "j"}})
	if got := some.String(); !strings.Contains(got, "limit wait s") || !strings.Contains(got, "12.3") || !strings.Contains(got, "judge") {
		t.Errorf("stats of 3 calls:\n%s", got)
	}
}
