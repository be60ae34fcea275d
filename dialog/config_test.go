package dialog_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"dialogfarm/dialog"
	"dialogfarm/internal/golden"
)

// validConfig is a config that passes Validate; each case changes one thing.
func validConfig() dialog.ChatConfig {
	return dialog.ChatConfig{
		ID:          "c1",
		Repo:        "/repos/strs",
		File:        "strs/strs.go",
		Language:    "go",
		Trigger:     dialog.TriggerPanel,
		Instruction: dialog.InstructionFreeText,
		Turns:       []dialog.TurnSpec{{Query: "what does Reverse do?"}},
	}
}

func pos(line, col int) dialog.Position { return dialog.Position{Line: line, Col: col} }

func sel(start, end dialog.Position) *dialog.Selection {
	return &dialog.Selection{Start: start, End: end}
}

func TestValidateRejects(t *testing.T) {
	cases := []struct {
		name   string
		change func(c *dialog.ChatConfig)
		field  string
		msg    string // a part of FieldError.Msg
	}{
		{"missing id", func(c *dialog.ChatConfig) { c.ID = "" }, "id", "is required"},
		{"blank id", func(c *dialog.ChatConfig) { c.ID = " \t" }, "id", "is required"},
		{"missing repo", func(c *dialog.ChatConfig) { c.Repo = "" }, "repo", "is required"},
		{"missing file", func(c *dialog.ChatConfig) { c.File = "" }, "file", "is required"},
		{"absolute file", func(c *dialog.ChatConfig) { c.File = "/etc/passwd" }, "file", `got "/etc/passwd"`},
		{"file starting with ..", func(c *dialog.ChatConfig) { c.File = "../other/x.go" }, "file", "inside the repository"},
		{"file climbing out in the middle", func(c *dialog.ChatConfig) { c.File = "a/../../x.go" }, "file", "inside the repository"},
		{"file that is ..", func(c *dialog.ChatConfig) { c.File = ".." }, "file", "inside the repository"},
		{"empty trigger", func(c *dialog.ChatConfig) { c.Trigger = "" }, "trigger", "must be one of panel, palette, keybinding, context_menu"},
		{"unknown trigger", func(c *dialog.ChatConfig) { c.Trigger = "voice" }, "trigger", `got "voice"`},
		{"trigger in wrong case", func(c *dialog.ChatConfig) { c.Trigger = "Panel" }, "trigger", `got "Panel"`},
		{"unknown instruction", func(c *dialog.ChatConfig) { c.Instruction = "chat" }, "instruction", `must be one of free_text, slash_command, command, got "chat"`},
		{"no turns", func(c *dialog.ChatConfig) { c.Turns = nil }, "turns", "needs at least one turn"},
		{"empty first query", func(c *dialog.ChatConfig) { c.Turns[0].Query = "" }, "turns[0].query", "is empty"},
		{"blank later query", func(c *dialog.ChatConfig) {
			c.Turns = append(c.Turns, dialog.TurnSpec{Query: "ok"}, dialog.TurnSpec{Query: " \n\t"})
		}, "turns[2].query", "is empty"},
		{"cursor line 0", func(c *dialog.ChatConfig) { c.Cursor = &dialog.Position{Line: 0, Col: 1} }, "cursor", "1-based, got line 0 col 1"},
		{"cursor col 0", func(c *dialog.ChatConfig) { c.Cursor = &dialog.Position{Line: 3, Col: 0} }, "cursor", "1-based, got line 3 col 0"},
		{"cursor negative", func(c *dialog.ChatConfig) { c.Cursor = &dialog.Position{Line: -1, Col: 2} }, "cursor", "1-based"},
		{"selection start col 0", func(c *dialog.ChatConfig) { c.Selection = sel(pos(2, 0), pos(4, 1)) }, "selection.start", "1-based, got line 2 col 0"},
		{"selection end line 0", func(c *dialog.ChatConfig) { c.Selection = sel(pos(2, 1), pos(0, 4)) }, "selection.end", "1-based, got line 0 col 4"},
		{"selection end on an earlier line", func(c *dialog.ChatConfig) { c.Selection = sel(pos(5, 1), pos(4, 9)) }, "selection.end", "must come after selection.start"},
		{"selection end before start on one line", func(c *dialog.ChatConfig) { c.Selection = sel(pos(5, 8), pos(5, 3)) }, "selection.end", "must come after selection.start"},
		{"empty selection", func(c *dialog.ChatConfig) { c.Selection = sel(pos(5, 8), pos(5, 8)) }, "selection.end", "must come after selection.start"},
		{"slash_command without slash", func(c *dialog.ChatConfig) {
			c.Instruction = dialog.InstructionSlash
			c.Turns[0].Query = "explain this"
		}, "turns[0].query", `must start with '/', got "explain this"`},
		{"slash_command with leading space", func(c *dialog.ChatConfig) {
			c.Instruction = dialog.InstructionSlash
			c.Turns[0].Query = " /explain"
		}, "turns[0].query", "must start with '/'"},
		{"command with trigger panel", func(c *dialog.ChatConfig) {
			c.Instruction, c.Trigger = dialog.InstructionCommand, dialog.TriggerPanel
			c.Turns[0].Query = "/fix"
		}, "trigger", "not panel"},
		{"command with words after it", func(c *dialog.ChatConfig) {
			c.Instruction, c.Trigger = dialog.InstructionCommand, dialog.TriggerPalette
			c.Turns[0].Query = "/fix this"
		}, "turns[0].query", `names one plugin command by its slash form (e.g. /explain), got "/fix this"`},
		{"command given as free text", func(c *dialog.ChatConfig) {
			c.Instruction, c.Trigger = dialog.InstructionCommand, dialog.TriggerKeybinding
			c.Turns[0].Query = "please fix this"
		}, "turns[0].query", "names one plugin command"},
		{"command by its title", func(c *dialog.ChatConfig) {
			c.Instruction, c.Trigger = dialog.InstructionCommand, dialog.TriggerContextMenu
			c.Turns[0].Query = "Ask: Fix Selection"
		}, "turns[0].query", "names one plugin command"},
		{"empty open file", func(c *dialog.ChatConfig) { c.OpenFiles = []string{"a.go", ""} }, "open_files[1]", `got ""`},
		{"absolute open file", func(c *dialog.ChatConfig) { c.OpenFiles = []string{"/abs.go"} }, "open_files[0]", `got "/abs.go"`},
		{"open file outside the repository", func(c *dialog.ChatConfig) { c.OpenFiles = []string{"a.go", "b.go", "x/../../c.go"} }, "open_files[2]", "inside the repository"},
		{"blank follow-up kind", func(c *dialog.ChatConfig) {
			c.FollowUp = &dialog.FollowUpPolicy{Kinds: []string{"clarify", "  "}}
		}, "follow_up.kinds[1]", "is empty"},
		{"empty first follow-up kind", func(c *dialog.ChatConfig) {
			c.FollowUp = &dialog.FollowUpPolicy{Kinds: []string{""}}
		}, "follow_up.kinds[0]", "is empty"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := validConfig()
			c.change(&cfg)
			err := cfg.Validate()
			var fe *dialog.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Validate() = %v, want a *dialog.FieldError", err)
			}
			if fe.Field != c.field {
				t.Errorf("field = %q, want %q (error %q)", fe.Field, c.field, err)
			}
			if !strings.Contains(fe.Msg, c.msg) {
				t.Errorf("msg = %q, want it to contain %q", fe.Msg, c.msg)
			}
			if fe.ID != cfg.ID {
				t.Errorf("id = %q, want %q", fe.ID, cfg.ID)
			}
			if fe.File != "" || fe.Line != 0 {
				t.Errorf("Validate set file %q line %d; only ReadConfigs knows them", fe.File, fe.Line)
			}
			if want := "field " + c.field + ": "; !strings.Contains(err.Error(), want) {
				t.Errorf("Error() = %q, want it to contain %q", err, want)
			}
		})
	}
}

