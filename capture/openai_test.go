package capture

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	openai "github.com/sashabaranov/go-openai"
	"go.uber.org/zap/zaptest/observer"

	"dialogfarm/internal/llmtest"
)

func newOpenAI(tb testing.TB, cfg OpenAIConfig) (*OpenAI, *observer.ObservedLogs) {
	tb.Helper()
	log, logs := testLogger(tb)
	o, err := NewOpenAI(cfg, log)
	if err != nil {
		tb.Fatal(err)
	}
	return o, logs
}

// localConfig asks the fake upstream, with no key.
func localConfig(up *llmtest.Server) OpenAIConfig {
	cfg := DefaultOpenAIConfig()
	cfg.BaseURL, cfg.APIKeyEnv, cfg.Model = up.URL, "", "gpt-x"
	return cfg
}

var conversation = []Message{
	{Role: "system", Content: "You are Ask.\n  Keep answers short.  "},
	{Role: "user", Content: "File: a.go\nLanguage: go\n```go\nfunc f() {}\n```\n\nExplain ☃ <b>&</b>"},
	{Role: "assistant", Content: "It is `f`.\n"},
	{Role: "user", Content: "\t and then? "},
}

func TestOpenAIForwards(t *testing.T) {
	f32 := func(v float32) *float32 { return &v }
	tests := []struct {
		name            string
		model           string
		cfgTemp, reqTmp *float32
		maxTokens       int
		wantModel       string
		wantTemp        float64 // -1: not sent
		wantMaxTokens   float64 // 0: not sent
	}{
		{"configured model", "gpt-x", nil, nil, 0, "gpt-x", -1, 0},
		{"request's model", "", nil, nil, 0, "plugin-model", -1, 0},
		{"request's temperature", "gpt-x", nil, f32(0.25), 0, "gpt-x", 0.25, 0},
		{"configured temperature wins", "gpt-x", f32(0.7), f32(0.25), 0, "gpt-x", 0.7, 0},
		{"zero temperature is sent", "gpt-x", f32(0), nil, 0, "gpt-x", 0, 0},
		{"max tokens", "gpt-x", nil, nil, 64, "gpt-x", -1, 64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := llmtest.New(t, llmtest.Fixed("upstream says hi"))
			cfg := localConfig(up)
			cfg.Model, cfg.Temperature, cfg.MaxTokens = tt.model, tt.cfgTemp, tt.maxTokens
			o, _ := newOpenAI(t, cfg)
			ans, err := o.Respond(t.Context(), Request{
				Session: "s", Seq: 1, Model: "plugin-model", Messages: conversation, Stream: true, Temperature: tt.reqTmp,
			})
			if err != nil {
				t.Fatal(err)
			}
			if ans.Text != "upstream says hi" || ans.Model != tt.wantModel || ans.Responder != "openai" || ans.Offline {
				t.Errorf("answer = %+v", ans)
			}
			reqs := up.Requests()
			if len(reqs) != 1 {
				t.Fatalf("upstream got %d requests", len(reqs))
			}
			var want []llmtest.Message
			for _, m := range conversation {
				want = append(want, llmtest.Message{Role: m.Role, Content: m.Content})
			}
			if diff := cmp.Diff(want, reqs[0].Messages); diff != "" {
				t.Errorf("forwarded messages (-want +got):\n%s", diff)
			}
			if reqs[0].Model != tt.wantModel || reqs[0].Stream {
				t.Errorf("upstream request model %q stream %v", reqs[0].Model, reqs[0].Stream)
			}
			var body map[string]any
			if err := json.Unmarshal(reqs[0].Body, &body); err != nil {
				t.Fatal(err)
			}
			temp, sent := body["temperature"].(float64)
			switch {
			case tt.wantTemp < 0 && sent:
				t.Errorf("temperature %v sent, want none", temp)
			case tt.wantTemp >= 0 && (!sent || temp-tt.wantTemp > 1e-6 || tt.wantTemp-temp > 1e-6):
				t.Errorf("temperature = %v (sent %v), want %v", temp, sent, tt.wantTemp)
			}
			if got, _ := body["max_tokens"].(float64); got != tt.wantMaxTokens {
				t.Errorf("max_tokens = %v, want %v", got, tt.wantMaxTokens)
			}
			if h := reqs[0].Header.Get("Authorization"); h != "" {
				t.Errorf("Authorization %q sent without a key", h)
			}
		})
	}
}

