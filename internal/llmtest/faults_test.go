package llmtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"golang.org/x/sync/errgroup"
)

func TestErrorReplies(t *testing.T) {
	tests := []struct {
		name       string
		reply      Reply
		wantStatus int
		wantType   string
		wantCode   any // go-openai decodes a null code as 0
		wantMsg    string
	}{
		{"server error", Reply{Status: 500}, 500, "server_error", 0, "Internal Server Error"},
		{"rate limited", Reply{Status: 429, RetryAfter: "7", Text: "slow down"}, 429, "requests", "rate_limit_exceeded", "slow down"},
		{"bad request", Reply{Status: 400, Text: "messages is required"}, 400, "invalid_request_error", 0, "messages is required"},
		{"unauthorized", Reply{Status: 401}, 401, "invalid_request_error", "invalid_api_key", "Unauthorized"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(t, func(Request) Reply { return tt.reply })
			for _, stream := range []bool{false, true} {
				var err error
				if stream {
					_, err = client(t, s).CreateChatCompletionStream(t.Context(), chatRequestFor("x"))
				} else {
					_, err = client(t, s).CreateChatCompletion(t.Context(), chatRequestFor("x"))
				}
				var apiErr *openai.APIError
				if !errors.As(err, &apiErr) {
					t.Fatalf("stream=%v: err = %v, want *openai.APIError", stream, err)
				}
				if apiErr.HTTPStatusCode != tt.wantStatus || apiErr.Type != tt.wantType ||
					apiErr.Message != tt.wantMsg || apiErr.Code != tt.wantCode {
					t.Errorf("stream=%v: APIError = %+v", stream, apiErr)
				}
			}

			resp, err := http.Post(s.URL+"/chat/completions", "application/json",
				strings.NewReader(`{"model":"m","messages":[]}`))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if got := resp.Header.Get("Retry-After"); got != tt.reply.RetryAfter {
				t.Errorf("Retry-After = %q, want %q", got, tt.reply.RetryAfter)
			}
			var body map[string]map[string]any
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
			for _, key := range []string{"message", "type", "code"} {
				if _, ok := body["error"][key]; !ok {
					t.Errorf("error body %v lacks %q", body, key)
				}
			}
		})
	}
}

func TestDelay(t *testing.T) {
	t.Run("elapses", func(t *testing.T) {
		s := New(t, func(Request) Reply { return Reply{Text: "late", Delay: 50 * time.Millisecond} })
		start := time.Now()
		resp, err := client(t, s).CreateChatCompletion(t.Context(), chatRequestFor("x"))
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d < 50*time.Millisecond {
			t.Errorf("answered after %v, before the delay", d)
		}
		if resp.Choices[0].Message.Content != "late" {
			t.Errorf("content = %q", resp.Choices[0].Message.Content)
		}
	})
	t.Run("client gives up", func(t *testing.T) {
		s := New(t, func(Request) Reply { return Reply{Text: "never", Delay: time.Hour} })
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		_, err := client(t, s).CreateChatCompletion(ctx, chatRequestFor("x"))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want deadline exceeded", err)
		}
		waitIdle(t, s) // the handler returned: no goroutine waits out the hour
	})
	t.Run("close releases", func(t *testing.T) {
		s := Start(func(Request) Reply { return Reply{Text: "never", Delay: time.Hour} })
		var g errgroup.Group
		g.Go(func() error {
			_, err := client(t, s).CreateChatCompletion(context.Background(), chatRequestFor("x"))
			return err
		})
		for len(s.Requests()) == 0 {
			time.Sleep(time.Millisecond)
		}
		start := time.Now()
		s.Close()
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("Close took %v", d)
		}
		if err := g.Wait(); err == nil {
			t.Error("delayed request succeeded after Close")
		}
	})
}

func TestDropAfterChunks(t *testing.T) {
	t.Run("stream", func(t *testing.T) {
		s := New(t, func(Request) Reply { return Reply{Text: "one two three four", DropAfterChunks: 3} })
		stream, err := client(t, s).CreateChatCompletionStream(t.Context(), chatRequestFor("x"))
		if err != nil {
			t.Fatal(err)
		}
		defer stream.Close()
		var got strings.Builder
		n := 0
		for {
			c, err := stream.Recv()
			if err != nil {
				if errors.Is(err, io.EOF) {
					t.Fatal("stream ended cleanly, want a dropped connection")
				}
				break
			}
			n++
			got.WriteString(c.Choices[0].Delta.Content)
		}
		if n != 3 || got.String() != "one two " {
			t.Errorf("got %d chunks %q before the drop, want 3 and %q", n, got.String(), "one two ")
		}
	})
	t.Run("stream drops before DONE", func(t *testing.T) {
		s := New(t, func(Request) Reply { return Reply{Text: "x", DropAfterChunks: 100} })
		resp, err := http.Post(s.URL+"/chat/completions", "application/json",
			strings.NewReader(`{"stream":true,"messages":[]}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		if err == nil || bytes.Contains(raw, []byte("[DONE]")) {
			t.Errorf("read err = %v, body %q: want a cut-off stream", err, raw)
		}
	})
	t.Run("non-streaming", func(t *testing.T) {
		s := New(t, func(Request) Reply { return Reply{Text: "cut", DropAfterChunks: 1} })
		if _, err := client(t, s).CreateChatCompletion(t.Context(), chatRequestFor("x")); err == nil {
			t.Error("want an error for a body cut in half")
		}
	})
	t.Run("immediately", func(t *testing.T) {
		s := New(t, func(Request) Reply { return Reply{DropAfterChunks: DropImmediately} })
		if _, err := client(t, s).CreateChatCompletion(t.Context(), chatRequestFor("x")); err == nil {
			t.Error("want an error for a dropped connection")
		}
	})
}

func TestRaw(t *testing.T) {
	t.Run("malformed json", func(t *testing.T) {
		s := New(t, func(Request) Reply { return Reply{Raw: `{"choices": [`} })
		_, err := client(t, s).CreateChatCompletion(t.Context(), chatRequestFor("x"))
		var syntaxErr *json.SyntaxError
		if !errors.As(err, &syntaxErr) && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("err = %v, want a JSON decoding error", err)
		}
	})
	t.Run("hand-written stream", func(t *testing.T) {
		raw := "data: {\"choices\":[{\"delta\":{\"content\":\"hand\"}}]}\n\ndata: [DONE]\n\n"
		s := New(t, func(Request) Reply { return Reply{Raw: raw} })
		stream, err := client(t, s).CreateChatCompletionStream(t.Context(), chatRequestFor("x"))
		if err != nil {
			t.Fatal(err)
		}
		defer stream.Close()
		c, err := stream.Recv()
		if err != nil || c.Choices[0].Delta.Content != "hand" {
			t.Fatalf("recv = %+v, %v", c, err)
		}
		if _, err := stream.Recv(); !errors.Is(err, io.EOF) {
			t.Errorf("second recv err = %v, want EOF", err)
		}
	})
}
