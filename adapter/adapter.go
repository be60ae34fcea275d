// Package adapter describes how dialogfarm drives one VS Code Q&A plugin:
// how it is installed and configured, how its chat view is opened and
// found, how a query is typed and sent, when its answer is done, how a new
// conversation starts, which of its commands a config may run, which of
// its model requests are auxiliary (titles, summaries) rather than chat
// turns, and how its user messages are laid out (where the developer's own
// words are among the editor context and command templates, for the
// judge). An adapter is a YAML file; the driver and the judge read adapters
// and know no plugin by name. The reference plugin's adapter is bundled
// ("ask").
//
// Relative paths in an adapter file resolve against the file's folder; in a
// bundled adapter, against the dialogfarm checkout (the Root given to Load).
package adapter

import (
	"fmt"
	"slices"
	"strings"

	"dialogfarm/dialog"
)

// Adapter is one plugin's adapter file.
type Adapter struct {
	// Name is what ChatConfig.plugin and --adapter call it.
	Name      string    `yaml:"name"`
	Extension Extension `yaml:"extension"`
	// Isolation says what a simulator is: a window of an editor that
	// every simulator shares (IsolationWindow, the default) or a window
	// of an editor of its own, with its own user-data, HOME and XDG
	// folders (IsolationEditor), for a plugin that keeps its endpoint in
	// global state or a global file.
	Isolation string `yaml:"isolation"`
	// Settings are written into each session's workspace settings; string
	// values may hold placeholders (see Expand).
	Settings map[string]any `yaml:"settings"`
	// Files are written under the editor's user-data folder (or its HOME)
	// before it starts (e.g. a providers JSON under
	// User/globalStorage/<id>/); path and content may hold placeholders.
	Files    []File             `yaml:"files"`
	Open     Open               `yaml:"open"`
	Webview  Webview            `yaml:"webview"`
	Setup    []Action           `yaml:"setup"`
	Input    Input              `yaml:"input"`
	Answer   Answer             `yaml:"answer"`
	NewChat  NewChat            `yaml:"new_chat"`
	Commands map[string]Command `yaml:"commands"`
	Traffic  Traffic            `yaml:"traffic"`
	// Prompt says how the plugin writes a chat turn's user message.
	Prompt Prompt `yaml:"prompt"`

	// Source is the file the adapter was read from, or "bundled:<name>".
	Source string `yaml:"-"`
	// Dir is the folder relative paths resolve against.
	Dir string `yaml:"-"`

	format *MessageFormat // Prompt compiled, by Parse
}

// Extension names the plugin and how it is installed: from a folder
// (linked into the editor's extensions folder) or a .vsix (installed with
// code-server --install-extension).
type Extension struct {
	// ID is publisher.name, as in the extension's package.json.
	ID     string `yaml:"id"`
	Folder string `yaml:"folder"`
	VSIX   string `yaml:"vsix"`
	// Ready is a CSS selector on the workbench page that exists once the
	// plugin is up (its status-bar item, its activity-bar icon); empty:
	// the workbench's own readiness is enough.
	Ready string `yaml:"ready"`
	// NeedsBuiltin are built-in extensions (publisher.name) the plugin
	// calls, e.g. vscode.git for the git API: kept loaded, where the
	// driver would skip them to spare each window's extension host.
	NeedsBuiltin []string `yaml:"needs_builtin"`
}

// NeedsBuiltin reports whether the plugin needs the built-in extension id
// (compared as VS Code does, ignoring case).
func (a *Adapter) NeedsBuiltin(id string) bool {
	return slices.ContainsFunc(a.Extension.NeedsBuiltin, func(n string) bool { return strings.EqualFold(n, id) })
}

// File is written before the editor starts.
type File struct {
	// Path is relative to Root; it may not leave it.
	Path string `yaml:"path"`
	// Root is the folder Path is in: RootUserData (default) or RootHome,
	// the simulator's HOME, for a plugin that reads ~/.something.
	Root    string `yaml:"root"`
	Content string `yaml:"content"`
}

// File roots.
const (
	RootUserData = "user_data"
	RootHome     = "home"
)

// Isolation levels.
const (
	IsolationWindow = "window"
	IsolationEditor = "editor"
)

// Isolated reports whether the adapter asks for an editor per simulator.
func (a *Adapter) Isolated() bool { return a.Isolation == IsolationEditor }

