package adapter

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"dialogfarm/dialog"
)

// askUser is the reference plugin's user message (plugin/prompt.js
// userContent) for a selection or the code around the cursor.
func askUser(file, lang, region, code, instruction string) string {
	return "File: " + file + "\nLanguage: " + lang + "\nCursor: line 8, column 3\n" + region + ":\n```" + lang + "\n" +
		code + "\n```\n\n" + instruction
}

const (
	goLoop = "\tfor i, r := range s {\n\t\t// TODO fix: panics on an error\n\t\tout[n-1-i] = r\n\t}"
	pyCode = "def mean(xs):\n    \"\"\"Explain the edge case.\"\"\"\n    return sum(xs) / len(xs)"

	askTests = "Write unit tests for this code using the usual test framework for this language. Cover normal cases, edge cases and errors."
	askFix   = "Find the bugs in this code and fix them. Show the corrected code and explain each change."
)

// body is a captured request body: Ask sends string contents, Quill
// content-part arrays.
func body(tb testing.TB, parts bool, msgs ...[2]string) []byte {
	tb.Helper()
	var out []map[string]any
	for _, m := range msgs {
		var content any = m[1]
		if parts && m[0] != "assistant" {
			content = []map[string]string{{"type": "text", "text": m[1]}}
		}
		out = append(out, map[string]any{"role": m[0], "content": content})
	}
	b, err := json.Marshal(map[string]any{"model": "m", "stream": true, "messages": out})
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func TestReadUserMessages(t *testing.T) {
	ask, err := Load("ask", "..")
	if err != nil {
		t.Fatal(err)
	}
	quill, err := Load(filepath.Join("..", "internal", "testdata", "quill", "adapter.yaml"), "..")
	if err != nil {
		t.Fatal(err)
	}
	set := Set{ask, quill}
	sys := [2]string{"system", "You are a coding assistant."}
	cases := []struct {
		name, plugin string
		body         []byte
		want         dialog.UserMessage
	}{
		{"ask selection, free text", "", body(t, false, sys, [2]string{"user", askUser("strs/strs.go", "go", "Selected code (lines 6-9)", goLoop, "Why runes and not bytes?")}),
			dialog.UserMessage{Instruction: "Why runes and not bytes?", Query: "Why runes and not bytes?", Language: "go"}},
		{"ask cursor, slash command with words", "ask", body(t, false, sys, [2]string{"user", askUser("pkg/calc.py", "python", "Code around the cursor (lines 1-3)", pyCode, askTests+"\n用 pytest 覆盖空列表")}),
			dialog.UserMessage{Instruction: askTests + "\n用 pytest 覆盖空列表", Query: "用 pytest 覆盖空列表", Intent: "tests", Language: "python"}},
		{"ask command alone", "ask", body(t, false, sys, [2]string{"user", askUser("pkg/calc.py", "python", "Selected code (lines 1-3)", pyCode, askFix)}),
			dialog.UserMessage{Instruction: askFix, Query: "", Intent: "fix", Language: "python"}},
		{"ask with no editor open", "", body(t, false, sys, [2]string{"user", askFix + "\nthe loop never ends"}),
			dialog.UserMessage{Instruction: askFix + "\nthe loop never ends", Query: "the loop never ends", Intent: "fix"}},
		{"ask second turn", "", body(t, false, sys, [2]string{"user", askUser("strs/strs.go", "go", "Selected code (lines 6-9)", goLoop, "Why runes?")},
			[2]string{"assistant", "Because of UTF-8."}, [2]string{"user", askUser("strs/strs.go", "go", "Selected code (lines 6-9)", goLoop, "And for empty input?")}),
			dialog.UserMessage{Instruction: "And for empty input?", Query: "And for empty input?", Language: "go"}},
		{"quill typed question", "quill", body(t, true, sys, [2]string{"user", "How do I sort a list in place?"}),
			dialog.UserMessage{Instruction: "How do I sort a list in place?", Query: "How do I sort a list in place?"}},
		{"quill explain this", "quill", body(t, true, sys, [2]string{"user", "Explain this code from strs/strs.go:\n\n" + goLoop}),
			dialog.UserMessage{Instruction: "Explain this code", Intent: "explain"}},
		{"quill question after explain this", "quill", body(t, true, sys, [2]string{"user", "Explain this code from strs/strs.go:\n\n" + goLoop},
			[2]string{"assistant", "It reverses s."}, [2]string{"user", "Is it safe for empty input?"}),
			dialog.UserMessage{Instruction: "Is it safe for empty input?", Query: "Is it safe for empty input?"}},
		{"unknown plugin: all words", "nope", body(t, true, sys, [2]string{"user", "Explain this code from a.go:\n\nx := 1"}),
			dialog.UserMessage{Instruction: "Explain this code from a.go:\n\nx := 1", Query: "Explain this code from a.go:\n\nx := 1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, err := dialog.ParseChatRequest(c.body)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, set.ReadUser(c.plugin, req.LastUser())); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// The bundled adapter's templates are the reference plugin's, word for word.
func TestAskTemplatesAreThePlugins(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "plugin", "prompt.js"))
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile(`(?s)const SLASH_COMMANDS = Object\.freeze\(\{(.*?)\}\);`).FindSubmatch(src)
	if block == nil {
		t.Fatal("no SLASH_COMMANDS in plugin/prompt.js")
	}
	entry := regexp.MustCompile(`(?m)^\s*(\w+): (?:'([^']*)'|"([^"]*)"),$`)
	intentOf := map[string]string{"explain": "explain", "fix": "fix", "tests": "tests", "doc": "docs", "optimize": "optimize"}
	want := map[string]string{}
	for _, m := range entry.FindAllSubmatch(block[1], -1) {
		want[string(m[2])+string(m[3])] = intentOf[string(m[1])]
	}
	a, err := Load("ask", "..")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, tp := range a.Prompt.Templates {
		got[tp.Text] = tp.Intent
	}
	if len(want) != 5 || !cmp.Equal(want, got) {
		t.Errorf("ask templates differ from plugin/prompt.js (-plugin +adapter):\n%s", cmp.Diff(want, got))
	}
}

// LoadForRecords reads an adapter whose plugin is not installed here.
func TestLoadForRecords(t *testing.T) {
	dir := t.TempDir()
	src := strings.Replace(minimal, "  vsix: mini.vsix\n", "  folder: not-here\n", 1) +
		"prompt:\n  templates:\n    - {intent: explain, text: Explain}\n"
	path := filepath.Join(dir, "mini.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path, dir); err == nil || !strings.Contains(err.Error(), "field extension.folder: no package.json") {
		t.Fatalf("Load: %v", err)
	}
	a, err := LoadForRecords(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := (Set{a}).ReadUser("mini", "Explain\nthe loop"); got.Intent != "explain" || got.Query != "the loop" {
		t.Errorf("read %+v", got)
	}
	if _, err := LoadForRecords("ask"); err != nil {
		t.Errorf("bundled ask for records: %v", err)
	}
}
