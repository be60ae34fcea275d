package capture

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	openai "github.com/sashabaranov/go-openai"
	"golang.org/x/sync/errgroup"
)

// oddBody has whitespace, escapes, unicode, HTML characters and a key order
// no encoder would produce; it must be recorded exactly.
const oddBody = "{\n  \"messages\" : [ {\"content\":\"h\u00e9llo \\u00e9 \\\"quoted\\\" <b>&amp;</b> \u4f60\u597d\\n\\tend\",  \"role\":\"user\"} ],\t" +
	"\"stream\":false ,\"model\":\"m-1\", \"temperature\": 0.20, \"zzz\":{\"nested\":[1, 2.50, true,null]}\r\n}\n"

func TestRecordsBodyByteForByte(t *testing.T) {
	var got Request
	r := ResponderFunc(func(_ context.Context, req Request) (Answer, error) {
		got = req
		return Answer{Text: "ok"}, nil
	})
	sink := &memSink{}
	s, _ := startServer(t, r, sink)

	status, _, _ := post(t, s.BaseURL("odd")+"/chat/completions", oddBody, nil)
	if status != http.StatusOK {
		t.Fatalf("status = %d", status)
	}
	ex := nextNow(t, s, "odd")
	if string(ex.Request) != oddBody {
		t.Errorf("recorded request differs:\n got %q\nwant %q", ex.Request, oddBody)
	}
	if string(got.Body) != oddBody {
		t.Errorf("responder saw body %q", got.Body)
	}
	wantMsgs := []Message{{Role: "user", Content: "héllo é \"quoted\" <b>&amp;</b> 你好\n\tend"}}
	if diff := cmp.Diff(wantMsgs, got.Messages); diff != "" {
		t.Errorf("parsed messages (-want +got):\n%s", diff)
	}
	if got.Model != "m-1" || got.Stream || got.Temperature == nil || *got.Temperature != 0.2 {
		t.Errorf("parsed model %q stream %v temperature %v", got.Model, got.Stream, got.Temperature)
	}
	if got.Session != "odd" || got.Seq != 1 || ex.Seq != 1 || ex.Session != "odd" {
		t.Errorf("session/seq: request %q/%d, exchange %q/%d", got.Session, got.Seq, ex.Session, ex.Seq)
	}
	if ex.Answer != "ok" || ex.Model != "m-1" || ex.Error != "" || ex.Received.IsZero() || ex.Seconds <= 0 {
		t.Errorf("exchange = %+v", ex)
	}
	if ex.Responder != "capture.ResponderFunc" {
		t.Errorf("responder = %q, want the type name when the answer names none", ex.Responder)
	}
	recorded := sink.exchanges()
	if len(recorded) != 1 || !bytes.Equal(recorded[0].Request, []byte(oddBody)) {
		t.Errorf("sink got %d exchanges, first request %q", len(recorded), recorded[0].Request)
	}
}