func TestValidateAccepts(t *testing.T) {
	cases := []struct {
		name   string
		change func(c *dialog.ChatConfig)
	}{
		{"minimal", func(c *dialog.ChatConfig) {}},
		{"file in the root", func(c *dialog.ChatConfig) { c.File = "main.go" }},
		{"dots inside a name", func(c *dialog.ChatConfig) { c.File = "a..b/..c.go" }},
		{"cursor at 1:1", func(c *dialog.ChatConfig) { c.Cursor = &dialog.Position{Line: 1, Col: 1} }},
		{"one-character selection", func(c *dialog.ChatConfig) { c.Selection = sel(pos(3, 4), pos(3, 5)) }},
		{"selection ending at col 1 of a later line", func(c *dialog.ChatConfig) { c.Selection = sel(pos(3, 9), pos(4, 1)) }},
		{"selection ending at a lower col on a later line", func(c *dialog.ChatConfig) { c.Selection = sel(pos(3, 9), pos(7, 2)) }},
		{"trigger palette", func(c *dialog.ChatConfig) { c.Trigger = dialog.TriggerPalette }},
		{"trigger keybinding", func(c *dialog.ChatConfig) { c.Trigger = dialog.TriggerKeybinding }},
		{"trigger context_menu", func(c *dialog.ChatConfig) { c.Trigger = dialog.TriggerContextMenu }},
		{"slash command", func(c *dialog.ChatConfig) {
			c.Instruction = dialog.InstructionSlash
			c.Turns[0].Query = "/tests cover the empty string"
		}},
		{"slash command not known to the plugin", func(c *dialog.ChatConfig) {
			c.Instruction = dialog.InstructionSlash
			c.Turns[0].Query = "/optimize"
		}},
		{"command from the palette", func(c *dialog.ChatConfig) {
			c.Instruction, c.Trigger = dialog.InstructionCommand, dialog.TriggerPalette
			c.Turns[0].Query = "/explain"
		}},
		{"command from the context menu with follow-ups", func(c *dialog.ChatConfig) {
			c.Instruction, c.Trigger = dialog.InstructionCommand, dialog.TriggerContextMenu
			c.Turns = []dialog.TurnSpec{{Query: "/doc"}, {Query: "shorter please"}}
			c.FollowUp = &dialog.FollowUpPolicy{Kinds: []string{"ask_tests", "simplify"}}
		}},
		{"open files", func(c *dialog.ChatConfig) { c.OpenFiles = []string{"pkg/calc.py", "strs/strs.go"} }},
		{"follow-up policy without kinds", func(c *dialog.ChatConfig) { c.FollowUp = &dialog.FollowUpPolicy{} }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := validConfig()
			c.change(&cfg)
			if err := cfg.Validate(); err != nil {
				t.Errorf("Validate() = %v, want nil", err)
			}
		})
	}
}

