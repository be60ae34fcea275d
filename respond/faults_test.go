package respond

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"dialogfarm/capture"
	"dialogfarm/dialog"
	"dialogfarm/internal/llmtest"
	"dialogfarm/judge"
	"dialogfarm/pool"
)

const echoedKey = "sk-live-RespondEcho0123456789SECRET"

func noKey(tb testing.TB, where, text string) {
	tb.Helper()
	if strings.Contains(text, echoedKey) {
		tb.Errorf("%s holds the API key: %s", where, text)
	}
}

func noKeyInLogs(tb testing.TB, logs *observer.ObservedLogs) {
	tb.Helper()
	if logs.Len() == 0 {
		tb.Error("nothing was logged: the log check proves nothing")
	}
	for _, e := range logs.All() {
		noKey(tb, "log line "+e.Message, e.Message+" "+fmt.Sprint(e.ContextMap()))
	}
}

// A judge model that fails (500, 429, 401, each echoing the key) does not
// fail the turn: every candidate is kept, every verdict falls back to the
// rules and is marked with the model's error, the best candidate still
// answers, and the key is in no verdict and no log line.
func TestJudgeModelFailureFallsBackToRules(t *testing.T) {
	p, _ := threeModelPool(t, map[string]string{
		"coder-a": "It counts words.",
		"coder-b": "It counts how often each lower-cased word occurs in s.",
		"coder-c": "Counts words in s.",
	})
	judgeSrv := llmtest.New(t, llmtest.EchoKey)
	core, logs := observer.New(zap.DebugLevel)
	cfg := pool.DefaultMemberConfig()
	cfg.Name, cfg.BaseURL, cfg.Model, cfg.Stream, cfg.APIKey = "judge", judgeSrv.URL, "judge-model", false, pool.Secret(echoedKey)
	jm, err := pool.NewMember(cfg, pool.Policy{Retry: pool.RetryConfig{MaxAttempts: 3, MaxRetryAfter: time.Second}}, nil, zap.New(core))
	if err != nil {
		t.Fatal(err)
	}
	j, err := judge.New(judge.DefaultConfig(), jm, zap.New(core))
	if err != nil {
		t.Fatal(err)
	}
	r := New(p, j, zap.New(core))
	ans, err := r.Respond(t.Context(), capture.Request{Session: "s", Seq: 1, Messages: []capture.Message{{Role: "user", Content: "What does WordCount do?"}}})
	if err != nil {
		t.Fatalf("the turn failed because the judge model did: %v", err)
	}
	if len(judgeSrv.Requests()) == 0 {
		t.Fatal("the judge model was never asked")
	}
	if len(ans.Candidates) != 3 || len(ans.Verdicts) != 3 || ans.Text == "" {
		t.Fatalf("%d candidates, %d verdicts, answer %q", len(ans.Candidates), len(ans.Verdicts), ans.Text)
	}
	for i, v := range ans.Verdicts {
		if !v.RulesOnly || v.JudgeError == "" || v.LLMScore != 0 || v.Score < 1 {
			t.Errorf("verdict %d is not a marked rules-only fallback: %+v", i, v)
		}
		if !strings.Contains(v.JudgeError, "[redacted]") {
			t.Errorf("verdict %d: judge error %q does not show the (redacted) upstream text", i, v.JudgeError)
		}
		noKey(t, "verdict", fmt.Sprintf("%+v", v))
	}
	noKeyInLogs(t, logs)
}