func TestStreamThroughGoOpenAI(t *testing.T) {
	const text = "Here is the answer:\n\n```go\nfunc add(a, b int) int { return a + b }\n```\n\nIt adds 😀 two ints."
	s, _ := startServer(t, fixed(text), nil)
	stream, err := openaiClient(s.BaseURL("sse"), "").CreateChatCompletionStream(t.Context(), openai.ChatCompletionRequest{
		Model:    "plugin-model",
		Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "explain"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	var got strings.Builder
	var finish openai.FinishReason
	ids := map[string]bool{}
	contentChunks := 0
	for {
		c, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		ids[c.ID] = true
		if c.Object != "chat.completion.chunk" || c.Model != "fixed-model" || c.Created == 0 {
			t.Errorf("chunk envelope: object %q model %q created %d", c.Object, c.Model, c.Created)
		}
		if d := c.Choices[0].Delta.Content; d != "" {
			contentChunks++
			got.WriteString(d)
		}
		if c.Choices[0].FinishReason != "" {
			finish = c.Choices[0].FinishReason
		}
	}
	if got.String() != text {
		t.Errorf("streamed %q, want %q", got.String(), text)
	}
	if contentChunks < 3 {
		t.Errorf("answer came in %d chunks, want several", contentChunks)
	}
	if finish != openai.FinishReasonStop || len(ids) != 1 || !ids["chatcmpl-sse-1"] {
		t.Errorf("finish %q, ids %v", finish, ids)
	}
	ex := nextNow(t, s, "sse")
	if ex.Answer != text || ex.Model != "fixed-model" || ex.Responder != "fixed" {
		t.Errorf("exchange = %+v", ex)
	}
}

func TestStreamFraming(t *testing.T) {
	for _, includeUsage := range []bool{false, true} {
		t.Run(fmt.Sprintf("include_usage=%v", includeUsage), func(t *testing.T) {
			s, _ := startServer(t, fixed("one two three four five six seven eight nine ten eleven"), nil)
			body := `{"model":"m","stream":true,"messages":[{"role":"user","content":"<x>"}]}`
			if includeUsage {
				body = `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"<x>"}]}`
			}
			status, header, raw := post(t, s.BaseURL("raw")+"/chat/completions", body, nil)
			if status != http.StatusOK || header.Get("Content-Type") != "text/event-stream" ||
				header.Get("Cache-Control") != "no-cache" {
				t.Fatalf("status %d, headers %v", status, header)
			}
			if !bytes.HasSuffix(raw, []byte("\n\ndata: [DONE]\n\n")) || !bytes.HasPrefix(raw, []byte("data: {")) {
				t.Fatalf("stream = %q", raw)
			}
			frames := strings.Split(strings.TrimSuffix(string(raw), "\n\n"), "\n\n")
			frames = frames[:len(frames)-1] // [DONE]
			type frame struct {
				ID      string `json:"id"`
				Object  string `json:"object"`
				Created int64  `json:"created"`
				Model   string `json:"model"`
				Choices []struct {
					Index        int                `json:"index"`
					Delta        map[string]*string `json:"delta"`
					FinishReason *string            `json:"finish_reason"`
				} `json:"choices"`
				Usage *usage `json:"usage"`
			}
			var text strings.Builder
			var parsed []frame
			for i, f := range frames {
				data, ok := strings.CutPrefix(f, "data: ")
				if !ok || strings.Contains(data, "\n") {
					t.Fatalf("frame %d is not one data line: %q", i, f)
				}
				var fr frame
				dec := json.NewDecoder(strings.NewReader(data))
				dec.DisallowUnknownFields()
				if err := dec.Decode(&fr); err != nil {
					t.Fatalf("frame %d: %v: %s", i, err, data)
				}
				if fr.ID != "chatcmpl-raw-1" || fr.Object != "chat.completion.chunk" || fr.Model != "fixed-model" || fr.Created == 0 {
					t.Errorf("frame %d envelope: %s", i, data)
				}
				parsed = append(parsed, fr)
				if len(fr.Choices) == 1 && fr.Choices[0].Delta["content"] != nil {
					text.WriteString(*fr.Choices[0].Delta["content"])
				}
			}
			if first := parsed[0].Choices[0]; first.Delta["role"] == nil || *first.Delta["role"] != "assistant" || first.FinishReason != nil {
				t.Errorf("first frame = %s", frames[0])
			}
			last := len(parsed) - 1
			if includeUsage {
				u := parsed[last].Usage
				if u == nil || len(parsed[last].Choices) != 0 || u.TotalTokens != u.PromptTokens+u.CompletionTokens || u.CompletionTokens == 0 {
					t.Errorf("usage frame = %s", frames[last])
				}
				last--
			} else if strings.Contains(string(raw), `"usage"`) {
				t.Errorf("usage sent without include_usage")
			}
			stop := parsed[last].Choices[0]
			if stop.FinishReason == nil || *stop.FinishReason != "stop" || len(stop.Delta) != 0 {
				t.Errorf("finish frame = %s", frames[last])
			}
			for i := 1; i < last; i++ {
				if parsed[i].Choices[0].FinishReason != nil {
					t.Errorf("frame %d finishes early: %s", i, frames[i])
				}
			}
			if text.String() != "one two three four five six seven eight nine ten eleven" || last-1 < 3 {
				t.Errorf("content %q in %d chunks", text.String(), last-1)
			}
		})
	}
}

func TestNonStreaming(t *testing.T) {
	const text = "A <plain> & simple answer."
	s, _ := startServer(t, fixed(text), nil)
	resp, err := openaiClient(s.BaseURL("json"), "").CreateChatCompletion(t.Context(), openai.ChatCompletionRequest{
		Model:    "plugin-model",
		Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Object != "chat.completion" || resp.ID != "chatcmpl-json-1" || resp.Model != "fixed-model" || resp.Created == 0 {
		t.Errorf("envelope = %+v", resp)
	}
	c := resp.Choices[0]
	if c.Message.Role != "assistant" || c.Message.Content != text || c.FinishReason != openai.FinishReasonStop {
		t.Errorf("choice = %+v", c)
	}
	if resp.Usage.TotalTokens == 0 {
		t.Errorf("usage = %+v", resp.Usage)
	}
	status, header, raw := post(t, s.BaseURL("json")+"/chat/completions", `{"messages":[{"role":"user","content":"x"}]}`, nil)
	if status != http.StatusOK || header.Get("Content-Type") != "application/json" || !bytes.Contains(raw, []byte(`"content":"A <plain> & simple answer."`)) {
		t.Errorf("status %d, headers %v, body %s", status, header, raw)
	}
}

func TestSessionRouting(t *testing.T) {
	echo := ResponderFunc(func(_ context.Context, req Request) (Answer, error) {
		return Answer{Text: req.Session + ":" + req.Messages[len(req.Messages)-1].Content}, nil
	})
	s, _ := startServer(t, echo, nil)
	byPath := openaiClient(s.BaseURL("alpha"), "")
	byKey := openaiClient(s.URL()+"/v1", SessionKeyPrefix+"beta")
	ask := func(c *openai.Client, q string) string {
		t.Helper()
		resp, err := c.CreateChatCompletion(t.Context(), openai.ChatCompletionRequest{
			Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: q}},
		})
		if err != nil {
			t.Fatal(err)
		}
		return resp.Choices[0].Message.Content
	}
	steps := []struct {
		client  *openai.Client
		q, want string
	}{
		{byPath, "a1", "alpha:a1"}, {byKey, "b1", "beta:b1"}, {byKey, "b2", "beta:b2"},
		{byPath, "a2", "alpha:a2"}, {byKey, "b3", "beta:b3"},
	}
	for _, st := range steps {
		if got := ask(st.client, st.q); got != st.want {
			t.Errorf("answer to %s = %q, want %q", st.q, got, st.want)
		}
	}
	for session, want := range map[string][]string{"alpha": {"a1", "a2"}, "beta": {"b1", "b2", "b3"}} {
		for i, q := range want {
			ex := nextNow(t, s, session)
			if ex.Seq != i+1 || ex.Session != session || !strings.Contains(string(ex.Request), `"content":"`+q+`"`) {
				t.Errorf("%s exchange %d = seq %d session %q request %s", session, i, ex.Seq, ex.Session, ex.Request)
			}
		}
		if n := len(s.Exchanges(session)); n != len(want) {
			t.Errorf("Exchanges(%s) has %d, want %d", session, n, len(want))
		}
	}
	models, err := byPath.ListModels(t.Context())
	if err != nil || len(models.Models) != 1 || models.Models[0].ID != DefaultConfig().ModelID {
		t.Errorf("models = %+v, %v", models, err)
	}
}

func TestRejectsRequestsWithoutSession(t *testing.T) {
	const realKey = "sk-proj-REALKEY123456"
	body := `{"model":"m","messages":[{"role":"user","content":"x"}]}`
	tests := []struct {
		name, path string
		header     map[string]string
		wantStatus int
	}{
		{"no key", "/v1/chat/completions", nil, 400},
		{"real key", "/v1/chat/completions", map[string]string{"Authorization": "Bearer " + realKey}, 400},
		{"empty session key", "/v1/chat/completions", map[string]string{"Authorization": "Bearer session-"}, 400},
		{"bad session in path", "/s/bad%20id/v1/chat/completions", nil, 400},
		{"unknown route", "/s/ok/v2/chat", nil, 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, logs := startServer(t, fixed("never"), nil)
			status, _, raw := post(t, s.URL()+tt.path, body, tt.header)
			if status != tt.wantStatus {
				t.Errorf("status = %d, want %d", status, tt.wantStatus)
			}
			var e errorBody
			if err := json.Unmarshal(raw, &e); err != nil || e.Error.Message == "" || e.Error.Type != errTypeInvalidRequest {
				t.Errorf("error body %s (%v)", raw, err)
			}
			if strings.Contains(string(raw), realKey) || logsMention(logs, realKey) {
				t.Error("the API key was echoed or logged")
			}
			if n := len(s.Exchanges("ok")) + len(s.Exchanges("bad id")); n != 0 {
				t.Errorf("%d exchanges recorded", n)
			}
		})
	}
}

func TestNextWaitsForTheAnswer(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	r := ResponderFunc(func(ctx context.Context, _ Request) (Answer, error) {
		close(started)
		select {
		case <-release:
			return Answer{Text: "done at last"}, nil
		case <-ctx.Done():
			return Answer{}, ctx.Err()
		}
	})
	log, _ := testLogger(t)
	h := NewHandler(DefaultConfig(), r, nil, log)

	// Nothing has arrived: Next honours its context.
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if _, err := h.Next(ctx, "wait"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next before any request: %v", err)
	}

	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/"+h.Secret()+"/s/wait/v1/chat/completions",
		strings.NewReader(`{"stream":true,"messages":[{"role":"user","content":"x"}]}`))
	var g errgroup.Group
	g.Go(func() error { h.ServeHTTP(rec, req); return nil })
	<-started

	// The request is in, its answer is not: Next still waits.
	ctx2, cancel2 := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel2()
	if _, err := h.Next(ctx2, "wait"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next while the responder works: %v", err)
	}
	canceled, cancel3 := context.WithCancel(t.Context())
	cancel3()
	if _, err := h.Next(canceled, "wait"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Next with a cancelled context: %v", err)
	}

	type result struct {
		answer string
		err    error
	}
	got := make(chan result, 1)
	g.Go(func() error {
		ex, err := h.Next(t.Context(), "wait")
		got <- result{ex.Answer, err}
		return nil
	})
	close(release)
	res := <-got
	if res.err != nil || res.answer != "done at last" {
		t.Fatalf("Next = %q, %v", res.answer, res.err)
	}
	// When Next returned, the whole stream had been written to the plugin.
	if body := rec.Body.String(); !strings.HasSuffix(body, "data: [DONE]\n\n") || !strings.Contains(body, "done at last") {
		t.Errorf("Next returned before the answer was sent; the plugin had %q", body)
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
}

func TestResponderErrors(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		wantStatus int
	}{
		{"plain failure", errors.New("pool exhausted"), http.StatusBadGateway},
		{"upstream rate limit", fmt.Errorf("ask: %w", &openai.APIError{Message: "slow down", HTTPStatusCode: 429}), 429},
		{"upstream unavailable", &openai.APIError{Message: "down", HTTPStatusCode: 503}, 503},
		{"upstream request error", &openai.RequestError{HTTPStatusCode: 500, Err: errors.New("bad gateway html")}, 500},
		{"upstream odd status", &openai.APIError{Message: "odd", HTTPStatusCode: 302}, http.StatusBadGateway},
		{"timeout", fmt.Errorf("ask: %w", context.DeadlineExceeded), http.StatusGatewayTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := ResponderFunc(func(context.Context, Request) (Answer, error) {
				return Answer{Responder: "pool"}, tt.err
			})
			sink := &memSink{}
			s, _ := startServer(t, r, sink)
			for i, stream := range []bool{false, true} {
				c := openaiClient(s.BaseURL("err"), "")
				req := openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "x"}}}
				var err error
				if stream {
					_, err = c.CreateChatCompletionStream(t.Context(), req)
				} else {
					_, err = c.CreateChatCompletion(t.Context(), req)
				}
				apiErr, ok := errors.AsType[*openai.APIError](err)
				if !ok || apiErr.HTTPStatusCode != tt.wantStatus || !strings.Contains(apiErr.Message, "responder pool: ") {
					t.Errorf("stream=%v: err = %v, want status %d", stream, err, tt.wantStatus)
				}
				ex := nextNow(t, s, "err")
				if ex.Seq != i+1 || ex.Answer != "" || ex.Responder != "pool" ||
					!strings.Contains(ex.Error, tt.err.Error()) {
					t.Errorf("exchange = %+v", ex)
				}
			}
			if n := len(sink.exchanges()); n != 2 {
				t.Errorf("sink recorded %d exchanges", n)
			}
		})
	}
}