// Open says how the chat view is opened for each trigger, and how the
// editor selection reaches the plugin.
type Open struct {
	// ActivityBar is the start of the plugin's activity-bar item's
	// aria-label (trigger panel).
	ActivityBar string `yaml:"activity_bar"`
	// Command opens the chat with its input focused: its title (trigger
	// palette), keybinding (trigger keybinding) and context-menu item
	// (trigger context_menu).
	Command Command `yaml:"command"`
	// Selection is "auto" when the plugin reads the editor selection by
	// itself when a query is sent, "command" when only its commands take it.
	Selection string `yaml:"selection"`
}

// Command is one plugin command as a developer reaches it.
type Command struct {
	ID         string `yaml:"id"`
	Title      string `yaml:"title"`        // in the command palette
	Keybinding string `yaml:"keybinding"`   // e.g. ctrl+alt+e
	Menu       string `yaml:"context_menu"` // the editor context-menu item's label; empty: not in that menu
	// Args, when set, are the arguments the command gets when it is run
	// by its keybinding (only a keybinding passes arguments): the
	// editor's keybindings.json binds the key to the command with them.
	// Strings may hold placeholders.
	Args any `yaml:"args"`
}

// Webview says where the chat document is.
type Webview struct {
	// Frames are CSS selectors of the iframes from the workbench page down
	// to the chat document, outermost first. {{extension_id}} is replaced.
	Frames []string `yaml:"frames"`
	// Ready is a CSS selector that matches in the chat document once it
	// can take input.
	Ready string `yaml:"ready"`
}

// Action is one setup step inside the chat document, run after it is
// ready; exactly one of its fields is set.
type Action struct {
	// Click clicks the element.
	Click string `yaml:"click"`
	// Fill sets a text input's value.
	Fill *Value `yaml:"fill"`
	// Select picks an option of a <select> by value.
	Select *Value `yaml:"select"`
	// JS runs a function body in the chat document; a truthy return or no
	// return is success, a thrown error fails the step.
	JS string `yaml:"js"`
	// WaitFor waits until the selector matches.
	WaitFor string `yaml:"wait_for"`
}

// Value is a selector and the value to put there.
type Value struct {
	Selector string `yaml:"selector"`
	Value    string `yaml:"value"`
}

// Input methods.
const (
	// MethodFill types into a textarea or input, whose value is then read back.
	MethodFill = "fill"
	// MethodType clicks the element and types, for rich editors
	// (contenteditable, ProseMirror); its textContent is read back.
	MethodType = "type"
)

// Input says where the query is typed and how it is sent.
type Input struct {
	Selector string `yaml:"selector"`
	Method   string `yaml:"method"`
	Send     Send   `yaml:"send"`
}

// Send is a key combination pressed in the input or a button clicked.
type Send struct {
	Key    string `yaml:"key"`
	Button string `yaml:"button"`
}

// Answer says how the dialogue is read from the chat document.
type Answer struct {
	// User matches the user messages; a turn is sent once their count grows.
	User string `yaml:"user"`
	// Selector matches the assistant messages; the turn's answer is the one
	// that appears after its query is sent.
	Selector string `yaml:"selector"`
	// Text, inside an assistant message, holds the answer text; empty: the
	// message element itself. Its textContent is what the view shows.
	Text string `yaml:"text"`
	// Done says when the answer is complete.
	Done Done `yaml:"done"`
	// Error is a selector matched against the assistant message (or, with
	// a space, inside it) when the plugin shows a failure.
	Error string `yaml:"error"`
	// Compare is how the text shown is compared with the answer sent:
	// "exact" (default), "whitespace" (runs of white space count as one,
	// ends trimmed: for plugins that lay text out in blocks) or "markdown"
	// (the view renders the answer from markdown: it shows the rendered
	// text, compared with white space ignored; see MarkdownText).
	Compare string `yaml:"compare"`
}

// Done is a condition; exactly one field is set.
type Done struct {
	// Attribute on the assistant message reaches one of the values.
	Attribute *Attribute `yaml:"attribute"`
	// Appears: the selector matches in the chat document.
	Appears string `yaml:"appears"`
	// Disappears: the selector no longer matches.
	Disappears string `yaml:"disappears"`
	// Enabled: the button matching the selector is enabled again.
	Enabled string `yaml:"enabled"`
	// StableMS: the answer text has not changed for this many milliseconds.
	StableMS int `yaml:"stable_ms"`
}

// Attribute is an attribute name and the values that end a turn.
type Attribute struct {
	Name   string   `yaml:"name"`
	Values []string `yaml:"values"`
}