func TestOpenAIUpstreamFailures(t *testing.T) {
	tests := []struct {
		name       string
		reply      llmtest.Reply
		timeout    time.Duration // the responder's own bound
		ctxTimeout time.Duration // the caller's
		wantStatus int
		wantErr    error
		wantText   string
	}{
		{name: "rate limited", reply: llmtest.Reply{Status: 429, RetryAfter: "3", Text: "slow down"}, wantStatus: 429, wantText: "slow down"},
		{name: "server error", reply: llmtest.Reply{Status: 500}, wantStatus: 500},
		{name: "slow, responder timeout", reply: llmtest.Reply{Text: "late", Delay: time.Hour}, timeout: 100 * time.Millisecond, wantErr: context.DeadlineExceeded},
		{name: "slow, caller's context", reply: llmtest.Reply{Text: "late", Delay: time.Hour}, ctxTimeout: 100 * time.Millisecond, wantErr: context.DeadlineExceeded},
		{name: "malformed answer", reply: llmtest.Reply{Raw: `{"choices": [`}, wantText: "unexpected EOF"},
		{name: "no choices", reply: llmtest.Reply{Raw: `{"choices": []}`}, wantText: "no choices"},
		{name: "dropped connection", reply: llmtest.Reply{DropAfterChunks: llmtest.DropImmediately}, wantText: "EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := llmtest.New(t, func(llmtest.Request) llmtest.Reply { return tt.reply })
			cfg := localConfig(up)
			cfg.Timeout = tt.timeout
			o, _ := newOpenAI(t, cfg)
			ctx := t.Context()
			if tt.ctxTimeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.ctxTimeout)
				defer cancel()
			}
			start := time.Now()
			ans, err := o.Respond(ctx, Request{Messages: conversation})
			if err == nil {
				t.Fatalf("answer %+v, want an error", ans)
			}
			if time.Since(start) > 5*time.Second {
				t.Errorf("took %v", time.Since(start))
			}
			if want := "ask upstream model gpt-x at " + up.URL + ": "; !strings.HasPrefix(err.Error(), want) {
				t.Errorf("err = %q, want it to start with %q", err, want)
			}
			if tt.wantStatus != 0 {
				apiErr, ok := errors.AsType[*openai.APIError](err)
				if !ok || apiErr.HTTPStatusCode != tt.wantStatus {
					t.Errorf("err = %v, want an APIError with status %d", err, tt.wantStatus)
				}
				if got := errorStatus(err); got != tt.wantStatus {
					t.Errorf("capture would answer %d, want the upstream %d", got, tt.wantStatus)
				}
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("err = %v, want it to mention %q", err, tt.wantText)
			}
			if ans.Responder != "openai" || ans.Model != "gpt-x" {
				t.Errorf("failed answer still names its responder: %+v", ans)
			}
		})
	}
}

