package workbench

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"dialogfarm/adapter"
	"dialogfarm/dialog"
	"dialogfarm/internal/golden"
)

// draftReport is what a probe of a plugin like the held-out one reports:
// a custom-element send button, a rendered markdown answer done when its
// stop button goes, a non-streaming title request after the answer.
func draftReport(t *testing.T) ProbeReport {
	t.Helper()
	body := func(v any) []byte {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	msg := "Hello from dialogfarm probe"
	in := ProbeInput{Selector: "div.tiptap.ProseMirror", Kind: "prosemirror", Method: "type", Visible: true, Enabled: true, Score: 95, Why: "prosemirror +40"}
	return ProbeReport{
		ExtensionID: "acme.chat", Extension: filepath.Join("ext", "acme-chat.vsix"), ActivityBar: []string{"Acme Chat"},
		Commands: []ProbeCommand{{ID: "acme.newTask", Title: "Acme: New Task"}, {ID: "acme.focus", Title: "Acme: Focus Chat View", Keybinding: "ctrl+alt+k"}},
		Frames:   []string{`iframe.webview.ready[src*="extensionId={{extension_id}}"]`, "iframe#active-frame"},
		Elements: []ProbeElement{
			{Kind: "input", Selector: `input[placeholder="Search history"]`, Label: "Search history"},
			{Kind: "vscode-button", Selector: `vscode-button[aria-label="New chat"]`, Label: "New chat", Shadow: "open"},
			{Kind: "vscode-button", Selector: `vscode-button[aria-label="Send"]`, Label: "Send", Shadow: "open"},
		},
		Inputs:   []ProbeInput{in, {Selector: `input[placeholder="Search history"]`, Kind: "input", Method: "fill", Visible: true, Enabled: true, Score: -10}},
		Attempts: []ProbeAttempt{{Input: in.Selector, Method: "key enter", Outcome: outcomeRequest, Seconds: 1.2}},
		Input:    &in, Send: adapter.Send{Key: "enter"}, Sent: "key enter", Message: msg,
		Requests: []dialog.Exchange{
			{Request: body(map[string]any{"stream": true, "messages": []any{map[string]any{"role": "system", "content": "You are Acme."},
				map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": msg}}}}})},
			{Request: body(map[string]any{"stream": false, "messages": []any{map[string]any{"role": "user", "content": "Generate a concise title for this task: " + msg}}})},
		},
		Observed: &ProbeObserved{User: `[class*="message_user"]`, Answer: ".message_assistant__k1", Text: ".markdown", Compare: "markdown",
			Done: adapter.Done{Disappears: "span.codicon.codicon-debug-stop"}, Evidence: []string{"the answer is rendered from markdown"}},
		Settings: map[string]any{"acme.providerStorageLocation": "file"},
		Files: []adapter.File{{Path: "User/globalStorage/{{extension_id}}/acme-providers.json",
			Content: "{\"p\": {\"apiProtocol\": \"http\", \"apiHostname\": \"{{capture_host}}\", \"apiPort\": {{capture_port}},\n  \"apiPath\": \"{{capture_path}}\", \"apiKey\": \"{{secret}}\"}}\n"}},
		Isolation: adapter.IsolationEditor,
	}
}

// TestDraftAdapter writes the draft adapter of a probe report, which
// validates as written and says what it rests on (golden).
func TestDraftAdapter(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "acme.yaml")
	rep := draftReport(t)
	rep.Extension = filepath.Join(dir, "ext", "acme-chat.vsix")
	out, err := DraftAdapter(rep, path)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	golden.Check(t, filepath.Join("testdata", "probe", "draft.golden.yaml"), out)
	a, err := adapter.Parse(out, path, dir)
	if err != nil {
		t.Fatal(err)
	}
	if !a.Isolated() || len(a.Files) != 1 || a.Extension.VSIX != filepath.Join("ext", "acme-chat.vsix") || a.Input.Send.Key != "enter" || a.Answer.Done.Disappears == "" || a.NewChat.Button != `vscode-button[aria-label="New chat"]` {
		t.Errorf("draft: %+v", a)
	}
	cl := a.Classifier()
	if cl.Auxiliary(adapter.Request{Stream: false, User: "Generate a concise title for this task: other words"}) != "title" ||
		cl.Auxiliary(adapter.Request{Stream: true, System: "You are Acme.", User: "Generate a concise title"}) != "" {
		t.Errorf("the title rule does not tell the title request from a chat turn: %+v", a.Traffic.Auxiliary)
	}

	// Without an observed answer the draft says what to fill in, and does
	// not pass for an adapter.
	rep.Observed = nil
	out, err = DraftAdapter(rep, path)
	if err == nil || !strings.Contains(string(out), "TODO") {
		t.Errorf("a draft without the answer: err %v\n%s", err, out)
	}
}
