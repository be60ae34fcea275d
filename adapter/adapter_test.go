package adapter

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"dialogfarm/dialog"
)

func TestBundledAskLoads(t *testing.T) {
	a, err := Load("ask", "..")
	if err != nil {
		t.Fatal(err)
	}
	if a.Extension.ID != "dialogfarm.askplugin" || a.Path(a.Extension.Folder) != filepath.Join("..", "plugin") {
		t.Errorf("extension %+v, folder %s", a.Extension, a.Path(a.Extension.Folder))
	}
	if got := a.Triggers(); !cmp.Equal(got, []string{"panel", "palette", "keybinding", "context_menu"}) {
		t.Errorf("triggers %v", got)
	}
	c, ok := a.CommandFor("/explain")
	if !ok || c.Title != "Ask: Explain Selection" {
		t.Errorf("/explain: %+v %v", c, ok)
	}
	got := a.ExpandSettings(Vars{CaptureURL: "http://127.0.0.1:9/s/s1/v1", Session: "s1", Secret: "k"})
	want := map[string]any{"askplugin.baseUrl": "http://127.0.0.1:9/s/s1/v1", "askplugin.apiKey": "k"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("settings (-want +got):\n%s", diff)
	}
	if f := a.Frames(); f[0] != `iframe.webview.ready[src*="extensionId=dialogfarm.askplugin"]` {
		t.Errorf("frames %q", f)
	}
}

func TestUnknownBundled(t *testing.T) {
	_, err := Load("nope", "..")
	if err == nil || !strings.Contains(err.Error(), "no such bundled adapter") || !strings.Contains(err.Error(), "ask") {
		t.Fatalf("err = %v", err)
	}
}

// minimal is a valid adapter; the cases below break one thing each.
const minimal = `name: mini
extension:
  id: pub.mini
  vsix: mini.vsix
open:
  activity_bar: Mini
webview:
  frames: ['iframe.webview']
  ready: 'body'
input:
  selector: '#in'
  method: type
  send:
    key: ctrl+enter
answer:
  selector: '.msg'
  done:
    enabled: '#send'
new_chat:
  button: '#new'
`