func TestFieldErrorString(t *testing.T) {
	cases := []struct {
		name string
		err  dialog.FieldError
		want string
	}{
		{"everything", dialog.FieldError{File: "configs.jsonl", Line: 3, ID: "c3", Field: "trigger", Msg: "bad"},
			`configs.jsonl:3: config "c3": field trigger: bad`},
		{"file without line", dialog.FieldError{File: "configs.jsonl", ID: "c3", Msg: "bad"}, `configs.jsonl: config "c3": bad`},
		{"no file", dialog.FieldError{ID: "c3", Field: "id", Msg: "bad"}, `config "c3": field id: bad`},
		{"message only", dialog.FieldError{Line: 7, Msg: "bad"}, "bad"},
		{"adapter file", dialog.FieldError{File: "mini.yaml", Line: 12, Field: "input.method", Msg: "must be fill"},
			"mini.yaml:12: field input.method: must be fill"},
		{"profile path only", dialog.FieldError{File: "p.yaml", Line: 5, Field: "dimensions.intent.explian", Msg: "unknown value", PathOnly: true},
			"p.yaml:5: dimensions.intent.explian: unknown value"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.err.Error(); got != c.want {
				t.Errorf("Error() = %q, want %q", got, c.want)
			}
		})
	}
}

// configsInput has valid and malformed lines; wantErrs lists the malformed
// ones by line number.
const configsInput = `# configs for the strs repository
{"id":"c1","repo":"/repos/strs","file":"strs/strs.go","language":"go","trigger":"panel","instruction":"free_text","turns":[{"query":"what does Reverse do?"}]}

{"id":"c2","repo":"/repos/strs","file":"strs/strs.go","cursor":{"line":"ten","col":1},"trigger":"panel","instruction":"free_text","turns":[{"query":"q"}]}
this is not json
{"id":"c3","repo":"/repos/strs","file":"strs/strs.go","trigger":"panel","instruction":"free_text","turns":[{"query":"q"}],"colour":"red"}
  {"id":"c4","repo":"/repos/strs","file":"strs/strs.go","cursor":{"line":5,"col":2},"trigger":"palette","instruction":"slash_command","turns":[{"query":"/explain"}]}
	# an indented comment
{"id":"c1","repo":"/repos/strs","file":"strs/strs.go","trigger":"keybinding","instruction":"free_text","turns":[{"query":"again"}]}
{"id":"c5","repo":"/repos/strs","file":"strs/strs.go","trigger":"voice","instruction":"free_text","turns":[{"query":"q"}]}
{"id":"c6","repo":"/repos/strs","file":"strs/strs.go","selection":{"start":{"line":4,"col":2},"end":{"line":6,"col":1}},"trigger":"context_menu","instruction":"command","turns":[{"query":"/fix"}]}
{"id":"c7","repo":"/repos/strs","file":"strs/strs.go","selection":{"start":{"line":4,"col":2},"end":{"line":3,"col":1}},"trigger":"panel","instruction":"free_text","turns":[{"query":"q"}]}
`

