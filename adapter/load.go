package adapter

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"dialogfarm/dialog"
)

//go:embed bundled/*.yaml
var bundled embed.FS

// Bundled lists the names of the adapters built into dialogfarm.
func Bundled() []string {
	entries, _ := bundled.ReadDir("bundled")
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	return names
}

// DefaultName is the bundled adapter of the reference plugin.
const DefaultName = "ask"

// Load reads an adapter by file path or bundled name. root is the
// dialogfarm checkout, against which a bundled adapter's paths resolve.
func Load(nameOrPath, root string) (*Adapter, error) {
	return load(nameOrPath, root, true)
}

// LoadForRecords reads an adapter to read records made with it (its
// prompt: section, for the judge): it is checked like Load, except that
// its plugin's files need not be where it says (nothing is installed).
func LoadForRecords(nameOrPath string) (*Adapter, error) {
	return load(nameOrPath, "", false)
}

func load(nameOrPath, root string, checkFiles bool) (*Adapter, error) {
	if nameOrPath == "" {
		nameOrPath = DefaultName
	}
	if !strings.ContainsAny(nameOrPath, `/\`) && !strings.HasSuffix(nameOrPath, ".yaml") && !strings.HasSuffix(nameOrPath, ".yml") {
		data, err := bundled.ReadFile("bundled/" + nameOrPath + ".yaml")
		if err != nil {
			return nil, fmt.Errorf("adapter %q: no such bundled adapter (bundled: %s) and not a file path", nameOrPath, strings.Join(Bundled(), ", "))
		}
		return parse(data, "bundled:"+nameOrPath, root, checkFiles)
	}
	data, err := os.ReadFile(nameOrPath)
	if err != nil {
		return nil, fmt.Errorf("read adapter: %w", err)
	}
	abs, err := filepath.Abs(nameOrPath)
	if err != nil {
		return nil, fmt.Errorf("read adapter: %w", err)
	}
	return parse(data, nameOrPath, filepath.Dir(abs), checkFiles)
}

// Parse decodes and validates an adapter; source names it in errors and
// dir is where its relative paths resolve. Unknown fields, wrong types and
// missing or contradictory fields are *dialog.FieldErrors naming file, line and
// field; all of them are returned, joined.
func Parse(data []byte, source, dir string) (*Adapter, error) {
	return parse(data, source, dir, true)
}

// parse is Parse; checkFiles says whether the extension folder is looked for.
func parse(data []byte, source, dir string, checkFiles bool) (*Adapter, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, yamlError(source, err)
	}
	var a Adapter
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	v := validator{file: source, root: &root, checkFiles: checkFiles}
	if err := dec.Decode(&a); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &dialog.FieldError{File: source, Msg: "the adapter file is empty"}
		}
		// Unknown fields and wrong types leave the rest decoded: report
		// them together with what the rest gets wrong.
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			return nil, yamlError(source, err)
		}
		v.errs = append(v.errs, yamlError(source, err))
	}
	a.Source, a.Dir = source, dir
	v.check(&a)
	if err := errors.Join(v.errs...); err != nil {
		return nil, err
	}
	f := a.compileFormat()
	a.format = &f
	return &a, nil
}

var yamlLine = regexp.MustCompile(`^line (\d+): (.*)$`)

// yamlError turns yaml.v3's errors ("line 5: field foo not found in type
// adapter.Input") into *dialog.FieldErrors.
func yamlError(file string, err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		if m := yamlLine.FindStringSubmatch(msg); m != nil {
			n, _ := strconv.Atoi(m[1])
			return &dialog.FieldError{File: file, Line: n, Msg: m[2]}
		}
		return &dialog.FieldError{File: file, Msg: msg}
	}
	var errs []error
	for _, e := range te.Errors {
		fe := &dialog.FieldError{File: file, Msg: e}
		if m := yamlLine.FindStringSubmatch(e); m != nil {
			fe.Line, _ = strconv.Atoi(m[1])
			fe.Msg = m[2]
			if f, ok := strings.CutPrefix(fe.Msg, "field "); ok {
				if name, rest, ok := strings.Cut(f, " not found in type "); ok {
					fe.Field, fe.Msg = name, "unknown field (in "+strings.TrimPrefix(rest, "adapter.")+")"
				}
			}
		}
		errs = append(errs, fe)
	}
	return errors.Join(errs...)
}

// validator collects the semantic errors of an adapter, with the line of
// each field found in the YAML tree.
type validator struct {
	file string
	root *yaml.Node
	errs []error
	// checkFiles: the extension folder must hold a package.json.
	checkFiles bool
}

func (v *validator) bad(field, format string, args ...any) {
	v.errs = append(v.errs, &dialog.FieldError{File: v.file, Line: v.line(field), Field: field, Msg: fmt.Sprintf(format, args...)})
}

// line finds the line of a dotted field path ("input.send.key",
// "setup[2].click", "commands./explain.title") in the YAML tree; for a
// missing field, the line of its closest parent.
func (v *validator) line(field string) int {
	n := v.root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	best := n.Line
	for _, part := range splitPath(field) {
		switch {
		case n.Kind == yaml.MappingNode:
			found := false
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == part {
					best, n, found = n.Content[i].Line, n.Content[i+1], true
					break
				}
			}
			if !found {
				return best
			}
		case n.Kind == yaml.SequenceNode:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(n.Content) {
				return best
			}
			n = n.Content[i]
			best = n.Line
		default:
			return best
		}
	}
	return best
}

// splitPath splits "a.b[2].c" into a, b, 2, c; a command name such as
// "/explain" keeps its slash, and "commands./x.y" splits after the name.
func splitPath(field string) []string {
	var out []string
	for _, p := range strings.Split(strings.ReplaceAll(field, "[", "."), ".") {
		p = strings.TrimSuffix(p, "]")
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

var nameRe = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

func (v *validator) check(a *Adapter) {
	if !nameRe.MatchString(a.Name) {
		v.bad("name", "must be lower-case letters, digits, - or _ (got %q)", a.Name)
	}
	v.extension(a)
	switch a.Isolation {
	case "", IsolationWindow, IsolationEditor:
	default:
		v.bad("isolation", "must be window (simulators are windows of one editor) or editor (an editor per simulator), got %q", a.Isolation)
	}
	for _, k := range slices.Sorted(maps.Keys(a.Settings)) {
		v.placeholders("settings."+k, placeholderNames, stringsIn(a.Settings[k])...)
	}
	for i, f := range a.Files {
		field := fmt.Sprintf("files[%d]", i)
		if f.Path == "" || filepath.IsAbs(f.Path) || slices.Contains(strings.Split(filepath.ToSlash(f.Path), "/"), "..") {
			v.bad(field+".path", "must be a path inside its root folder (%s), got %q", f.root(), f.Path)
		}
		if f.Root != "" && f.Root != RootUserData && f.Root != RootHome {
			v.bad(field+".root", "must be user_data (the editor's user-data folder, the default) or home (the simulator's HOME), got %q", f.Root)
		}
		v.placeholders(field+".content", placeholderNames, f.Content)
		// A path is relative to its root: the folders are not in it.
		v.placeholders(field+".path", slices.DeleteFunc(slices.Clone(placeholderNames), func(n string) bool { return n == "user_data" || n == "home" }), f.Path)
	}
	if !a.Isolated() {
		for _, u := range a.sharedUses() {
			v.bad(u.field, "%s", sharedMsg(u.name))
		}
	}
	v.open(a)
	if len(a.Webview.Frames) == 0 {
		v.bad("webview.frames", "is required: the iframe selectors from the workbench down to the chat document")
	}
	for i, f := range a.Webview.Frames {
		if strings.TrimSpace(f) == "" {
			v.bad(fmt.Sprintf("webview.frames[%d]", i), "is empty")
		}
		v.placeholders(fmt.Sprintf("webview.frames[%d]", i), []string{"extension_id"}, f)
	}
	if a.Webview.Ready == "" {
		v.bad("webview.ready", "is required: a selector that matches once the chat document takes input")
	}
	for i, s := range a.Setup {
		v.action(fmt.Sprintf("setup[%d]", i), s)
	}
	v.input(a)
	v.answer(a)
	if a.NewChat.Button == "" && a.NewChat.Command == "" {
		v.bad("new_chat", "needs a button (in the chat view) or a command title to start a new conversation")
	}
	for name, c := range a.Commands {
		field := "commands." + name
		if !strings.HasPrefix(name, "/") || strings.ContainsAny(name, " \t") {
			v.bad(field, "a command is named by its slash form, e.g. /explain")
		}
		if c.Title == "" && c.Keybinding == "" && c.Menu == "" {
			v.bad(field, "needs a title, a keybinding or a context_menu label")
		}
		v.keys(field+".keybinding", c.Keybinding)
		v.args(field, c)
	}
	v.prompt(a.Prompt)
	for i, r := range a.Traffic.Auxiliary {
		field := fmt.Sprintf("traffic.auxiliary[%d]", i)
		if r.Path == "" && r.Stream == nil && r.System == "" && r.User == "" && r.Position == 0 {
			v.bad(field, "a rule needs at least one of path, stream, system, user, position")
		}
		for sub, re := range map[string]string{"path": r.Path, "system": r.System, "user": r.User} {
			if _, err := regexp.Compile(re); err != nil {
				v.bad(field+"."+sub, "not a regular expression: %v", err)
			}
		}
		if r.Position < 0 || r.Position == 1 {
			v.bad(field+".position", "must be 2 or more (1 is the chat request itself)")
		}
	}
}

func (v *validator) extension(a *Adapter) {
	e := a.Extension
	if pub, name, ok := strings.Cut(e.ID, "."); !ok || pub == "" || name == "" {
		v.bad("extension.id", "must be publisher.name, got %q", e.ID)
	}
	for i, id := range e.NeedsBuiltin {
		if pub, name, ok := strings.Cut(id, "."); !ok || pub == "" || name == "" {
			v.bad(fmt.Sprintf("extension.needs_builtin[%d]", i), "must be publisher.name, got %q", id)
		}
	}
	switch {
	case e.Folder == "" && e.VSIX == "":
		v.bad("extension", "needs folder (an unpacked extension) or vsix (a packaged one)")
	case e.Folder != "" && e.VSIX != "":
		v.bad("extension", "give folder or vsix, not both")
	case e.Folder != "" && v.checkFiles:
		if _, err := os.Stat(filepath.Join(a.Path(e.Folder), "package.json")); err != nil {
			v.bad("extension.folder", "no package.json in %s", a.Path(e.Folder))
		}
	case e.VSIX != "":
		if !strings.HasSuffix(e.VSIX, ".vsix") {
			v.bad("extension.vsix", "must name a .vsix file, got %q", e.VSIX)
		}
	}
}

func (v *validator) open(a *Adapter) {
	o := a.Open
	if len(a.Triggers()) == 0 {
		v.bad("open", "needs at least one way to open the chat: activity_bar, command.title, command.keybinding or command.context_menu")
	}
	v.keys("open.command.keybinding", o.Command.Keybinding)
	v.args("open.command", o.Command)
	if o.Selection != "" && o.Selection != "auto" && o.Selection != "command" {
		v.bad("open.selection", "must be auto or command, got %q", o.Selection)
	}
}

func (v *validator) action(field string, s Action) {
	n := 0
	for _, set := range []bool{s.Click != "", s.Fill != nil, s.Select != nil, s.JS != "", s.WaitFor != ""} {
		if set {
			n++
		}
	}
	if n != 1 {
		v.bad(field, "a setup step is exactly one of click, fill, select, js, wait_for")
	}
	for name, val := range map[string]*Value{"fill": s.Fill, "select": s.Select} {
		if val != nil && val.Selector == "" {
			v.bad(field+"."+name+".selector", "is required")
		}
		if val != nil {
			v.placeholders(field+"."+name+".value", placeholderNames, val.Value)
		}
	}
	v.placeholders(field+".js", placeholderNames, s.JS)
}

// args checks a command's arguments: only a keybinding passes them.
func (v *validator) args(field string, c Command) {
	if c.Args == nil {
		return
	}
	if c.Keybinding == "" {
		v.bad(field+".args", "only a keybinding passes arguments to a command: give %s.keybinding", field)
	}
	if c.ID == "" {
		v.bad(field+".args", "the keybinding that passes them names the command by its id: give %s.id", field)
	}
	v.placeholders(field+".args", placeholderNames, stringsIn(c.Args)...)
}

func (v *validator) input(a *Adapter) {
	in := a.Input
	if in.Selector == "" {
		v.bad("input.selector", "is required")
	}
	if in.Method != MethodFill && in.Method != MethodType {
		v.bad("input.method", "must be fill (textarea, input) or type (contenteditable, rich editors), got %q", in.Method)
	}
	if (in.Send.Key == "") == (in.Send.Button == "") {
		v.bad("input.send", "give key (e.g. Enter, ctrl+enter) or button (a selector), exactly one")
	}
	v.keys("input.send.key", in.Send.Key)
}

func (v *validator) answer(a *Adapter) {
	an := a.Answer
	if an.Selector == "" {
		v.bad("answer.selector", "is required: it matches the assistant messages")
	}
	d := an.Done
	n := 0
	for _, set := range []bool{d.Attribute != nil, d.Appears != "", d.Disappears != "", d.Enabled != "", d.StableMS != 0} {
		if set {
			n++
		}
	}
	if n != 1 {
		v.bad("answer.done", "give exactly one of attribute, appears, disappears, enabled, stable_ms")
	}
	if d.Attribute != nil && (d.Attribute.Name == "" || len(d.Attribute.Values) == 0) {
		v.bad("answer.done.attribute", "needs name and values")
	}
	if d.StableMS < 0 {
		v.bad("answer.done.stable_ms", "must be positive")
	}
	if an.Compare != "" && an.Compare != "exact" && an.Compare != "whitespace" && an.Compare != "markdown" {
		v.bad("answer.compare", "must be exact, whitespace or markdown, got %q", an.Compare)
	}
}

func (v *validator) keys(field, s string) {
	if s == "" {
		return
	}
	if _, err := ParseKeys(s); err != nil {
		v.bad(field, "%v", err)
	}
}

// placeholders reports each placeholder in ss that is not among allowed:
// unknown, or known but of no use in field.
func (v *validator) placeholders(field string, allowed []string, ss ...string) {
	for _, s := range ss {
		for _, n := range placeholdersIn(s) {
			switch {
			case slices.Contains(allowed, n):
			case slices.Contains(placeholderNames, n):
				v.bad(field, "placeholder {{%s}} cannot be used here (allowed: %s)", n, strings.Join(allowed, ", "))
			default:
				v.bad(field, "unknown placeholder {{%s}} (known: %s)", n, strings.Join(placeholderNames, ", "))
			}
		}
	}
}

// Path resolves a path of the adapter file against its folder.
func (a *Adapter) Path(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(a.Dir, p)
}