// TestOpenAIKeyNeverLeaks runs the whole path: a plugin-like client asks the
// capture endpoint (session as key), which asks the fake upstream with the
// real key; the upstream's second answer is an error that echoes the key.
func TestOpenAIKeyNeverLeaks(t *testing.T) {
	const secret = "sk-test-SECRET-0123456789abcdef"
	t.Setenv("DIALOGFARM_TEST_OPENAI_KEY", secret)
	up := llmtest.New(t, func(r llmtest.Request) llmtest.Reply {
		if r.Seq == 1 {
			return llmtest.Reply{Text: "fine"}
		}
		return llmtest.Reply{Status: 401, Text: "Incorrect API key provided: " + secret}
	})
	cfg := localConfig(up)
	cfg.APIKeyEnv = "DIALOGFARM_TEST_OPENAI_KEY"
	log, logs := testLogger(t)
	o, err := NewOpenAI(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	sink := &memSink{}
	s, serverLogs := startServer(t, o, sink)
	plugin := openaiClient(s.URL()+"/v1", SessionKeyPrefix+"k1")
	req := openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "q"}}}

	resp, err := plugin.CreateChatCompletion(t.Context(), req)
	if err != nil || resp.Choices[0].Message.Content != "fine" {
		t.Fatalf("first answer = %+v, %v", resp, err)
	}
	_, err = plugin.CreateChatCompletion(t.Context(), req)
	apiErr, ok := errors.AsType[*openai.APIError](err)
	if !ok || apiErr.HTTPStatusCode != 401 {
		t.Fatalf("second answer err = %v, want the upstream 401 passed on", err)
	}
	if strings.Contains(apiErr.Message, secret) || !strings.Contains(apiErr.Message, "[redacted]") {
		t.Errorf("the plugin was told %q", apiErr.Message)
	}

	for _, r := range up.Requests() {
		if got := r.Header.Get("Authorization"); got != "Bearer "+secret {
			t.Errorf("upstream Authorization = %q", got)
		}
	}
	first, second := nextNow(t, s, "k1"), nextNow(t, s, "k1")
	if first.Answer != "fine" || first.Error != "" || second.Error == "" {
		t.Errorf("exchanges: %+v / %+v", first, second)
	}
	for _, ex := range sink.exchanges() {
		b, err := json.Marshal(ex)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), secret) {
			t.Errorf("recorded exchange holds the key: %s", b)
		}
	}
	if logs.Len() == 0 || serverLogs.Len() == 0 {
		t.Fatal("nothing was logged; the leak check would be empty")
	}
	if logsMention(logs, secret) || logsMention(serverLogs, secret) || logsMention(serverLogs, "session-k1") {
		t.Error("a key reached the logs")
	}
}

func TestNewOpenAIKey(t *testing.T) {
	const env = "DIALOGFARM_TEST_KEY_VAR"
	tests := []struct {
		name    string
		set     bool
		value   string
		wantErr string
	}{
		{"unset", false, "", env + " is not set"},
		{"empty", true, "", env + " is empty"},
		{"blank", true, "  \t", env + " is empty"},
		{"set", true, "sk-abc", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.set {
				t.Setenv(env, tt.value)
			}
			cfg := DefaultOpenAIConfig()
			cfg.APIKeyEnv = env
			log, _ := testLogger(t)
			_, err := NewOpenAI(cfg, log)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrNoAPIKey) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want ErrNoAPIKey naming %s", err, env)
			}
		})
	}
	t.Run("bad base URL", func(t *testing.T) {
		cfg := DefaultOpenAIConfig()
		cfg.APIKeyEnv, cfg.BaseURL = "", "localhost:8000/v1"
		log, _ := testLogger(t)
		if _, err := NewOpenAI(cfg, log); err == nil {
			t.Error("want an error for a base URL without a scheme")
		}
	})
	t.Run("no model anywhere", func(t *testing.T) {
		up := llmtest.New(t, nil)
		cfg := localConfig(up)
		cfg.Model = ""
		o, _ := newOpenAI(t, cfg)
		if _, err := o.Respond(t.Context(), Request{Messages: conversation}); err == nil || len(up.Requests()) != 0 {
			t.Errorf("err = %v, upstream asked %d times", err, len(up.Requests()))
		}
	})
}

func TestRedactsCredentialsInBaseURL(t *testing.T) {
	up := llmtest.New(t, func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Status: 500} })
	cfg := localConfig(up)
	cfg.BaseURL = strings.Replace(up.URL, "http://", "http://user:hunter2@", 1)
	o, logs := newOpenAI(t, cfg)
	_, err := o.Respond(t.Context(), Request{Messages: conversation})
	if err == nil || strings.Contains(err.Error(), "hunter2") || logsMention(logs, "hunter2") {
		t.Errorf("err = %v; the password must not show in errors or logs", err)
	}
}