func TestReadConfigs(t *testing.T) {
	got, err := dialog.ReadConfigs(strings.NewReader(configsInput), "configs.jsonl")

	want := []dialog.ChatConfig{
		{ID: "c1", Repo: "/repos/strs", File: "strs/strs.go", Language: "go", Trigger: dialog.TriggerPanel,
			Instruction: dialog.InstructionFreeText, Turns: []dialog.TurnSpec{{Query: "what does Reverse do?"}}},
		{ID: "c4", Repo: "/repos/strs", File: "strs/strs.go", Cursor: &dialog.Position{Line: 5, Col: 2}, Trigger: dialog.TriggerPalette,
			Instruction: dialog.InstructionSlash, Turns: []dialog.TurnSpec{{Query: "/explain"}}},
		{ID: "c6", Repo: "/repos/strs", File: "strs/strs.go", Selection: sel(pos(4, 2), pos(6, 1)), Trigger: dialog.TriggerContextMenu,
			Instruction: dialog.InstructionCommand, Turns: []dialog.TurnSpec{{Query: "/fix"}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("configs (-want +got):\n%s", diff)
	}

	wantErrs := []struct {
		line      int
		id, field string
	}{
		{4, "c2", "cursor.line"},
		{5, "", ""},
		{6, "c3", "colour"},
		{9, "c1", "id"},
		{10, "c5", "trigger"},
		{12, "c7", "selection.end"},
	}
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		t.Fatalf("err = %#v, want a joined error", err)
	}
	errs := joined.Unwrap()
	if len(errs) != len(wantErrs) {
		t.Fatalf("%d errors, want %d:\n%v", len(errs), len(wantErrs), err)
	}
	for i, w := range wantErrs {
		t.Run(fmt.Sprintf("line %d", w.line), func(t *testing.T) {
			var fe *dialog.FieldError
			if !errors.As(errs[i], &fe) {
				t.Fatalf("error %d = %#v, want a *dialog.FieldError", i, errs[i])
			}
			if fe.File != "configs.jsonl" || fe.Line != w.line || fe.ID != w.id || fe.Field != w.field {
				t.Errorf("got file %q line %d id %q field %q, want configs.jsonl line %d id %q field %q",
					fe.File, fe.Line, fe.ID, fe.Field, w.line, w.id, w.field)
			}
			prefix := fmt.Sprintf("configs.jsonl:%d: ", w.line)
			if w.id != "" {
				prefix += fmt.Sprintf("config %q: field %s: ", w.id, w.field)
			}
			if !strings.HasPrefix(fe.Error(), prefix) {
				t.Errorf("Error() = %q, want prefix %q", fe.Error(), prefix)
			}
		})
	}

	// errors.As through the joined error finds the first bad line.
	var first *dialog.FieldError
	if !errors.As(err, &first) || first.Line != 4 || first.Field != "cursor.line" {
		t.Errorf("errors.As(joined) = %+v, want the line 4 error", first)
	}
	if !strings.Contains(err.Error(), "duplicate id, first on line 2") {
		t.Errorf("the duplicate id error does not name the first line:\n%v", err)
	}
	golden.Check(t, filepath.Join("testdata", "read_configs_errors.golden"), []byte(err.Error()+"\n"))
}

func TestReadConfigsClean(t *testing.T) {
	long := strings.Repeat("why? ", 40_000) // a 200 kB line, past bufio's default 64 kB
	cases := []struct {
		name  string
		input string
		ids   []string
	}{
		{"empty", "", nil},
		{"only comments and blanks", "# a\n\n   \n#b", nil},
		{"no trailing newline", `{"id":"a","repo":"r","file":"f.go","trigger":"panel","instruction":"free_text","turns":[{"query":"q"}]}`, []string{"a"}},
		{"CRLF lines", "# x\r\n" +
			`{"id":"a","repo":"r","file":"f.go","trigger":"panel","instruction":"free_text","turns":[{"query":"q"}]}` + "\r\n" +
			`{"id":"b","repo":"r","file":"f.go","trigger":"panel","instruction":"free_text","turns":[{"query":"q"}]}` + "\r\n", []string{"a", "b"}},
		{"long line", `{"id":"long","repo":"r","file":"f.go","trigger":"panel","instruction":"free_text","turns":[{"query":"` + long + `"}]}`, []string{"long"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := dialog.ReadConfigs(strings.NewReader(c.input), "configs.jsonl")
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			var ids []string
			for _, g := range got {
				ids = append(ids, g.ID)
			}
			if diff := cmp.Diff(c.ids, ids); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
		})
	}
}