func TestParseErrorsNameFileLineField(t *testing.T) {
	if _, err := Parse([]byte(minimal), "mini.yaml", t.TempDir()); err != nil {
		t.Fatalf("minimal adapter: %v", err)
	}
	cases := []struct{ name, from, to, want string }{
		{"unknown field", "  method: type\n", "  method: type\n  methd: fill\n", "mini.yaml:13: field methd: unknown field"},
		{"wrong type", "  frames: ['iframe.webview']\n", "  frames: {a: b}\n", "mini.yaml:8: cannot unmarshal"},
		{"bad method", "method: type", "method: paste", "mini.yaml:12: field input.method: must be fill"},
		{"bad key", "key: ctrl+enter", "key: ctrl+entr", `mini.yaml:14: field input.send.key: keybinding "ctrl+entr": unknown key "entr"`},
		{"no done", "    enabled: '#send'\n", "    {}\n", "field answer.done: give exactly one"},
		{"missing input selector", "  selector: '#in'\n", "", "mini.yaml:10: field input.selector: is required"},
		{"bad id", "id: pub.mini", "id: mini", `mini.yaml:3: field extension.id: must be publisher.name, got "mini"`},
		{"bad needed built-in", "id: pub.mini\n", "id: pub.mini\n  needs_builtin: [vscode.git, git]\n", `mini.yaml:4: field extension.needs_builtin[1]: must be publisher.name, got "git"`},
		{"unknown placeholder", "name: mini\n", "name: mini\nsettings:\n  x.url: '{{captur_url}}'\n", "field settings.x.url: unknown placeholder {{captur_url}}"},
		{"session in a shared file", "name: mini\n", "name: mini\nfiles:\n  - path: User/p.json\n    content: '{{session}}'\n", "mini.yaml:4: field files[0].content: placeholder {{session}} differs per session, and with isolation: window one editor (its files and keybindings) serves every session: set isolation: editor"},
		{"capture path in a shared file's path", "name: mini\n", "name: mini\nisolation: window\nfiles:\n  - {path: 'p{{capture_path}}.json', content: x}\n", "field files[0].path: placeholder {{capture_path}} differs per session"},
		{"capture url in shared command arguments", "name: mini\n", "name: mini\ncommands:\n  /set: {id: m.set, keybinding: ctrl+alt+m, args: {url: '{{capture_url}}'}}\n", "mini.yaml:3: field commands./set.args: placeholder {{capture_url}} differs per session"},
		{"arguments without a keybinding", "name: mini\n", "name: mini\ncommands:\n  /set: {id: m.set, title: Set, args: [1]}\n", "field commands./set.args: only a keybinding passes arguments"},
		{"unknown placeholder in arguments", "name: mini\n", "name: mini\nisolation: editor\ncommands:\n  /set: {id: m.set, keybinding: ctrl+alt+m, args: {url: '{{capture_prot}}'}}\n", "field commands./set.args: unknown placeholder {{capture_prot}}"},
		{"bad isolation", "name: mini\n", "name: mini\nisolation: process\n", "mini.yaml:2: field isolation: must be window (simulators are windows of one editor) or editor"},
		{"bad root", "name: mini\n", "name: mini\nfiles:\n  - {path: a.json, root: tmp, content: x}\n", "field files[0].root: must be user_data"},
		{"path leaves its root", "name: mini\n", "name: mini\nfiles:\n  - {path: ../.bashrc, root: home, content: x}\n", `field files[0].path: must be a path inside its root folder (the simulator's HOME), got "../.bashrc"`},
		{"a folder in a path", "name: mini\n", "name: mini\nfiles:\n  - {path: '{{home}}/x', content: x}\n", "field files[0].path: placeholder {{home}} cannot be used here"},
		{"unknown placeholder in a fill value", "name: mini\n", "name: mini\nsetup:\n  - fill: {selector: '#port', value: '{{port}}'}\n", "mini.yaml:3: field setup[0].fill.value: unknown placeholder {{port}} (known: capture_url, capture_origin, capture_host, capture_port, capture_path, session, secret, user_data, home, extension_id)"},
		{"unknown placeholder in js", "name: mini\n", "name: mini\nsetup:\n  - js: 'window.x = \"{{sesion}}\"'\n", "field setup[0].js: unknown placeholder {{sesion}}"},
		{"unknown placeholder in a nested setting", "name: mini\n", "name: mini\nsettings:\n  x.providers: [{url: '{{capture_urll}}'}]\n", "field settings.x.providers: unknown placeholder {{capture_urll}}"},
		{"bad command", "name: mini\n", "name: mini\ncommands:\n  explain: {title: X}\n", "mini.yaml:3: field commands.explain: a command is named by its slash form"},
		{"bad rule", "name: mini\n", "name: mini\ntraffic:\n  auxiliary:\n    - {name: t, system: '('}\n", "mini.yaml:4: field traffic.auxiliary[0].system: not a regular expression"},
		{"empty rule", "name: mini\n", "name: mini\ntraffic:\n  auxiliary:\n    - {name: t}\n", "field traffic.auxiliary[0]: a rule needs at least one"},
		{"bad prompt pattern", "name: mini\n", "name: mini\nprompt:\n  instruction: '^File: (?P<instruction>.*'\n", "mini.yaml:3: field prompt.instruction: not a regular expression: error parsing regexp: missing closing )"},
		{"prompt pattern without its group", "name: mini\n", "name: mini\nprompt:\n  language: '^Language: (\\S+)'\n", "mini.yaml:3: field prompt.language: needs a group named language, e.g. (?P<language>.*)"},
		{"template intent", "name: mini\n", "name: mini\nprompt:\n  templates:\n    - {intent: explian, text: Explain it}\n", `mini.yaml:4: field prompt.templates[0].intent: must be one of explain, generate, fix, tests, docs, optimize, refactor, question, got "explian"`},
		{"template text", "name: mini\n", "name: mini\nprompt:\n  templates:\n    - {intent: fix, text: Fix it}\n    - {intent: fix, text: ' '}\n", "mini.yaml:5: field prompt.templates[1].text: is required"},
		{"two setup actions", "name: mini\n", "name: mini\nsetup:\n  - {click: '#a', js: 'x'}\n", "mini.yaml:3: field setup[0]: a setup step is exactly one of"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := strings.Replace(minimal, c.from, c.to, 1)
			if src == minimal {
				t.Fatalf("case does not change the adapter")
			}
			_, err := Parse([]byte(src), "mini.yaml", t.TempDir())
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v\nwant it to contain %q", err, c.want)
			}
			if fe := (*dialog.FieldError)(nil); !errors.As(err, &fe) || fe.File != "mini.yaml" {
				t.Errorf("err %v is not a *dialog.FieldError naming mini.yaml", err)
			}
		})
	}
}

