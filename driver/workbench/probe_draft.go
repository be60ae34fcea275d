package workbench

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"dialogfarm/adapter"
	"dialogfarm/dialog"
)

// A draft adapter is written from what the probe saw, in the adapter
// file's own order, with a comment on each section saying what it rests
// on and what is left to a person (TODO).

type draftAdapter struct {
	Name      string          `yaml:"name"`
	Extension draftExtension  `yaml:"extension"`
	Isolation string          `yaml:"isolation,omitempty"`
	Settings  map[string]any  `yaml:"settings,omitempty"`
	Files     []draftFile     `yaml:"files,omitempty"`
	Open      draftOpen       `yaml:"open"`
	Webview   adapter.Webview `yaml:"webview"`
	Setup     []draftAction   `yaml:"setup,omitempty"`
	Input     draftInput      `yaml:"input"`
	Answer    draftAnswer     `yaml:"answer"`
	NewChat   draftNewChat    `yaml:"new_chat"`
	Traffic   draftTraffic    `yaml:"traffic"`
	commands  []ProbeCommand  // for comments
	notes     map[string][]string
}

type draftExtension struct {
	ID     string `yaml:"id"`
	Folder string `yaml:"folder,omitempty"`
	VSIX   string `yaml:"vsix,omitempty"`
	Ready  string `yaml:"ready,omitempty"`
}

type draftFile struct {
	Path    string `yaml:"path"`
	Root    string `yaml:"root,omitempty"`
	Content string `yaml:"content"`
}

type draftOpen struct {
	ActivityBar string        `yaml:"activity_bar,omitempty"`
	Command     *draftCommand `yaml:"command,omitempty"`
}

type draftCommand struct {
	ID         string `yaml:"id,omitempty"`
	Title      string `yaml:"title,omitempty"`
	Keybinding string `yaml:"keybinding,omitempty"`
	Menu       string `yaml:"context_menu,omitempty"`
}

type draftAction struct {
	Click  string         `yaml:"click,omitempty"`
	Select *adapter.Value `yaml:"select,omitempty"`
}

type draftInput struct {
	Selector string    `yaml:"selector"`
	Method   string    `yaml:"method"`
	Send     draftSend `yaml:"send"`
}

type draftSend struct {
	Key    string `yaml:"key,omitempty"`
	Button string `yaml:"button,omitempty"`
}

type draftAnswer struct {
	User     string    `yaml:"user,omitempty"`
	Selector string    `yaml:"selector"`
	Text     string    `yaml:"text,omitempty"`
	Done     draftDone `yaml:"done"`
	Compare  string    `yaml:"compare,omitempty"`
}

type draftDone struct {
	Attribute  *adapter.Attribute `yaml:"attribute,omitempty"`
	Appears    string             `yaml:"appears,omitempty"`
	Disappears string             `yaml:"disappears,omitempty"`
	Enabled    string             `yaml:"enabled,omitempty"`
	StableMS   int                `yaml:"stable_ms,omitempty"`
}

type draftNewChat struct {
	Button  string `yaml:"button,omitempty"`
	Command string `yaml:"command,omitempty"`
}

type draftTraffic struct {
	Auxiliary []draftRule `yaml:"auxiliary"`
}

type draftRule struct {
	Name   string `yaml:"name"`
	Stream *bool  `yaml:"stream,omitempty"`
	System string `yaml:"system,omitempty"`
	User   string `yaml:"user,omitempty"`
}

// DraftAdapter writes the adapter the report suggests, to be saved at
// path (the extension's path is written relative to its folder). It is
// checked as `adapters validate` checks an adapter file, without starting
// the editor; what the probe could not see is marked TODO in comments.
func DraftAdapter(rep ProbeReport, path string) ([]byte, error) {
	if rep.Input == nil {
		return nil, fmt.Errorf("draft adapter: the probe found no way to send (see its attempts)")
	}
	d := draftAdapter{notes: map[string][]string{}, commands: rep.Commands}
	d.Name = draftName(rep.ExtensionID)
	d.Extension.ID = rep.ExtensionID
	ext := rep.Extension
	dir := filepath.Dir(path)
	if abs, err := filepath.Abs(ext); err == nil {
		if adir, err := filepath.Abs(dir); err == nil {
			if rel, err := filepath.Rel(adir, abs); err == nil {
				ext = rel
			}
		}
	}
	if strings.HasSuffix(ext, ".vsix") {
		d.Extension.VSIX = ext
	} else {
		d.Extension.Folder = ext
	}
	if len(rep.ActivityBar) > 0 {
		d.Extension.Ready = fmt.Sprintf(`.activitybar .action-label[aria-label^=%q]`, rep.ActivityBar[0])
		d.Open.ActivityBar = rep.ActivityBar[0]
	}
	d.note("extension", "ready: its activity-bar item; a status-bar item the plugin adds once active is a surer sign, where it has one.")
	d.Settings = rep.Settings
	for _, f := range rep.Files {
		d.Files = append(d.Files, draftFile{Path: f.Path, Root: f.Root, Content: f.Content})
	}
	if rep.Isolation == adapter.IsolationEditor {
		d.Isolation = rep.Isolation
		d.note("isolation", "a file holds a per-session placeholder: every simulator writes its own, in an editor of its own.")
	}
	d.openCommand(rep.Commands)
	d.Webview = adapter.Webview{Frames: rep.Frames, Ready: rep.Input.Selector}
	d.note("webview", "ready: the input the probe typed into, which the view shows once it can take a query.")
	for _, a := range rep.Setup {
		d.Setup = append(d.Setup, draftAction{Click: a.Click, Select: a.Select})
	}
	if len(d.Setup) > 0 {
		d.note("setup", "the test message went out only after this pick.")
	}
	d.Input = draftInput{Selector: rep.Input.Selector, Method: rep.Input.Method, Send: draftSend{Key: rep.Send.Key, Button: rep.Send.Button}}
	d.note("input", fmt.Sprintf("ranked first of %d text inputs (%s); sent by %s.", len(rep.Inputs), rep.Input.Why, rep.Sent))
	for _, a := range rep.Attempts {
		d.note("input", fmt.Sprintf("tried %s with %s: %s", a.Input, a.Method, a.Outcome))
	}
	d.answer(rep.Observed)
	d.newChat(rep)
	d.traffic(rep)
	return d.marshal(path)
}

