package judge

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"dialogfarm/adapter"
	"dialogfarm/dialog"
	"dialogfarm/dialog/vocab"
)

// quillRequest is a request as the test plugin Quill sends it (see
// driver/adapters_e2e_test.go): content-part messages, the last user
// message given.
func quillRequest(tb testing.TB, history []dialog.Message, user string) dialog.ChatRequest {
	tb.Helper()
	part := func(s string) []map[string]string { return []map[string]string{{"type": "text", "text": s}} }
	msgs := []map[string]any{{"role": "system", "content": part("You are Quill, a concise coding assistant.")}}
	for _, m := range history {
		var content any = part(m.Content)
		if m.Role == "assistant" {
			content = m.Content
		}
		msgs = append(msgs, map[string]any{"role": m.Role, "content": content})
	}
	msgs = append(msgs, map[string]any{"role": "user", "content": part(user)})
	body, err := json.Marshal(map[string]any{"model": "quill-model", "stream": true, "messages": msgs})
	if err != nil {
		tb.Fatal(err)
	}
	req, err := dialog.ParseChatRequest(body)
	if err != nil {
		tb.Fatal(err)
	}
	return req
}

// The judge reads a Quill request by Quill's adapter: the code its Explain
// This command sends is context, not the developer's words, so neither its
// comments (a "fix", an "error", Chinese) nor its identifiers decide the
// intent or locale.
func TestQuillSubjectQueryExcludesContext(t *testing.T) {
	quill, err := adapter.LoadForRecords(filepath.Join("..", "internal", "testdata", "quill", "adapter.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ask, err := adapter.LoadForRecords(adapter.DefaultName)
	if err != nil {
		t.Fatal(err)
	}
	set := adapter.Set{ask, quill}
	code := "func Reverse(s string) string {\n\t// 修复: this panics with an error on bad input, fix it\n\trs := []rune(s)\n\treturn string(rs)\n}"
	explain := "Explain this code from strs/strs.go:\n\n" + code
	cfg := &dialog.ChatConfig{ID: "quill-explain", Plugin: "quill"}

	s := NewSubject(quillRequest(t, nil, explain), cfg, set)
	if s.Query != "" || s.Intent != vocab.IntentExplain || s.Locale != "en" {
		t.Errorf("explain this: query %q intent %q locale %q; want no words of the developer's, explain, en", s.Query, s.Intent, s.Locale)
	}
	// Read as the developer's words, the code would make it a Chinese fix.
	if raw := NewSubject(quillRequest(t, nil, explain), cfg, nil); raw.Query != explain || raw.Intent != vocab.IntentFix {
		t.Errorf("without a reader: query %q intent %q", raw.Query, raw.Intent)
	}

	history := []dialog.Message{{Role: "user", Content: explain}, {Role: "assistant", Content: "It reverses s by runes."}}
	s = NewSubject(quillRequest(t, history, "这个函数对空字符串安全吗？为什么？"), cfg, set)
	if s.Query != "这个函数对空字符串安全吗？为什么？" || s.Locale != "zh" || s.Intent != vocab.IntentExplain {
		t.Errorf("follow-up: query %q intent %q locale %q", s.Query, s.Intent, s.Locale)
	}

	// A config without a plugin field is the run's first adapter's.
	s = NewSubject(quillRequest(t, nil, explain), &dialog.ChatConfig{ID: "c"}, adapter.Set{quill, ask})
	if s.Query != "" || s.Intent != vocab.IntentExplain {
		t.Errorf("default plugin quill: query %q intent %q", s.Query, s.Intent)
	}
}