// --responder openai is a pool of one through the gateway. An upstream
// that echoes the key: the plugin's error (the capture endpoint's answer),
// the recorded exchange and the logs never hold it, and the upstream's
// status reaches the plugin.
func TestOneModelKeyNeverReachesThePlugin(t *testing.T) {
	up := llmtest.New(t, llmtest.EchoKey)
	core, logs := observer.New(zap.DebugLevel)
	log := zap.New(core)
	cfg := pool.DefaultConfig()
	m := pool.DefaultMemberConfig()
	m.Name, m.BaseURL, m.Model, m.APIKey = "openai", up.URL, "gpt-x", pool.Secret(echoedKey)
	cfg.Members, cfg.CacheDir, cfg.Retry = []pool.MemberConfig{m}, "", fastRetry()
	p, err := pool.New(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	r := New(p, newJudge(t, nil), log)
	r.Name = "openai"
	var sink recorder
	srv, err := capture.Listen(t.Context(), capture.DefaultConfig(), r, &sink, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	for _, stream := range []bool{false, true} {
		oc := openai.DefaultConfig("")
		oc.BaseURL = srv.BaseURL("s1")
		_, err := plugin(t.Context(), openai.NewClientWithConfig(oc), stream)
		if err == nil {
			t.Fatal("the plugin got an answer from a failing upstream")
		}
		noKey(t, "the plugin's error", err.Error())
		if !strings.Contains(err.Error(), "[redacted]") {
			t.Errorf("the plugin's error %q does not show the upstream's (redacted) text", err)
		}
		if apiErr, ok := errors.AsType[*openai.APIError](err); !ok || (apiErr.HTTPStatusCode != http.StatusUnauthorized && apiErr.HTTPStatusCode != http.StatusTooManyRequests) {
			t.Errorf("plugin error %v: want the upstream's 401 or 429", err)
		}
	}
	for _, ex := range sink.all {
		if ex.Error == "" || len(ex.Missing) != 1 {
			t.Errorf("exchange error %q, missing %+v", ex.Error, ex.Missing)
		}
		noKey(t, "recorded exchange", fmt.Sprintf("%+v", ex))
	}
	noKeyInLogs(t, logs)
}

// plugin sends one chat request as the editor's plugin does.
func plugin(ctx context.Context, c *openai.Client, stream bool) (string, error) {
	req := openai.ChatCompletionRequest{Model: "ask", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}}
	if !stream {
		resp, err := c.CreateChatCompletion(ctx, req)
		if err != nil {
			return "", err
		}
		return resp.Choices[0].Message.Content, nil
	}
	req.Stream = true
	s, err := c.CreateChatCompletionStream(ctx, req)
	if err != nil {
		return "", err
	}
	defer s.Close()
	var b strings.Builder
	for {
		chunk, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return b.String(), nil
		}
		if err != nil {
			return b.String(), err
		}
		if len(chunk.Choices) > 0 {
			b.WriteString(chunk.Choices[0].Delta.Content)
		}
	}
}

// recorder is a capture.Sink keeping every exchange.
type recorder struct{ all []dialog.Exchange }

func (r *recorder) Record(ex dialog.Exchange) error {
	r.all = append(r.all, ex)
	return nil
}

// A slow member does not stall the turn: with a deadline the responder
// answers from the others and the record names the late member.
func TestSlowMemberRecordedLate(t *testing.T) {
	s := llmtest.New(t, func(r llmtest.Request) llmtest.Reply {
		if r.Model == "coder-b" {
			return llmtest.Reply{Text: "slow", Delay: time.Minute}
		}
		return llmtest.Reply{Text: "quick answer from " + r.Model}
	})
	cfg := pool.DefaultConfig()
	cfg.CacheDir, cfg.Retry, cfg.Deadline = "", fastRetry(), 50*time.Millisecond
	for _, name := range []string{"coder-a", "coder-b", "coder-c"} {
		m := pool.DefaultMemberConfig()
		m.Name, m.BaseURL, m.Model = name, s.URL, name
		cfg.Members = append(cfg.Members, m)
	}
	p, err := pool.New(cfg, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	ans, err := New(p, newJudge(t, nil), zap.NewNop()).Respond(t.Context(), capture.Request{Session: "s", Seq: 1,
		Messages: []capture.Message{{Role: "user", Content: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(ans.Candidates) != 2 || len(ans.Missing) != 1 || ans.Missing[0].Member != "coder-b" || !ans.Missing[0].Late {
		t.Fatalf("candidates %d, missing %+v", len(ans.Candidates), ans.Missing)
	}
}
