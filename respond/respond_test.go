package respond

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"go.uber.org/zap/zaptest"

	"dialogfarm/capture"
	"dialogfarm/dialog"
	"dialogfarm/internal/llmtest"
	"dialogfarm/judge"
	"dialogfarm/pool"
)

const goCode = `func WordCount(s string) map[string]int {
	counts := map[string]int{}
	for _, w := range strings.Fields(s) {
		counts[strings.ToLower(w)]++
	}
	return counts
}`

func fastRetry() pool.RetryConfig {
	return pool.RetryConfig{MaxAttempts: 2, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond, MaxRetryAfter: time.Second}
}

// threeModelPool is a pool of three members on one fake server; each
// model answers differently.
func threeModelPool(tb testing.TB, answers map[string]string) (*pool.Pool, *llmtest.Server) {
	tb.Helper()
	s := llmtest.New(tb, func(r llmtest.Request) llmtest.Reply {
		if a, ok := answers[r.Model]; ok {
			return llmtest.Reply{Text: a}
		}
		return llmtest.Reply{Status: 503, Text: "model " + r.Model + " is down"}
	})
	cfg := pool.DefaultConfig()
	cfg.CacheDir = ""
	cfg.Retry = fastRetry()
	for _, name := range []string{"coder-a", "coder-b", "coder-c"} {
		m := pool.DefaultMemberConfig()
		m.Name, m.BaseURL, m.Model, m.Timeout = name, s.URL, name, 5*time.Second
		cfg.Members = append(cfg.Members, m)
	}
	p, err := pool.New(cfg, zaptest.NewLogger(tb))
	if err != nil {
		tb.Fatal(err)
	}
	return p, s
}

// judgeOn is a judge whose model is the fake server s.
func judgeOn(tb testing.TB, s *llmtest.Server) *judge.Judge {
	tb.Helper()
	cfg := pool.DefaultMemberConfig()
	cfg.Name, cfg.BaseURL, cfg.Model, cfg.Timeout, cfg.Stream = "judge", s.URL, "judge-model", 5*time.Second, false
	m, err := pool.NewMember(cfg, pool.Policy{Retry: fastRetry()}, nil, zaptest.NewLogger(tb))
	if err != nil {
		tb.Fatal(err)
	}
	return newJudge(tb, m)
}

func newJudge(tb testing.TB, llm judge.Completer) *judge.Judge {
	tb.Helper()
	j, err := judge.New(judge.DefaultConfig(), llm, zaptest.NewLogger(tb))
	if err != nil {
		tb.Fatal(err)
	}
	return j
}

// scoringJudge gives 5 to answers mentioning "lower-case", 3 otherwise.
func scoringJudge(tb testing.TB) *judge.Judge {
	tb.Helper()
	return judgeOn(tb, llmtest.New(tb, func(r llmtest.Request) llmtest.Reply {
		if strings.Contains(r.LastUser(), "lower-case") {
			return llmtest.Reply{Text: `{"score": 5, "reason": "mentions case folding"}`}
		}
		return llmtest.Reply{Text: `{"score": 3, "reason": "misses case folding"}`}
	}))
}

// The pool, its members and the judge satisfy the consumer-owned interfaces.
var (
	_ Proposer        = (*pool.Pool)(nil)
	_ Proposer        = capture.Offline{}
	_ Judge           = (*judge.Judge)(nil)
	_ judge.Completer = (*pool.Member)(nil)
)

