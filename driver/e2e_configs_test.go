package driver

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"dialogfarm/dialog"
	"dialogfarm/internal/llmtest"
)

// The configs of TestEndToEnd, the fake model's answers, and reading the
// files they point into.

const testRepo = "testdata/repo"

// Shorthands for writing the test configs.
func configPos(l, c int) dialog.Position               { return dialog.Position{Line: l, Col: c} }
func configSel(a, b dialog.Position) *dialog.Selection { return &dialog.Selection{Start: a, End: b} }
func configPtr(p dialog.Position) *dialog.Position     { return &p }
func configTurns(qs ...string) []dialog.TurnSpec {
	var ts []dialog.TurnSpec
	for _, q := range qs {
		ts = append(ts, dialog.TurnSpec{Query: q})
	}
	return ts
}

func e2eConfigs() []dialog.ChatConfig {
	pos, sel, ptr, turns := configPos, configSel, configPtr, configTurns
	py, goFile := "pkg/calc.py", "strs/strs.go"
	return []dialog.ChatConfig{
		{ID: "panel-selection-2turns", File: py, Language: "python", Selection: sel(pos(4, 1), pos(9, 1)),
			Trigger: dialog.TriggerPanel, Instruction: dialog.InstructionFreeText,
			Turns: turns("What does this function do?", "What happens when values is empty?")},
		{ID: "keybinding-slash-cursor-in-func", File: goFile, Language: "go", Cursor: ptr(pos(6, 3)),
			Trigger: dialog.TriggerKeybinding, Instruction: dialog.InstructionSlash, Turns: turns("/tests for empty input")},
		{ID: "palette-idle-cursor", File: py, Language: "python",
			Trigger: dialog.TriggerPalette, Instruction: dialog.InstructionFreeText, Turns: turns("Summarize this file in one line")},
		// A cursor with a selection, as configgen writes them: the cursor
		// at the selection's end, where selecting leaves it.
		{ID: "contextmenu-command-partial-block", File: goFile, Language: "go", Selection: sel(pos(6, 2), pos(8, 3)), Cursor: ptr(pos(8, 3)),
			Trigger: dialog.TriggerContextMenu, Instruction: dialog.InstructionCommand, Turns: turns("/explain")},
		{ID: "palette-command-single-line", File: py, Language: "python", Selection: sel(pos(12, 5), pos(12, 16)),
			Trigger: dialog.TriggerPalette, Instruction: dialog.InstructionCommand, Turns: turns("/fix")},
		{ID: "keybinding-command-cursor", File: py, Language: "python", Cursor: ptr(pos(15, 9)),
			Trigger: dialog.TriggerKeybinding, Instruction: dialog.InstructionCommand, Turns: turns("/doc")},
		{ID: "contextmenu-free-text", File: py, Language: "python", Cursor: ptr(pos(13, 9)),
			Trigger: dialog.TriggerContextMenu, Instruction: dialog.InstructionFreeText, Turns: turns("Why return low here?")},
		// A whole function longer than the editor shows, its end below
		// the view when the file opens at its start: the keyboard
		// scrolls to the end, which a Shift+click selects.
		{ID: "keybinding-selection-beyond-view", File: "pkg/units.py", Language: "python", Selection: sel(pos(144, 1), pos(209, 26)),
			Trigger: dialog.TriggerKeybinding, Instruction: dialog.InstructionFreeText, Turns: turns("What does report return?")},
		// The same from the context menu: the right click lands on a
		// selected line in view, not on one scrolled half out of it.
		{ID: "contextmenu-selection-beyond-view", File: "pkg/units.py", Language: "python", Selection: sel(pos(121, 1), pos(180, 1)),
			Trigger: dialog.TriggerContextMenu, Instruction: dialog.InstructionFreeText, Turns: turns("Which conversions are these?")},
	}
}

// e2eAnswer is what the fake model answers: distinct per request, with
// markdown, code, markup characters and non-ASCII text, so that "the view
// shows exactly the answer" is a real check.
func e2eAnswer(r llmtest.Request) llmtest.Reply {
	q := r.LastUser()
	last := q[strings.LastIndex(q, "\n")+1:]
	return llmtest.Reply{Text: "Answer " + itoa(r.Seq) + " to «" + last + "»:\n\n```python\nif a < b && c > d:\n    return \"<ok>\"\n```\n  trailing  "}
}

func fileLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(string(data), "\n")
}

// rangeText cuts a selection out of the file's lines, independently of the
// driver's own code.
func rangeText(lines []string, s dialog.Selection) string {
	var parts []string
	for l := s.Start.Line; l <= s.End.Line; l++ {
		r := []rune(lines[l-1])
		from, to := 0, len(r)
		if l == s.Start.Line {
			from = s.Start.Col - 1
		}
		if l == s.End.Line {
			to = s.End.Col - 1
		}
		parts = append(parts, string(r[from:to]))
	}
	return strings.Join(parts, "\n")
}

func itoa(n int) string { return strconv.Itoa(n) }
