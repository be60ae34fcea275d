package capture

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// pluginUser builds a user message the way the reference plugin does.
func pluginUser(file, lang, kind, lines, code, instruction string) string {
	return "File: " + file + "\nLanguage: " + lang + "\nCursor: line 4, column 1\n" +
		kind + " (lines " + lines + "):\n```" + lang + "\n" + code + "\n```\n\n" + instruction
}

func TestOfflineAnswers(t *testing.T) {
	sys := Message{Role: "system", Content: "You are Ask."}
	tests := []struct {
		name     string
		messages []Message
		want     []string
		wantNot  []string
	}{
		{
			name: "selection in python",
			messages: []Message{sys, {Role: "user", Content: pluginUser("app/calc.py", "python", "Selected code", "3-5",
				"\ndef add(a, b):\n    return a + b", "Explain what the selected code does.\nBe brief.")}},
			want: []string{
				"Request: Explain what the selected code does.\n",
				"File: app/calc.py (python)\n",
				"Turn: 1\n",
				"```python\n# offline placeholder for app/calc.py, lines 3-5\n# first line: def add(a, b):\n```\n",
			},
			wantNot: []string{"Be brief"},
		},
		{
			name: "cursor context in go, second turn",
			messages: []Message{sys,
				{Role: "user", Content: pluginUser("main.go", "go", "Code around the cursor", "1-9", "package main", "/fix it")},
				{Role: "assistant", Content: "earlier"},
				{Role: "user", Content: pluginUser("main.go", "go", "Code around the cursor", "1-9", "package main", "and now tests")},
			},
			want: []string{"Request: and now tests\n", "Turn: 2\n", "```go\n// offline placeholder for main.go, lines 1-9\n// first line: package main\n```"},
		},
		{
			name:     "free text from another plugin",
			messages: []Message{{Role: "user", Content: "how do I reverse a list?"}},
			want:     []string{"Request: how do I reverse a list?\n", "Turn: 1\n"},
			wantNot:  []string{"```", "File:"},
		},
		{
			name: "html comment syntax",
			messages: []Message{{Role: "user", Content: pluginUser("index.html", "html", "Selected code", "2-2",
				"<p>hi</p>", "/doc")}},
			want: []string{"```html\n<!-- offline placeholder for index.html, lines 2-2 -->\n<!-- first line: <p>hi</p> -->\n```"},
		},
	}
	texts := map[string]string{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := Request{Session: "s", Seq: 1, Model: "m", Messages: tt.messages}
			a, err := Offline{}.Respond(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			b, err := Offline{}.Respond(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			if a.Text != b.Text {
				t.Errorf("two answers to one request differ:\n%s\n---\n%s", a.Text, b.Text)
			}
			if !a.Offline || a.Responder != "offline" || a.Model != "offline" {
				t.Errorf("answer = %+v, want it marked offline", a)
			}
			if !strings.HasPrefix(a.Text, OfflinePrefix+" ") || !strings.Contains(a.Text, "never training data") {
				t.Errorf("answer does not say it is a placeholder:\n%s", a.Text)
			}
			for _, w := range tt.want {
				if !strings.Contains(a.Text, w) {
					t.Errorf("answer lacks %q:\n%s", w, a.Text)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(a.Text, w) {
					t.Errorf("answer has %q:\n%s", w, a.Text)
				}
			}
			texts[tt.name] = a.Text
		})
	}
	seen := map[string]string{}
	for name, text := range texts {
		if other, dup := seen[text]; dup {
			t.Errorf("%s and %s got the same answer", name, other)
		}
		seen[text] = name
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := (Offline{}).Respond(ctx, Request{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
}

func TestOfflineThroughEndpoint(t *testing.T) {
	sink := &memSink{}
	s, _ := startServer(t, Offline{}, sink)
	user := pluginUser("lib/util.ts", "typescript", "Selected code", "10-12", "export const x = 1;", "Write tests for the selected code.")
	stream, err := openaiClient(s.BaseURL("off"), "").CreateChatCompletionStream(t.Context(), openai.ChatCompletionRequest{
		Model: "plugin-model", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: user}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	var shown strings.Builder
	for {
		c, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Choices) > 0 {
			shown.WriteString(c.Choices[0].Delta.Content)
		}
	}
	ex := nextNow(t, s, "off")
	if !ex.Offline || ex.Responder != "offline" || ex.Answer != shown.String() ||
		!strings.Contains(ex.Answer, "```typescript\n// offline placeholder for lib/util.ts, lines 10-12") {
		t.Errorf("exchange = %+v, plugin shown %q", ex, shown.String())
	}
	b, err := json.Marshal(sink.exchanges()[0])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"offline":true`) {
		t.Errorf("record %s is not marked offline", b)
	}
}
