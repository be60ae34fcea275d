package llmtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	openai "github.com/sashabaranov/go-openai"
	"golang.org/x/sync/errgroup"
)

func client(tb testing.TB, s *Server) *openai.Client {
	tb.Helper()
	cfg := openai.DefaultConfig("test-key")
	cfg.BaseURL = s.URL
	return openai.NewClientWithConfig(cfg)
}

func chatRequestFor(text string) openai.ChatCompletionRequest {
	return openai.ChatCompletionRequest{
		Model: "gpt-test",
		Messages: []openai.ChatCompletionMessage{
			{Role: "system", Content: "be brief"},
			{Role: "user", Content: text},
		},
	}
}

// waitIdle polls until no chat handler is running.
func waitIdle(tb testing.TB, s *Server) {
	tb.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for s.active.Load() != 0 {
		if time.Now().After(deadline) {
			tb.Fatalf("%d chat handlers still running", s.active.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestNonStreaming(t *testing.T) {
	s := New(t, func(Request) Reply {
		return Reply{Text: "hello <world> & co", PromptTokens: 7, CompletionTokens: 3}
	})
	resp, err := client(t, s).CreateChatCompletion(t.Context(), chatRequestFor("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Choices[0].Message.Content; got != "hello <world> & co" {
		t.Errorf("content = %q", got)
	}
	if resp.Choices[0].Message.Role != "assistant" || resp.Choices[0].FinishReason != openai.FinishReasonStop {
		t.Errorf("choice = %+v", resp.Choices[0])
	}
	if resp.Model != "gpt-test" || resp.Object != "chat.completion" || resp.ID == "" || resp.Created == 0 {
		t.Errorf("envelope = id %q object %q model %q created %d", resp.ID, resp.Object, resp.Model, resp.Created)
	}
	if resp.Usage.PromptTokens != 7 || resp.Usage.CompletionTokens != 3 || resp.Usage.TotalTokens != 10 {
		t.Errorf("usage = %+v", resp.Usage)
	}

	reqs := s.Requests()
	if len(reqs) != 1 {
		t.Fatalf("got %d requests", len(reqs))
	}
	r := reqs[0]
	want := []Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hi"}}
	if diff := cmp.Diff(want, r.Messages); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if r.Seq != 1 || r.Model != "gpt-test" || r.Stream {
		t.Errorf("request = seq %d model %q stream %v", r.Seq, r.Model, r.Stream)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer test-key" {
		t.Errorf("Authorization = %q", got)
	}
	if !json.Valid(r.Body) || !bytes.Contains(r.Body, []byte(`"model":"gpt-test"`)) {
		t.Errorf("body = %s", r.Body)
	}
}

func TestUsageEstimated(t *testing.T) {
	s := New(t, Fixed("three word answer"))
	resp, err := client(t, s).CreateChatCompletion(t.Context(), chatRequestFor("one two"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Usage.PromptTokens != 4 || resp.Usage.CompletionTokens != 3 {
		t.Errorf("usage = %+v, want 4 prompt (be brief one two) and 3 completion", resp.Usage)
	}
}

func TestStreaming(t *testing.T) {
	const text = "Streams are\nsplit  into pieces, 你好 世界."
	for _, includeUsage := range []bool{false, true} {
		t.Run(fmt.Sprintf("include_usage=%v", includeUsage), func(t *testing.T) {
			s := New(t, Fixed(text))
			req := chatRequestFor("stream please")
			if includeUsage {
				req.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
			}
			stream, err := client(t, s).CreateChatCompletionStream(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			defer stream.Close()
			var got strings.Builder
			var finish openai.FinishReason
			var usage *openai.Usage
			chunks := 0
			for {
				c, err := stream.Recv()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("recv after %d chunks: %v", chunks, err)
				}
				chunks++
				if c.Object != "chat.completion.chunk" || c.Model != "gpt-test" {
					t.Errorf("chunk envelope = %q %q", c.Object, c.Model)
				}
				if c.Usage != nil {
					usage = c.Usage
					continue
				}
				got.WriteString(c.Choices[0].Delta.Content)
				if c.Choices[0].FinishReason != "" {
					finish = c.Choices[0].FinishReason
				}
			}
			if got.String() != text {
				t.Errorf("streamed text = %q, want %q", got.String(), text)
			}
			if finish != openai.FinishReasonStop {
				t.Errorf("finish reason = %q", finish)
			}
			if wantChunks := len(Split(text)) + 2; chunks < wantChunks {
				t.Errorf("got %d chunks, want at least %d", chunks, wantChunks)
			}
			if includeUsage != (usage != nil) {
				t.Errorf("usage chunk = %+v, include_usage %v", usage, includeUsage)
			}
			if !s.Requests()[0].Stream {
				t.Error("request not recorded as streaming")
			}
		})
	}
}

func TestStreamFraming(t *testing.T) {
	s := New(t, Fixed("a b c"))
	body := `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"x"}]}`
	resp, err := http.Post(s.URL+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type = %q", ct)
	}
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(raw, []byte("data: [DONE]\n\n")) {
		t.Fatalf("stream does not end with [DONE]: %q", raw)
	}
	frames := strings.Split(strings.TrimSuffix(string(raw), "\n\n"), "\n\n")
	// role, "a ", "b ", "c", finish, usage, [DONE]
	if len(frames) != 7 {
		t.Fatalf("got %d frames: %q", len(frames), frames)
	}
	for i, f := range frames[:len(frames)-1] {
		data, ok := strings.CutPrefix(f, "data: ")
		if !ok {
			t.Fatalf("frame %d = %q", i, f)
		}
		var c map[string]any
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if c["object"] != "chat.completion.chunk" || c["id"] != "chatcmpl-llmtest-1" {
			t.Errorf("frame %d = %s", i, data)
		}
	}
	want := []string{
		`"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]`,
		`"delta":{"content":"a "},"finish_reason":null`,
		`"delta":{"content":"b "}`,
		`"delta":{"content":"c"}`,
		`"delta":{},"finish_reason":"stop"`,
		`"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":3,"total_tokens":4}`,
	}
	for i, w := range want {
		if !strings.Contains(frames[i], w) {
			t.Errorf("frame %d = %s, want it to contain %s", i, frames[i], w)
		}
	}
}

func TestMalformedRequest(t *testing.T) {
	var called atomic.Bool
	s := New(t, func(Request) Reply { called.Store(true); return Reply{} })
	resp, err := http.Post(s.URL+"/chat/completions", "application/json", strings.NewReader(`{"model":`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("status = %d", resp.StatusCode)
	}
	if called.Load() {
		t.Error("handler called for a malformed body")
	}
	if reqs := s.Requests(); len(reqs) != 1 || string(reqs[0].Body) != `{"model":` {
		t.Errorf("requests = %+v", reqs)
	}
}

func TestModelsAndRoutes(t *testing.T) {
	s := New(t, nil)
	models, err := client(t, s).ListModels(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(models.Models) != 1 || models.Models[0].ID != DefaultModel {
		t.Errorf("models = %+v", models.Models)
	}
	resp, err := http.Get(s.URL + "/nope")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body errorBody
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(body.Error.Message, "/v1/nope") {
		t.Errorf("status %d, body %+v", resp.StatusCode, body)
	}
	if strings.Contains(s.URL, "localhost") || !strings.HasPrefix(s.URL, "http://127.0.0.1:") {
		t.Errorf("URL = %q, want 127.0.0.1", s.URL)
	}
}

func TestConcurrentRequests(t *testing.T) {
	s := New(t, Echo)
	c := client(t, s)
	const n = 20
	g, ctx := errgroup.WithContext(t.Context())
	for i := range n {
		g.Go(func() error {
			want := fmt.Sprintf("question %d", i)
			resp, err := c.CreateChatCompletion(ctx, chatRequestFor(want))
			if err != nil {
				return err
			}
			if got := resp.Choices[0].Message.Content; got != want {
				return fmt.Errorf("echo = %q, want %q", got, want)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, r := range s.Requests() {
		seen[r.Seq] = true
	}
	for i := 1; i <= n; i++ {
		if !seen[i] {
			t.Errorf("no request with seq %d", i)
		}
	}
}

func TestSplit(t *testing.T) {
	tests := map[string][]string{
		"":               nil,
		"one":            {"one"},
		"a b":            {"a ", "b"},
		"  lead\n\ttab ": {"  ", "lead\n\t", "tab "},
		"你好 世界":          {"你好 ", "世界"},
		"fn() {\n}\n":    {"fn() ", "{\n", "}\n"},
	}
	for in, want := range tests {
		t.Run(fmt.Sprintf("%q", in), func(t *testing.T) {
			got := Split(in)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Split (-want +got):\n%s", diff)
			}
			if strings.Join(got, "") != in {
				t.Errorf("pieces do not concatenate to the input")
			}
		})
	}
}

func ExampleStart() {
	s := Start(Fixed("pong"))
	defer s.Close()

	cfg := openai.DefaultConfig("")
	cfg.BaseURL = s.URL
	resp, err := openai.NewClientWithConfig(cfg).CreateChatCompletion(context.Background(),
		openai.ChatCompletionRequest{Model: "any", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "ping"}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Choices[0].Message.Content, len(s.Requests()))
	// Output: pong 1
}
