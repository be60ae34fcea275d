package capture

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"dialogfarm/adapter"
	"dialogfarm/dialog"
)

// The request shapes plugins send: each is recorded byte for byte, the
// responder sees the same bytes and the parsed messages, and the plugin gets
// an answer in the shape it asked for.
func TestRequestShapesRecordedByteForByte(t *testing.T) {
	cases := []struct {
		name     string
		body     string
		messages []dialog.Message // what the responder must see
		check    func(t *testing.T, resp []byte)
	}{
		{
			name: "content parts, unknown fields",
			body: `{"model":"m","stream":false,"x_vendor":{"trace":"abc","n":[1,2]},"messages":[` +
				`{"role":"system","content":[{"type":"text","text":"Be brief."}],"cache_control":{"type":"ephemeral"}},` +
				`{"role":"user","name":"dev","content":[{"type":"text","text":"What is "},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}},{"type":"text","text":"this?"}]}]}`,
			messages: []dialog.Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "What is this?"}},
		},
		{
			name: "tools, tool_choice, tool calls and tool messages",
			body: `{"model":"m","messages":[{"role":"user","content":"weather?"},` +
				`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get","arguments":"{\"city\":\"Oslo\"}"}}]},` +
				`{"role":"tool","tool_call_id":"call_1","content":"{\"temp\":3}"},{"role":"user","content":"and tomorrow?"}],` +
				`"tools":[{"type":"function","function":{"name":"get","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}],"tool_choice":"auto"}`,
			messages: []dialog.Message{{Role: "user", Content: "weather?"}, {Role: "assistant"}, {Role: "tool", Content: `{"temp":3}`}, {Role: "user", Content: "and tomorrow?"}},
		},
		{
			name:     "n, stop, response_format",
			body:     `{"model":"m","n":2,"stop":["\n\n","END"],"response_format":{"type":"json_object"},"messages":[{"role":"user","content":"json please"}]}`,
			messages: []dialog.Message{{Role: "user", Content: "json please"}},
			check: func(t *testing.T, resp []byte) {
				var c struct {
					Choices []struct {
						Index   int
						Message struct{ Content string }
					}
				}
				if err := json.Unmarshal(resp, &c); err != nil || len(c.Choices) != 2 || c.Choices[1].Index != 1 || c.Choices[1].Message.Content != "the answer" {
					t.Errorf("n=2 answer: %s (%v)", resp, err)
				}
			},
		},
		{
			name:     "streaming with odd spacing kept",
			body:     "{ \"model\" : \"m\",\n  \"stream\": true, \"stream_options\": {\"include_usage\": true},\n  \"messages\": [ {\"role\": \"user\", \"content\": \"é \\u00e9 <b>\"} ] }",
			messages: []dialog.Message{{Role: "user", Content: "é é <b>"}},
			check: func(t *testing.T, resp []byte) {
				if !bytes.HasPrefix(resp, []byte("data: ")) || !bytes.Contains(resp, []byte(`"usage"`)) || !bytes.HasSuffix(resp, []byte("data: [DONE]\n\n")) {
					t.Errorf("stream: %s", resp)
				}
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var mu sync.Mutex
			var seen Request
			r := ResponderFunc(func(_ context.Context, req Request) (Answer, error) {
				mu.Lock()
				defer mu.Unlock()
				seen = req
				return Answer{Text: "the answer", Responder: "fixed"}, nil
			})
			sink := &memSink{}
			s, _ := startServer(t, r, sink)
			status, _, resp := post(t, s.BaseURL("shape")+"/chat/completions", c.body, nil)
			if status != 200 {
				t.Fatalf("status %d: %s", status, resp)
			}
			ex := nextNow(t, s, "shape")
			if string(ex.Request) != c.body {
				t.Errorf("recorded request differs:\n got %s\nwant %s", ex.Request, c.body)
			}
			if got := sink.exchanges(); len(got) != 1 || string(got[0].Request) != c.body {
				t.Errorf("sink did not record the bytes sent")
			}
			mu.Lock()
			defer mu.Unlock()
			if string(seen.Body) != c.body {
				t.Errorf("responder saw other bytes: %s", seen.Body)
			}
			if len(seen.Messages) != len(c.messages) {
				t.Fatalf("responder saw %d messages, want %d: %+v", len(seen.Messages), len(c.messages), seen.Messages)
			}
			for i, m := range c.messages {
				if seen.Messages[i] != m {
					t.Errorf("message %d: %+v, want %+v", i, seen.Messages[i], m)
				}
			}
			if c.check != nil {
				c.check(t, resp)
			} else if !bytes.Contains(resp, []byte(`"content":"the answer"`)) {
				t.Errorf("answer: %s", resp)
			}
		})
	}
}

// Auxiliary requests (per the adapter's rules) get the stand-in, are
// recorded with the rule's name and are never handed out as turns.
func TestAuxiliaryRequestsKeptApart(t *testing.T) {
	no := false
	a := &adapter.Adapter{Traffic: adapter.Traffic{Auxiliary: []adapter.Rule{{Name: "title", Stream: &no, System: "(?i)title"}}}}
	cfg := DefaultConfig()
	cfg.Classify = a.Classifier().Auxiliary
	calls := 0
	var mu sync.Mutex
	r := ResponderFunc(func(context.Context, Request) (Answer, error) {
		mu.Lock()
		calls++
		mu.Unlock()
		return Answer{Text: "chat answer", Responder: "fixed"}, nil
	})
	sink := &memSink{}
	log, _ := testLogger(t)
	s, err := Listen(context.Background(), cfg, r, sink, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	url := s.BaseURL("aux") + "/chat/completions"
	chat := `{"model":"m","stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`
	title := `{"model":"m","stream":false,"messages":[{"role":"system","content":"Write a short title."},{"role":"user","content":"hi"}]}`
	titleJSON := `{"model":"m","stream":false,"response_format":{"type":"json_object"},"messages":[{"role":"system","content":"Title as JSON"},{"role":"user","content":"hi"}]}`
	post(t, url, chat, nil)
	_, _, resp := post(t, url, title, nil)
	if !strings.Contains(string(resp), `"content":"Untitled"`) {
		t.Errorf("title answer: %s", resp)
	}
	_, _, resp = post(t, url, titleJSON, nil)
	if !strings.Contains(string(resp), `"content":"{}"`) {
		t.Errorf("JSON title answer: %s", resp)
	}
	post(t, url, chat, nil)

	for i := range 2 {
		ex := nextNow(t, s, "aux")
		if ex.Auxiliary != "" || string(ex.Request) != chat || ex.Answer != "chat answer" {
			t.Errorf("turn %d: Next handed out %+v", i+1, ex)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if ex, err := s.Next(ctx, "aux"); err == nil {
		t.Errorf("a third exchange was handed out as a turn: %s", ex.Request)
	}
	aux := s.TakeAuxiliary("aux")
	if len(aux) != 2 || aux[0].Auxiliary != "title" || string(aux[0].Request) != title || string(aux[1].Request) != titleJSON || aux[0].Responder != "stand-in" {
		t.Fatalf("auxiliary exchanges: %+v", aux)
	}
	if again := s.TakeAuxiliary("aux"); len(again) != 0 {
		t.Errorf("taken twice: %d", len(again))
	}
	if n := len(sink.exchanges()); n != 4 {
		t.Errorf("sink recorded %d exchanges, want all 4", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if calls != 2 {
		t.Errorf("the responder was asked %d times, want 2 (auxiliary requests never reach it)", calls)
	}
}