func (d *draftAdapter) note(key, s string) { d.notes[key] = append(d.notes[key], s) }

// draftName is the plugin's name part of its id, as an adapter name.
func draftName(id string) string {
	_, name, _ := strings.Cut(id, ".")
	name = strings.ToLower(name)
	name = regexp.MustCompile(`[^a-z0-9_-]+`).ReplaceAllString(name, "-")
	if name == "" || !regexp.MustCompile(`^[a-z0-9]`).MatchString(name) {
		name = "plugin" + name
	}
	return name
}

var (
	openWords = regexp.MustCompile(`(?i)\b(open|show|focus|start|chat)\b`)
	newWords  = regexp.MustCompile(`(?i)\b(new|clear|reset|restart)\b`)
)

// openCommand picks the command that opens the chat: its title speaks of
// opening or chat, not of a new conversation.
func (d *draftAdapter) openCommand(cmds []ProbeCommand) {
	for _, c := range cmds {
		if openWords.MatchString(c.Title) && !newWords.MatchString(c.Title) {
			d.Open.Command = &draftCommand{ID: c.ID, Title: c.Title, Keybinding: c.Keybinding}
			if c.ContextMenu {
				d.Open.Command.Menu = c.Title
			}
			d.note("open", fmt.Sprintf("command: %q, the contributed command whose title speaks of opening the chat.", c.Title))
			break
		}
	}
	d.note("open", "TODO selection: auto if the plugin reads the editor's selection when a query is sent, command if only its commands take it.")
}

func (d *draftAdapter) answer(o *ProbeObserved) {
	if o == nil || o.Answer == "" {
		d.Answer = draftAnswer{Selector: "TODO", Done: draftDone{StableMS: 1500}}
		d.note("answer", "TODO: the probe did not see the answer in the view; write its selectors from the DOM it printed.")
		return
	}
	d.Answer = draftAnswer{User: o.User, Selector: o.Answer, Text: o.Text, Compare: o.Compare,
		Done: draftDone{Attribute: o.Done.Attribute, Appears: o.Done.Appears, Disappears: o.Done.Disappears, Enabled: o.Done.Enabled, StableMS: o.Done.StableMS}}
	if d.Answer.Compare == "exact" {
		d.Answer.Compare = ""
	}
	for _, e := range o.Evidence {
		d.note("answer", e)
	}
	d.note("answer", "TODO error: a selector for the plugin's error message, if it shows one.")
}

// newChat takes a button of the view and a command whose label speaks of
// a new conversation.
func (d *draftAdapter) newChat(rep ProbeReport) {
	for _, e := range rep.Elements {
		button := e.Kind == "button" || strings.Contains(e.Kind, "button") || strings.Contains(e.Selector, "button")
		if button && !e.Hidden && !e.Disabled && newWords.MatchString(e.Label+" "+e.Selector) {
			d.NewChat.Button = e.Selector
			break
		}
	}
	for _, c := range rep.Commands {
		if newWords.MatchString(c.Title) {
			d.NewChat.Command = c.Title
			break
		}
	}
	if d.NewChat.Button == "" && d.NewChat.Command == "" {
		d.NewChat.Command = "TODO"
		d.note("new_chat", "TODO: the probe saw no button or command that starts a new conversation.")
	}
}

