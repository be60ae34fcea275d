package driver

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"dialogfarm/adapter"
	"dialogfarm/dialog"
	"dialogfarm/internal/vsix"
)

// The second plugin, Quill (internal/testdata/quill), runs in the same
// editor as the reference plugin, through its own adapter: a contenteditable
// composer sent with Ctrl+Enter, content-part messages, a non-streaming
// title request after each answer (auxiliary), a provider picked inside the
// view, installed from a .vsix, done when its Send button is enabled again.

const (
	quillSystem = `{"role":"system","content":[{"type":"text","text":"You are Quill, a concise coding assistant."}]}`
	quillTitle  = "Write a title of at most five words for this conversation."
)

// quillAdapter packs Quill into a .vsix in a temporary folder, next to a
// copy of its adapter file, and loads that adapter.
func quillAdapter(t *testing.T, root string) *adapter.Adapter {
	t.Helper()
	src := filepath.Join(root, "internal", "testdata", "quill")
	dir := t.TempDir()
	if err := vsix.Pack(filepath.Join(src, "extension"), filepath.Join(dir, "quill.vsix")); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(src, "adapter.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "adapter.yaml")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := adapter.Load(path, root)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// quillConfigs use every trigger Quill supports: the view opened by its
// activity bar icon, palette and keybinding; "Explain This" by palette,
// keybinding and context menu; a second typed turn after a command.
func quillConfigs() []dialog.ChatConfig {
	pos, sel, ptr, turns := configPos, configSel, configPtr, configTurns
	py, goFile := "pkg/calc.py", "strs/strs.go"
	q := func(c dialog.ChatConfig) dialog.ChatConfig { c.Plugin = "quill"; return c }
	return []dialog.ChatConfig{
		q(dialog.ChatConfig{ID: "quill-panel-free", File: py, Language: "python", Trigger: dialog.TriggerPanel,
			Instruction: dialog.InstructionFreeText, Turns: turns("How do I sort a list in place?")}),
		q(dialog.ChatConfig{ID: "quill-palette-explain-selection-2turns", File: goFile, Language: "go", Selection: sel(pos(6, 2), pos(8, 3)),
			Trigger: dialog.TriggerPalette, Instruction: dialog.InstructionCommand, Turns: turns("/explain", "Is it safe for empty input?")}),
		q(dialog.ChatConfig{ID: "quill-keybinding-free", File: goFile, Language: "go", Cursor: ptr(pos(6, 3)),
			Trigger: dialog.TriggerKeybinding, Instruction: dialog.InstructionFreeText, Turns: turns("What is a rune in Go?")}),
		q(dialog.ChatConfig{ID: "quill-contextmenu-explain-selection", File: py, Language: "python", Selection: sel(pos(4, 1), pos(9, 1)),
			Trigger: dialog.TriggerContextMenu, Instruction: dialog.InstructionCommand, Turns: turns("/explain")}),
		q(dialog.ChatConfig{ID: "quill-keybinding-explain-cursor", File: py, Language: "python", Cursor: ptr(pos(12, 5)),
			Trigger: dialog.TriggerKeybinding, Instruction: dialog.InstructionCommand, Turns: turns("/explain")}),
		q(dialog.ChatConfig{ID: "quill-palette-free", File: py, Language: "python",
			Trigger: dialog.TriggerPalette, Instruction: dialog.InstructionFreeText, Turns: turns("Name one Python linter")}),
	}
}

// checkQuill asserts from Quill's captured requests: its system message,
// content-part user messages with the query or the explained code, turn 1
// replayed byte for byte in turn 2, no auxiliary request taken as a turn,
// and the view showing the answer sent (white space compared loosely, as its
// adapter says).
func checkQuill(t *testing.T, c dialog.ChatConfig, d dialog.Dialogue) {
	t.Helper()
	if d.Status != dialog.StatusOK || len(d.Turns) != len(c.Turns) {
		t.Fatalf("record: status %q, %d turns, error %q (step %s)", d.Status, len(d.Turns), d.Error, d.FailedStep)
	}
	lines := fileLines(t, filepath.Join(testRepo, c.File))
	var prev []json.RawMessage
	for i, turn := range d.Turns {
		var body struct {
			Stream   bool              `json:"stream"`
			Model    string            `json:"model"`
			Messages []json.RawMessage `json:"messages"`
		}
		if err := json.Unmarshal(turn.Request, &body); err != nil {
			t.Fatalf("turn %d: %v", i+1, err)
		}
		if turn.Auxiliary != "" || bytes.Contains(turn.Request, []byte(quillTitle)) {
			t.Fatalf("turn %d is an auxiliary request: %s", i+1, turn.Request)
		}
		if !body.Stream || body.Model != "quill-model" || len(body.Messages) != 2+2*i || string(body.Messages[0]) != quillSystem {
			t.Fatalf("turn %d: stream %v model %q, %d messages, first %s", i+1, body.Stream, body.Model, len(body.Messages), body.Messages[0])
		}
		var user struct {
			Role    string
			Content []struct{ Type, Text string }
		}
		if err := json.Unmarshal(body.Messages[len(body.Messages)-1], &user); err != nil || user.Role != "user" || len(user.Content) != 1 || user.Content[0].Type != "text" {
			t.Fatalf("turn %d: last message is not a user message of one text part: %s", i+1, body.Messages[len(body.Messages)-1])
		}
		text := user.Content[0].Text
		switch {
		case c.Instruction == dialog.InstructionCommand && i == 0:
			code := ""
			if s := c.Selection; s != nil {
				code = rangeText(lines, *s)
			} else {
				code = lines[c.Cursor.Line-1]
			}
			if want := "Explain this code from " + c.File + ":\n\n" + code; text != want {
				t.Errorf("turn %d: sent %q, want %q", i+1, text, want)
			}
		default:
			if text != c.Turns[i].Query {
				t.Errorf("turn %d: sent %q, want the query %q", i+1, text, c.Turns[i].Query)
			}
		}
		if i > 0 {
			// Turn 1's messages again, byte for byte, then its answer.
			for k, m := range prev {
				if !bytes.Equal(body.Messages[k], m) {
					t.Errorf("turn %d: message %d is %s, turn %d sent %s", i+1, k, body.Messages[k], i, m)
				}
			}
			want, _ := json.Marshal(map[string]string{"role": "assistant", "content": d.Turns[i-1].Answer})
			var got, exp any
			_ = json.Unmarshal(body.Messages[len(prev)], &got)
			_ = json.Unmarshal(want, &exp)
			if !jsonEqual(got, exp) {
				t.Errorf("turn %d: previous answer not replayed: %s", i+1, body.Messages[len(prev)])
			}
		}
		prev = body.Messages
		if turn.Answer == "" || turn.Shown != strings.TrimSpace(turn.Answer) {
			t.Errorf("turn %d: view showed %q, endpoint sent %q", i+1, turn.Shown, turn.Answer)
		}
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// exchangeSink keeps every exchange the endpoint records.
type exchangeSink struct {
	mu  sync.Mutex
	all []dialog.Exchange
}

func (s *exchangeSink) Record(ex dialog.Exchange) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.all = append(s.all, ex)
	return nil
}

// auxiliary returns the recorded auxiliary exchanges.
func (s *exchangeSink) auxiliary() []dialog.Exchange {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []dialog.Exchange
	for _, ex := range s.all {
		if ex.Auxiliary != "" {
			out = append(out, ex)
		}
	}
	return out
}
