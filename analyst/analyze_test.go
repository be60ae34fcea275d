package analyst

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap/zaptest"

	"dialogfarm/dialog/vocab"
	"dialogfarm/internal/llmtest"
	"dialogfarm/pool"
	"dialogfarm/profiles"
)

func analyzeFixture(t *testing.T, cfg AnalyzeConfig) *Fit {
	t.Helper()
	fit, err := Analyze(context.Background(), cfg, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	return fit
}

func TestAnalyzeFixtureCounts(t *testing.T) {
	cfg := DefaultAnalyzeConfig()
	cfg.LogsPath = "testdata/logs.jsonl"
	fit := analyzeFixture(t, cfg)
	c := fit.Counts
	if c.Records != 16 || c.Sessions != 12 {
		t.Errorf("records %d sessions %d, want 16 and 12", c.Records, c.Sessions)
	}
	var badLines []int
	for _, b := range c.BadLines {
		badLines = append(badLines, b.Line)
	}
	if diff := cmp.Diff([]int{4, 15, 18}, badLines); diff != "" {
		t.Errorf("bad lines (-want +got):\n%s", diff)
	}
	if !strings.Contains(c.BadLines[1].Reason, "missing query") {
		t.Errorf("line 15 reason = %q", c.BadLines[1].Reason)
	}
	want := map[string]map[string]int{
		vocab.DimIntent:      {"explain": 4, "fix": 2, "tests": 2, "optimize": 2, "refactor": 1, "question": 1},
		vocab.DimInstruction: {"free_text": 9, "slash_command": 1, "command": 2},
		vocab.DimTrigger:     {"panel": 7, "keybinding": 2, "context_menu": 2, "palette": 1},
		vocab.DimCursor:      {"whole_function": 2, "single_line": 1, "inside_function": 4, "partial_block": 3, "idle": 1, "whole_file": 1},
		vocab.DimReference:   {"selection": 6, "enclosing_function": 4, "none": 1, "current_file": 1},
		vocab.DimLanguage:    {"python": 4, "javascript": 1, "typescript": 2, "java": 1, "go": 3},
		vocab.DimLocale:      {"en": 9, "zh": 1, "de": 1, "ru": 1},
		vocab.DimTurns:       {"1": 9, "2": 2, "3": 1},
		vocab.DimDifficulty:  {"easy": 7, "medium": 4, "hard": 1},
		vocab.DimQueryStyle:  {"terse": 7, "normal": 3, "verbose": 1, "terse_code": 1},
	}
	if diff := cmp.Diff(want, c.Dimensions); diff != "" {
		t.Errorf("dimension counts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]map[string]int{vocab.DimLanguage: {"unsupported or unknown: ext:.rs": 1}}, c.Excluded); diff != "" {
		t.Errorf("excluded (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{vocab.DimTrigger: 1, vocab.DimCursor: 1}, c.Defaulted); diff != "" {
		t.Errorf("defaulted (-want +got):\n%s", diff)
	}
	if c.Classifier != SourceKeyword || c.LabelSources[SourceKeyword] != 12 {
		t.Errorf("classifier %q sources %v", c.Classifier, c.LabelSources)
	}
	if got := fit.Profile.Target(vocab.DimLanguage)["python"]; got < 0.3635 || got > 0.3637 {
		t.Errorf("python share %v, want 4/11 (one session excluded)", got)
	}
}

func TestWriteFitRoundTrip(t *testing.T) {
	cfg := DefaultAnalyzeConfig()
	cfg.LogsPath = "testdata/logs.jsonl"
	fit := analyzeFixture(t, cfg)
	out := filepath.Join(t.TempDir(), "fitted.yaml")
	if err := WriteFit(out, fit); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(out)
	text := string(data)
	for _, want := range []string{"KEYWORD FALLBACK", "12 sessions, 16 records, 3 unusable lines", "python: 0.3636", "# 4 sessions",
		"1 sessions excluded (unsupported or unknown: ext:.rs)"} {
		if !strings.Contains(text, want) {
			t.Errorf("fitted profile lacks %q:\n%s", want, text)
		}
	}
	p, err := profiles.Load(out)
	if err != nil {
		t.Fatalf("fitted profile does not load: %v", err)
	}
	if p.Hash() != fit.Profile.Hash() {
		t.Error("fitted profile changed on reload")
	}
	var c Counts
	raw, err := os.ReadFile(CountsPath(out))
	if err != nil || json.Unmarshal(raw, &c) != nil || c.Sessions != 12 || len(c.BadLines) != 3 {
		t.Errorf("counts side file: %v %+v", err, c)
	}
	if _, err := MakePlan(p, PlanConfig{N: 50, Seed: 1}); err != nil {
		t.Errorf("plan from fitted profile: %v", err)
	}
}

func TestAnalyzeWithMapping(t *testing.T) {
	m, err := ReadMapping("testdata/mapping.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultAnalyzeConfig()
	cfg.LogsPath, cfg.Mapping = "testdata/logs_mapped.jsonl", m
	c := analyzeFixture(t, cfg).Counts
	want := map[string]map[string]int{
		vocab.DimIntent:      {"optimize": 1, "docs": 1, "generate": 1},
		vocab.DimInstruction: {"free_text": 2, "command": 1},
		vocab.DimTrigger:     {"panel": 2, "context_menu": 1},
		vocab.DimCursor:      {"partial_block": 1, "whole_function": 1, "idle": 1},
		vocab.DimReference:   {"selection": 2, "none": 1},
		vocab.DimLanguage:    {"go": 1, "python": 1, "typescript": 1},
		vocab.DimLocale:      {"en": 3},
		vocab.DimTurns:       {"1": 2, "2": 1},
		vocab.DimDifficulty:  {"easy": 2, "medium": 1},
		vocab.DimQueryStyle:  {"terse": 2, "normal": 1},
	}
	if diff := cmp.Diff(want, c.Dimensions); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	if len(c.BadLines) != 0 || c.Records != 4 {
		t.Errorf("records %d bad %v", c.Records, c.BadLines)
	}
}

func TestReadMappingRejectsUnknownField(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.yaml")
	os.WriteFile(path, []byte("fields:\n  sesion_id: sid\n"), 0o644)
	if _, err := ReadMapping(path); err == nil || !strings.Contains(err.Error(), "fields.sesion_id") {
		t.Errorf("err = %v", err)
	}
}

// labelHandler answers classification requests: each query id gets intent
// "refactor", difficulty "hard", except queries containing "garbage",
// which get an unknown intent.
func labelHandler(r llmtest.Request) llmtest.Reply {
	user := r.LastUser()
	var items []Item
	_ = json.Unmarshal([]byte(strings.TrimPrefix(user, "Queries:\n")), &items)
	var parts []string
	for _, it := range items {
		intent := "refactor"
		if strings.Contains(it.Query, "garbage") {
			intent = "dance"
		}
		parts = append(parts, fmt.Sprintf(`{"id":%q,"intent":%q,"difficulty":"hard"}`, it.ID, intent))
	}
	return llmtest.Reply{Text: "```json\n{\"labels\":[" + strings.Join(parts, ",") + "]}\n```"}
}

func TestLLMClassifierBatchesCachesAndFallsBack(t *testing.T) {
	srv := llmtest.New(t, labelHandler)
	t.Setenv("TEST_CLASSIFY_KEY", "sk-test-secret")
	cfg := DefaultClassifyConfig()
	cfg.Model = testModel(t, srv.URL, "labeller", "TEST_CLASSIFY_KEY", 2)
	cfg.BatchSize, cfg.Concurrency = 3, 2
	cfg.CachePath = filepath.Join(t.TempDir(), "cache.json")
	cls, err := NewLLMClassifier(cfg, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	items := []Item{{Query: "a"}, {Query: "b"}, {Query: "c"}, {Query: "d"}, {Query: "garbage e"}, {Query: "a"}, {Query: "fix the bug"}}
	labels, err := cls.Classify(context.Background(), items)
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	// 6 distinct queries in batches of 3 = 2 requests, plus one retry for the garbage item.
	if len(reqs) != 3 {
		t.Errorf("%d requests, want 3", len(reqs))
	}
	if got := reqs[0].Header.Get("Authorization"); got != "Bearer sk-test-secret" {
		t.Errorf("authorization header %q", got)
	}
	for i, l := range labels {
		switch {
		case items[i].Query == "garbage e":
			if l.Source != SourceKeywordUnusable {
				t.Errorf("garbage label %+v", l)
			}
		case i == 5:
			if l.Source != SourceCache || l.Intent != "refactor" {
				t.Errorf("duplicate label %+v", l)
			}
		default:
			if l.Source != SourceLLM || l.Intent != "refactor" || l.Difficulty != "hard" {
				t.Errorf("label %d = %+v", i, l)
			}
		}
	}
	// A second classifier reads the cache and sends nothing for known queries.
	cls2, err := NewLLMClassifier(cfg, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	labels2, err := cls2.Classify(context.Background(), items[:4])
	if err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("cached run sent %d new requests", n-3)
	}
	for _, l := range labels2 {
		if l.Source != SourceCache {
			t.Errorf("label %+v not from cache", l)
		}
	}
	data, _ := os.ReadFile(cfg.CachePath)
	if strings.Contains(string(data), "sk-test-secret") {
		t.Error("cache file contains the API key")
	}
}

func TestLLMClassifierErrorAfterRetries(t *testing.T) {
	srv := llmtest.New(t, func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Status: 503, Text: "down"} })
	cfg := DefaultClassifyConfig()
	cfg.Model = testModel(t, srv.URL, "m", "", 3)
	cls, err := NewLLMClassifier(cfg, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cls.Classify(context.Background(), []Item{{Query: "x"}}); err == nil {
		t.Fatal("want an error when the model keeps failing")
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("%d requests, want 1 + 2 retries", n)
	}
}

func TestAnalyzeWithModelMarksClassifier(t *testing.T) {
	srv := llmtest.New(t, labelHandler)
	cfg := DefaultAnalyzeConfig()
	cfg.LogsPath = "testdata/logs.jsonl"
	cfg.Classify.Model = testModel(t, srv.URL, "labeller", "", 2)
	fit := analyzeFixture(t, cfg)
	c := fit.Counts
	if c.Classifier != "llm:labeller" {
		t.Errorf("classifier %q", c.Classifier)
	}
	// Commands and slash commands keep their own intent: /fix, /tests, /explain.
	want := map[string]int{"refactor": 9, "fix": 1, "tests": 1, "explain": 1}
	if diff := cmp.Diff(want, c.Dimensions[vocab.DimIntent]); diff != "" {
		t.Errorf("intent (-want +got):\n%s", diff)
	}
	if c.Dimensions[vocab.DimDifficulty]["hard"] != 12 {
		t.Errorf("difficulty %v", c.Dimensions[vocab.DimDifficulty])
	}
}

// testModel is a gateway member on the fake server; keyEnv names the
// variable holding its key ("" for none).
func testModel(tb testing.TB, url, model, keyEnv string, attempts int) *pool.Member {
	tb.Helper()
	cfg := pool.DefaultMemberConfig()
	cfg.Name, cfg.BaseURL, cfg.Model, cfg.APIKeyEnv, cfg.Stream = model, url, model, keyEnv, false
	if err := cfg.ResolveKey(os.LookupEnv); err != nil {
		tb.Fatal(err)
	}
	p := pool.Policy{Retry: pool.RetryConfig{MaxAttempts: attempts, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond, MaxRetryAfter: time.Second}}
	m, err := pool.NewMember(cfg, p, nil, zaptest.NewLogger(tb))
	if err != nil {
		tb.Fatal(err)
	}
	return m
}