// traffic writes a rule for each request after the chat request that
// tells it from the chat request: its stream flag, its system prompt's
// start or its user message's start.
func (d *draftAdapter) traffic(rep ProbeReport) {
	d.Traffic.Auxiliary = []draftRule{}
	if rep.Chat < 0 || rep.Chat >= len(rep.Requests) {
		return
	}
	chat, err := dialog.ParseChatRequest(rep.Requests[rep.Chat].Request)
	if err != nil {
		return
	}
	names := map[string]int{}
	for i, ex := range rep.Requests {
		if i == rep.Chat {
			continue
		}
		r, err := dialog.ParseChatRequest(ex.Request)
		if err != nil {
			continue
		}
		name := "auxiliary"
		switch text := strings.ToLower(firstSystem(r) + " " + r.LastUser()); {
		case strings.Contains(text, "title"):
			name = "title"
		case strings.Contains(text, "summar"):
			name = "summary"
		}
		if names[name]++; names[name] > 1 {
			continue // one rule per kind of request
		}
		rule := draftRule{Name: name}
		if r.Stream != chat.Stream {
			v := r.Stream
			rule.Stream = &v
		}
		if sys := firstSystem(r); sys != "" && sys != firstSystem(chat) {
			rule.System = "^" + regexp.QuoteMeta(start(sys, rep.Message))
		} else if u := start(r.LastUser(), rep.Message); u != "" && !strings.HasPrefix(chat.LastUser(), u) {
			rule.User = "^" + regexp.QuoteMeta(u)
		}
		cl := (&adapter.Adapter{Traffic: adapter.Traffic{Auxiliary: []adapter.Rule{{Name: name, Stream: rule.Stream, System: rule.System, User: rule.User}}}}).Classifier()
		asReq := func(c dialog.ChatRequest) adapter.Request {
			return adapter.Request{Stream: c.Stream, System: firstSystem(c), User: c.LastUser()}
		}
		if (rule.Stream == nil && rule.System == "" && rule.User == "") || cl.Auxiliary(asReq(chat)) != "" || cl.Auxiliary(asReq(r)) == "" {
			d.note("traffic", fmt.Sprintf("TODO: request %d is not the chat request, but nothing the probe could see tells them apart: %s", i+1, clip(string(ex.Request), 200)))
			continue
		}
		d.Traffic.Auxiliary = append(d.Traffic.Auxiliary, rule)
		d.note("traffic", fmt.Sprintf("%s: request %d (stream %v) came after the chat request.", name, i+1, r.Stream))
	}
}

// firstSystem is the request's first system message.
func firstSystem(r dialog.ChatRequest) string {
	for _, m := range r.Messages {
		if m.Role == "system" {
			return m.Content
		}
	}
	return ""
}

// start is the first line of s up to where msg appears in it, at most 48
// characters, cut at a word's end.
func start(s, msg string) string {
	if msg != "" {
		if i := strings.Index(s, msg); i >= 0 {
			s = s[:i]
		}
	}
	s, _, _ = strings.Cut(s, "\n")
	if r := []rune(s); len(r) > 48 {
		s = string(r[:48])
		if i := strings.LastIndex(s, " "); i > 16 {
			s = s[:i]
		}
	}
	return strings.TrimRight(s, " ")
}

// marshal writes the draft with its comments and checks it parses.
func (d *draftAdapter) marshal(path string) ([]byte, error) {
	var doc yaml.Node
	if err := doc.Encode(d); err != nil {
		return nil, fmt.Errorf("draft adapter: %w", err)
	}
	doc.HeadComment = "Draft adapter written by `dialogfarm adapters probe` from what it saw in the plugin's view.\n" +
		"Check each TODO below, then run `dialogfarm adapters validate " + filepath.Base(path) + "`."
	for i := 0; i+1 < len(doc.Content); i += 2 {
		k := doc.Content[i]
		if n := d.notes[k.Value]; len(n) > 0 {
			k.HeadComment = strings.Join(n, "\n")
		}
	}
	var cmds []string
	for _, c := range d.commands {
		cmds = append(cmds, fmt.Sprintf("%s %q key %q context menu %v", c.ID, c.Title, c.Keybinding, c.ContextMenu))
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, fmt.Errorf("draft adapter: %w", err)
	}
	_ = enc.Close()
	buf.WriteString("# TODO commands: the plugin's commands that send a query (a slash form each, e.g. /explain), among:\n")
	for _, c := range cmds {
		buf.WriteString("#   " + c + "\n")
	}
	buf.WriteString("commands: {}\n")
	buf.WriteString("# TODO prompt: how the plugin writes a user message (where the developer's words are among the editor\n" +
		"# context it adds); the test message went out as the last user message of the chat request above.\n")
	out := buf.Bytes()
	_, err := adapter.Parse(out, path, filepath.Dir(path))
	switch {
	case slices.Contains([]string{d.Answer.Selector, d.NewChat.Command}, "TODO"):
		return out, errors.Join(errors.New("the draft adapter has fields only a person can fill in (TODO)"), err)
	case err != nil:
		return out, fmt.Errorf("the draft adapter does not validate: %w", err)
	}
	return out, nil
}