func TestBadBodies(t *testing.T) {
	tests := []struct {
		name, body  string
		wantRequest string
		wantError   string
	}{
		{"not json", "{not json", `"{not json"`, "not valid JSON"},
		{"empty", "", `""`, "not valid JSON"},
		{"no messages", `{"model":"m"}`, `{"model":"m"}`, "messages must be a non-empty array"},
		{"wrong shape", `{"messages":"hi"}`, `{"messages":"hi"}`, "parse chat completion request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var called atomic.Bool
			r := ResponderFunc(func(context.Context, Request) (Answer, error) { called.Store(true); return Answer{}, nil })
			sink := &memSink{}
			s, _ := startServer(t, r, sink)
			status, _, raw := post(t, s.BaseURL("bad")+"/chat/completions", tt.body, nil)
			if status != http.StatusBadRequest || !bytes.Contains(raw, []byte(`"type":"invalid_request_error"`)) {
				t.Errorf("status %d body %s", status, raw)
			}
			ex := nextNow(t, s, "bad")
			if string(ex.Request) != tt.wantRequest || !strings.Contains(ex.Error, tt.wantError) {
				t.Errorf("exchange request %s error %q", ex.Request, ex.Error)
			}
			if _, err := json.Marshal(ex); err != nil {
				t.Errorf("the exchange does not encode: %v", err)
			}
			if called.Load() {
				t.Error("responder asked about a bad body")
			}
		})
	}
}

func TestSplitChunks(t *testing.T) {
	tests := []struct {
		text string
		n    int
		want []string
	}{
		{"", 8, nil},
		{"short", 8, []string{"short"}},
		{"one two three four", 8, []string{"one two ", "three ", "four"}},
		{"abcdefghijklmnopqrst", 8, []string{"abcdefgh", "ijklmnop", "qrst"}},
		{"ab cdefghijklmnopqrst u", 8, []string{"ab ", "cdefghij", "klmnopqr", "st u"}},
		{"你好世界你好世界你好", 4, []string{"你好世界", "你好世界", "你好"}},
		{"a\n\n```go\nx := 1\n```\n", 6, []string{"a\n\n", "```go\n", "x := ", "1\n```\n"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q/%d", tt.text, tt.n), func(t *testing.T) {
			got := splitChunks(tt.text, tt.n)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("splitChunks (-want +got):\n%s", diff)
			}
			if strings.Join(got, "") != tt.text {
				t.Error("chunks do not concatenate to the text")
			}
		})
	}
}