// TestPlaceholdersEverywhere writes every placeholder into each place an
// adapter writes a value, with an editor per simulator, and expands them.
func TestPlaceholdersEverywhere(t *testing.T) {
	all := "{{capture_url}} {{capture_origin}} {{capture_host}} {{ capture_port }} {{capture_path}} {{session}} {{secret}} {{user_data}} {{home}} {{extension_id}}"
	src := strings.Replace(minimal, "name: mini\n", `name: mini
isolation: editor
settings:
  x.all: '`+all+`'
  x.port: '{{capture_port}}'
files:
  - {path: 'User/globalStorage/{{extension_id}}/{{session}}.json', content: '{"port": {{capture_port}}, "all": "`+all+`"}'}
  - {path: .mini/config.yaml, root: home, content: 'path: {{capture_path}}'}
setup:
  - fill: {selector: '#url', value: '{{capture_url}}'}
  - select: {selector: '#p', value: '{{session}}'}
  - js: 'window.k = "{{secret}}"'
commands:
  /set: {id: m.set, keybinding: ctrl+alt+m, args: {url: '{{capture_origin}}{{capture_path}}', n: 1}}
`, 1)
	a, err := Parse([]byte(src), "mini.yaml", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	v := Vars{CaptureURL: "http://127.0.0.1:4242/SECRET/s/s7/v1", Session: "s7", Secret: "SECRET", UserData: "/run/editors/s7/user-data", Home: "/run/editors/s7/home"}
	want := "http://127.0.0.1:4242/SECRET/s/s7/v1 http://127.0.0.1:4242 127.0.0.1 4242 /SECRET/s/s7/v1 s7 SECRET /run/editors/s7/user-data /run/editors/s7/home pub.mini"
	if got := a.ExpandSettings(v); got["x.all"] != want || got["x.port"] != "4242" {
		t.Errorf("settings %q", got)
	}
	if got := a.Expand(a.Files[0].Path, v); got != "User/globalStorage/pub.mini/s7.json" {
		t.Errorf("file path %q", got)
	}
	var file struct {
		Port int    `json:"port"`
		All  string `json:"all"`
	}
	if err := json.Unmarshal([]byte(a.Expand(a.Files[0].Content, v)), &file); err != nil || file.Port != 4242 || file.All != want {
		t.Errorf("file content %s: %+v %v", a.Expand(a.Files[0].Content, v), file, err)
	}
	if got := a.Expand(a.Files[1].Content, v); got != "path: /SECRET/s/s7/v1" || a.Files[1].Root != RootHome {
		t.Errorf("home file %q (root %q)", got, a.Files[1].Root)
	}
	if got := a.Expand(a.Setup[0].Fill.Value, v) + " " + a.Expand(a.Setup[1].Select.Value, v) + " " + a.Expand(a.Setup[2].JS, v); got != v.CaptureURL+" s7 window.k = \"SECRET\"" {
		t.Errorf("setup values %q", got)
	}
	if k := a.KeyArgs(); len(k) != 1 || !cmp.Equal(a.ExpandValue(k[0].Args, v), map[string]any{"url": v.CaptureURL, "n": 1}) {
		t.Errorf("command arguments %+v", k)
	}
	// The same adapter run with an editor shared by every simulator.
	err = a.CheckIsolation(IsolationWindow)
	for _, field := range []string{"files[0].path", "files[1].content", "commands./set.args"} {
		if err == nil || !strings.Contains(err.Error(), "field "+field+": placeholder") || !strings.Contains(err.Error(), "set isolation: editor") {
			t.Errorf("CheckIsolation(window) = %v, want an error naming %s", err, field)
		}
	}
	if err := a.CheckIsolation(IsolationEditor); err != nil {
		t.Errorf("CheckIsolation(editor) = %v", err)
	}
}

func TestLoadFileResolvesPathsAgainstItsFolder(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mini.yaml")
	if err := os.WriteFile(path, []byte(minimal), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := Load(path, "/elsewhere")
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Path(a.Extension.VSIX); got != filepath.Join(dir, "mini.vsix") {
		t.Errorf("vsix path %s", got)
	}
}

func TestParseKeys(t *testing.T) {
	for in, want := range map[string]string{
		"ctrl+alt+e": "ControlLeft AltLeft KeyE", "Ctrl+Enter": "ControlLeft Enter", "f1": "F1",
		"shift+tab": "ShiftLeft Tab", "ctrl+k": "ControlLeft KeyK", "alt+1": "AltLeft Digit1",
	} {
		got, err := ParseKeys(in)
		if err != nil || strings.Join(got, " ") != want {
			t.Errorf("ParseKeys(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	for _, bad := range []string{"ctrl+", "e+ctrl", "f13", "hyper+a"} {
		if _, err := ParseKeys(bad); err == nil {
			t.Errorf("ParseKeys(%q) accepted", bad)
		}
	}
}

func TestClassifier(t *testing.T) {
	no := false
	a := &Adapter{Traffic: Traffic{Auxiliary: []Rule{
		{Name: "title", Stream: &no, System: `(?i)title`},
		{Name: "embeddings", Path: `/embeddings$`},
		{Name: "second", Position: 2, User: `^Summarize`},
	}}}
	c := a.Classifier()
	cases := []struct {
		req  Request
		want string
	}{
		{Request{Path: "/s/a/v1/chat/completions", Stream: true, System: "You write titles", Position: 1}, ""},
		{Request{Path: "/s/a/v1/chat/completions", Stream: false, System: "You write titles", Position: 2}, "title"},
		{Request{Path: "/s/a/v1/embeddings", Position: 1}, "embeddings"},
		{Request{Path: "/v1/chat/completions", Stream: true, User: "Summarize it", Position: 2}, "second"},
		{Request{Path: "/v1/chat/completions", Stream: true, User: "Summarize it", Position: 1}, ""},
	}
	for _, tc := range cases {
		if got := c.Auxiliary(tc.req); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.req, got, tc.want)
		}
	}
}

func TestQuillAdapterLoads(t *testing.T) {
	a, err := Load(filepath.Join("..", "internal", "testdata", "quill", "adapter.yaml"), "..")
	if err != nil {
		t.Fatal(err)
	}
	if a.Name != "quill" || a.Input.Method != MethodType || a.Answer.Done.Enabled != "button.go" || len(a.Setup) != 1 {
		t.Errorf("quill adapter: %+v", a)
	}
	if got := a.Classifier().Auxiliary(Request{Stream: false, System: "Write a title of at most five words", Position: 2}); got != "title" {
		t.Errorf("title request classified %q", got)
	}
}

func TestShowsAnswer(t *testing.T) {
	exact := &Adapter{}
	loose := &Adapter{Answer: Answer{Compare: "whitespace"}}
	sent := "Answer:\n\n```go\nx := 1\n```\n  trailing  "
	if !exact.ShowsAnswer(sent, sent) || exact.ShowsAnswer(strings.TrimSpace(sent), sent) {
		t.Errorf("exact compare")
	}
	if !loose.ShowsAnswer("Answer: ```go x := 1 ```  trailing", sent) || loose.ShowsAnswer("Answer: x := 1", sent) {
		t.Errorf("whitespace compare")
	}
}

// TestShowsAnswerMarkdown compares what views that render markdown show
// (their text content: blocks joined with or without new lines) with the
// markdown sent.
func TestShowsAnswerMarkdown(t *testing.T) {
	a := &Adapter{Answer: Answer{Compare: "markdown"}}
	sent := "Answer 3 to «q»:\n\n```python\nif a < b && c > d:\n    return \"<ok>\"\n```\n  **trailing** `x &amp; y` [docs](https://x.invalid) &copy;  "
	for _, c := range []struct {
		name, shown string
		want        bool
	}{
		{"blocks joined by new lines", "Answer 3 to «q»:\nif a < b && c > d:\n    return \"<ok>\"\n\ntrailing x &amp; y docs ©", true},
		{"blocks joined by nothing", "Answer 3 to «q»:if a < b && c > d:\n    return \"<ok>\"\ntrailing x &amp; y docs ©", true},
		{"the markdown shown raw", sent, false},
		{"a word lost", "Answer 3 to «q»:\nif a < b && c > d:\n    return \"<ok>\"\n\nx &amp; y docs ©", false},
		{"code cut short", "Answer 3 to «q»:\nif a < b && c > d:\n\ntrailing x &amp; y docs ©", false},
	} {
		if got := a.ShowsAnswer(c.shown, sent); got != c.want {
			t.Errorf("%s: ShowsAnswer = %v, want %v (markdown text %q)", c.name, got, c.want, MarkdownText(sent))
		}
	}
}

func TestCheckConfig(t *testing.T) {
	a, err := Load("ask", "..")
	if err != nil {
		t.Fatal(err)
	}
	base := dialog.ChatConfig{ID: "c", Trigger: dialog.TriggerPalette, Instruction: dialog.InstructionCommand, Turns: []dialog.TurnSpec{{Query: "/explain"}}}
	if err := a.CheckConfig(base); err != nil {
		t.Errorf("ask /explain by palette: %v", err)
	}
	c := base
	c.Turns = []dialog.TurnSpec{{Query: "/optimize"}}
	if err := a.CheckConfig(c); err == nil || !strings.Contains(err.Error(), `field turns[0].query: adapter ask: no command "/optimize" (it has /doc, /explain, /fix, /tests)`) {
		t.Errorf("unknown command: %v", err)
	}
	noMenu := &Adapter{Name: "x", Open: Open{ActivityBar: "X"}, Commands: map[string]Command{"/explain": {Title: "X: Explain"}}}
	c = base
	c.Trigger = dialog.TriggerContextMenu
	if err := noMenu.CheckConfig(c); err == nil || !strings.Contains(err.Error(), "cannot be run by context_menu") {
		t.Errorf("command without a menu label: %v", err)
	}
	c = dialog.ChatConfig{ID: "c", Trigger: dialog.TriggerKeybinding, Instruction: dialog.InstructionFreeText, Turns: []dialog.TurnSpec{{Query: "hi"}}}
	if err := noMenu.CheckConfig(c); err == nil || !strings.Contains(err.Error(), "cannot open the chat by keybinding (it supports panel)") {
		t.Errorf("trigger the adapter lacks: %v", err)
	}
}

func TestNeedsBuiltin(t *testing.T) {
	src := strings.Replace(minimal, "id: pub.mini\n", "id: pub.mini\n  needs_builtin: [vscode.git]\n", 1)
	a, err := Parse([]byte(src), "mini.yaml", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]bool{"vscode.git": true, "VSCode.Git": true, "vscode.git-base": false, "vscode.github": false} {
		if got := a.NeedsBuiltin(id); got != want {
			t.Errorf("NeedsBuiltin(%q) = %v, want %v", id, got, want)
		}
	}
}