// NewChat says how a new conversation starts between configs: a button in
// the chat document when the view is shown, else a command by its title.
type NewChat struct {
	Button  string `yaml:"button"`
	Command string `yaml:"command"`
}

// Traffic tells chat turns from auxiliary requests.
type Traffic struct {
	// Auxiliary rules: a request matching any rule is auxiliary.
	Auxiliary []Rule `yaml:"auxiliary"`
	// StandIn is the answer auxiliary requests get; empty: "Untitled".
	StandIn string `yaml:"stand_in"`
}

// Rule matches a request; every field set must match.
type Rule struct {
	Name string `yaml:"name"`
	// Path is a regular expression on the URL path.
	Path string `yaml:"path"`
	// Stream matches the request's stream flag.
	Stream *bool `yaml:"stream"`
	// System is a regular expression on the first system message.
	System string `yaml:"system"`
	// User is a regular expression on the last user message.
	User string `yaml:"user"`
	// Position matches the request's 1-based place among the requests
	// that followed the session's last chat turn (2 = the first request
	// after a chat request).
	Position int `yaml:"position"`
}

// Triggers lists the triggers the adapter supports.
func (a *Adapter) Triggers() []string {
	var t []string
	if a.Open.ActivityBar != "" {
		t = append(t, "panel")
	}
	if a.Open.Command.Title != "" {
		t = append(t, "palette")
	}
	if a.Open.Command.Keybinding != "" {
		t = append(t, "keybinding")
	}
	if a.Open.Command.Menu != "" {
		t = append(t, "context_menu")
	}
	return t
}

// CommandFor returns the command a config's "command" instruction names
// (its slash form, "/explain").
func (a *Adapter) CommandFor(name string) (Command, bool) {
	c, ok := a.Commands[strings.TrimSpace(name)]
	return c, ok
}

// Frames returns the frame selectors with {{extension_id}} replaced.
func (a *Adapter) Frames() []string {
	out := make([]string, len(a.Webview.Frames))
	for i, f := range a.Webview.Frames {
		out[i] = a.Expand(f, Vars{})
	}
	return out
}

func (a *Adapter) String() string { return fmt.Sprintf("adapter %s (%s)", a.Name, a.Source) }

// CheckConfig says whether the adapter can drive cfg: its trigger is one
// the adapter supports, and a command instruction names one of its commands
// reachable by that trigger.
func (a *Adapter) CheckConfig(cfg dialog.ChatConfig) error {
	bad := func(field, format string, args ...any) error {
		return &dialog.FieldError{ID: cfg.ID, Field: field, Msg: fmt.Sprintf("adapter %s: ", a.Name) + fmt.Sprintf(format, args...)}
	}
	if cfg.Instruction == dialog.InstructionCommand {
		c, ok := a.CommandFor(cfg.Turns[0].Query)
		if !ok {
			names := make([]string, 0, len(a.Commands))
			for n := range a.Commands {
				names = append(names, n)
			}
			slices.Sort(names)
			return bad("turns[0].query", "no command %q (it has %s)", cfg.Turns[0].Query, strings.Join(names, ", "))
		}
		switch {
		case cfg.Trigger == dialog.TriggerPalette && c.Title == "",
			cfg.Trigger == dialog.TriggerKeybinding && c.Keybinding == "",
			cfg.Trigger == dialog.TriggerContextMenu && c.Menu == "":
			return bad("trigger", "command %s cannot be run by %s", cfg.Turns[0].Query, cfg.Trigger)
		}
		return nil
	}
	if !slices.Contains(a.Triggers(), cfg.Trigger) {
		return bad("trigger", "cannot open the chat by %s (it supports %s)", cfg.Trigger, strings.Join(a.Triggers(), ", "))
	}
	return nil
}

// ShowsAnswer reports whether the text the view shows is the answer the
// capture endpoint sent, compared the adapter's way (answer.compare):
// exactly; with runs of white space counted as one space and the ends
// trimmed; or as markdown rendered (MarkdownText), white space ignored.
func (a *Adapter) ShowsAnswer(shown, sent string) bool {
	switch a.Answer.Compare {
	case "whitespace":
		return strings.Join(strings.Fields(shown), " ") == strings.Join(strings.Fields(sent), " ")
	case "markdown":
		return withoutSpace(shown) == withoutSpace(MarkdownText(sent))
	}
	return shown == sent
}