func TestResponderThroughCaptureEndpoint(t *testing.T) {
	best := "It counts words after it lower-cases them, so Go and go are one word."
	p, _ := threeModelPool(t, map[string]string{
		"coder-a": "It counts the words in s and returns a map of counts.",
		"coder-b": best,
		"coder-c": "Counts words in s, returning how many times each one appears.",
	})
	r := New(p, scoringJudge(t), zaptest.NewLogger(t))
	srv, err := capture.Listen(t.Context(), capture.DefaultConfig(), r, nil, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })

	// The plugin's side: a streaming request to the session's base URL.
	oc := openai.DefaultConfig("")
	oc.BaseURL = srv.BaseURL("sess-1")
	client := openai.NewClientWithConfig(oc)
	user := "File: textutil/textutil.go\nLanguage: go\nCursor: line 3, column 1\nSelected code (lines 1-7):\n```go\n" + goCode + "\n```\n\nWhat does this do?"
	stream, err := client.CreateChatCompletionStream(t.Context(), openai.ChatCompletionRequest{
		Model: "ask", Stream: true,
		Messages: []openai.ChatCompletionMessage{{Role: "system", Content: "You are Ask."}, {Role: "user", Content: user}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var shown strings.Builder
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(chunk.Choices) > 0 {
			shown.WriteString(chunk.Choices[0].Delta.Content)
		}
	}
	stream.Close()
	if shown.String() != best {
		t.Errorf("the plugin was shown %q, want the top-ranked %q", shown.String(), best)
	}

	ex, err := srv.Next(t.Context(), "sess-1")
	if err != nil {
		t.Fatal(err)
	}
	if ex.Responder != Name || ex.Model != "coder-b" || ex.Answer != best || len(ex.Candidates) != 3 || len(ex.Verdicts) != 3 {
		t.Fatalf("recorded exchange: responder %q model %q answer %q, %d candidates, %d verdicts",
			ex.Responder, ex.Model, ex.Answer, len(ex.Candidates), len(ex.Verdicts))
	}
	if v := ex.Verdicts[1]; v.Rank != 1 || v.Score != 5 || ex.Candidates[v.Candidate].Member != "coder-b" {
		t.Errorf("verdict of the shown answer: %+v", v)
	}
	// Equal scores of 3 for a and c: member order breaks the tie.
	if ex.Verdicts[0].Rank != 2 || ex.Verdicts[2].Rank != 3 {
		t.Errorf("tie ranks: a %d, c %d", ex.Verdicts[0].Rank, ex.Verdicts[2].Rank)
	}
}

func TestResponderWithFailingMemberAndLookup(t *testing.T) {
	p, _ := threeModelPool(t, map[string]string{
		"coder-a": "这个函数先把每个单词转成小写 (lower-case)，再统计出现次数。",
		"coder-c": "It lower-cases every word and counts them.",
	})
	r := New(p, scoringJudge(t), zaptest.NewLogger(t))
	r.Lookup = func(session string) (dialog.ChatConfig, bool) {
		return dialog.ChatConfig{Intent: "explain", Language: "go", Locale: "zh"}, session == "s1"
	}
	ans, err := r.Respond(t.Context(), capture.Request{Session: "s1", Seq: 1, Messages: []capture.Message{
		{Role: "user", Content: "解释一下这个函数的作用"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(ans.Candidates) != 2 || ans.Model != "coder-a" {
		t.Fatalf("answer from %q with %d candidates (coder-b is down)", ans.Model, len(ans.Candidates))
	}
	if d := ans.Verdicts[1].Deductions; len(d) != 1 || d[0].Rule != judge.RuleLocaleMismatch {
		t.Errorf("the English answer to a Chinese query: deductions %+v", d)
	}
}

func TestResponderNoCandidates(t *testing.T) {
	p, _ := threeModelPool(t, nil)
	r := New(p, newJudge(t, nil), zaptest.NewLogger(t))
	ans, err := r.Respond(t.Context(), capture.Request{Session: "s", Seq: 2, Messages: []capture.Message{{Role: "user", Content: "hi"}}})
	if !errors.Is(err, pool.ErrNoCandidates) || ans.Responder != Name {
		t.Fatalf("err = %v, responder %q", err, ans.Responder)
	}
	for _, m := range []string{"coder-a", "coder-b", "coder-c", "is down"} {
		if !strings.Contains(err.Error(), m) {
			t.Errorf("error %q does not give %s's reason", err, m)
		}
	}
}
