package adapter

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"dialogfarm/dialog"
)

// Placeholders are written {{name}} in any value an adapter writes into
// the editor: settings, files (path and content), the values of setup
// steps (fill, select, js) and command arguments. Their names:
//
//	capture_url     the session's OpenAI-compatible base URL, http://127.0.0.1:PORT/<secret>/s/<session>/v1
//	capture_origin  its scheme, host and port, http://127.0.0.1:PORT
//	capture_host    its host, 127.0.0.1
//	capture_port    its port, a bare number (usable unquoted in JSON)
//	capture_path    its path, /<secret>/s/<session>/v1
//	session         the capture session id
//	secret          the run's secret for the capture endpoint
//	user_data       the editor's user-data folder
//	home            the simulator's HOME folder
//	extension_id    the plugin's publisher.name
//
// capture_url, capture_path and session differ from one session to the
// next: a file or keybinding of an editor that every session shares
// (isolation: window) cannot hold them.
var placeholderNames = []string{"capture_url", "capture_origin", "capture_host", "capture_port", "capture_path",
	"session", "secret", "user_data", "home", "extension_id"}

// perSession are the placeholders whose value differs per session.
var perSession = []string{"capture_url", "capture_path", "session"}

var placeholderRe = regexp.MustCompile(`\{\{\s*([^}]*?)\s*\}\}`)

// Vars are the values placeholders take; the parts of the capture URL
// are taken from CaptureURL.
type Vars struct {
	CaptureURL string // the session's OpenAI-compatible base URL
	Session    string // the capture session id
	Secret     string // the run's secret for the capture endpoint
	UserData   string // the editor's user-data folder
	Home       string // the simulator's HOME folder
}

// values maps each placeholder name to its value for the adapter a.
func (v Vars) values(a *Adapter) map[string]string {
	m := map[string]string{
		"capture_url": v.CaptureURL, "session": v.Session, "secret": v.Secret,
		"user_data": v.UserData, "home": v.Home, "extension_id": a.Extension.ID,
	}
	if u, err := url.Parse(v.CaptureURL); err == nil && v.CaptureURL != "" {
		m["capture_origin"] = u.Scheme + "://" + u.Host
		m["capture_host"] = u.Hostname()
		m["capture_port"] = u.Port()
		m["capture_path"] = u.EscapedPath()
	}
	return m
}

// Expand replaces the placeholders in s (see placeholderNames); an
// unknown one, which validation rejects, is left as it is.
func (a *Adapter) Expand(s string, v Vars) string {
	if !strings.Contains(s, "{{") {
		return s
	}
	vals := v.values(a)
	return placeholderRe.ReplaceAllStringFunc(s, func(m string) string {
		name := placeholderRe.FindStringSubmatch(m)[1]
		if val, ok := vals[name]; ok {
			return val
		}
		return m
	})
}

// ExpandSettings returns the settings with placeholders replaced in every
// string, at any depth.
func (a *Adapter) ExpandSettings(v Vars) map[string]any {
	out := make(map[string]any, len(a.Settings))
	for k, val := range a.Settings {
		out[k] = a.ExpandValue(val, v)
	}
	return out
}

// ExpandValue returns val (a value decoded from YAML) with placeholders
// replaced in every string, at any depth.
func (a *Adapter) ExpandValue(val any, v Vars) any {
	switch x := val.(type) {
	case string:
		return a.Expand(x, v)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = a.ExpandValue(e, v)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = a.ExpandValue(e, v)
		}
		return out
	default:
		return val
	}
}

// placeholdersIn lists the placeholder names in s.
func placeholdersIn(s string) []string {
	var out []string
	for _, m := range placeholderRe.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// stringsIn lists every string in a value decoded from YAML, at any depth
// (map keys too).
func stringsIn(val any) []string {
	switch x := val.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, stringsIn(e)...)
		}
		return out
	case map[string]any:
		var out []string
		for k, e := range x {
			out = append(out, k)
			out = append(out, stringsIn(e)...)
		}
		return out
	}
	return nil
}

// sharedUse is a per-session placeholder in a value that one editor
// writes for every session it serves.
type sharedUse struct{ field, name string }

// sharedUses lists the per-session placeholders in the adapter's files
// and command arguments, which the editor holds once for all its
// sessions.
func (a *Adapter) sharedUses() []sharedUse {
	var out []sharedUse
	add := func(field string, ss ...string) {
		for _, s := range ss {
			for _, n := range placeholdersIn(s) {
				if slices.Contains(perSession, n) {
					out = append(out, sharedUse{field, n})
				}
			}
		}
	}
	for i, f := range a.Files {
		add(fmt.Sprintf("files[%d].path", i), f.Path)
		add(fmt.Sprintf("files[%d].content", i), f.Content)
	}
	for _, name := range a.commandNames() {
		add(name+".args", stringsIn(a.command(name).Args)...)
	}
	return out
}

// sharedMsg is the error for a per-session placeholder in a value every
// session of one editor shares.
func sharedMsg(name string) string {
	return fmt.Sprintf("placeholder {{%s}} differs per session, and with isolation: window one editor (its files and keybindings) serves every session: set isolation: editor, an editor per simulator", name)
}

// CheckIsolation says whether the adapter can run at the isolation a run
// uses (an adapter's own, or --isolation): with IsolationWindow its
// files and command arguments cannot hold per-session placeholders.
func (a *Adapter) CheckIsolation(isolation string) error {
	if isolation == IsolationEditor {
		return nil
	}
	var errs []error
	for _, u := range a.sharedUses() {
		errs = append(errs, &dialog.FieldError{File: a.Source, Field: u.field, Msg: sharedMsg(u.name)})
	}
	return errors.Join(errs...)
}

// commandNames are the adapter's commands by field name: open.command,
// then commands./x in name order.
func (a *Adapter) commandNames() []string {
	names := []string{"open.command"}
	for _, n := range slices.Sorted(maps.Keys(a.Commands)) {
		names = append(names, "commands."+n)
	}
	return names
}

// command returns the command a name of commandNames stands for.
func (a *Adapter) command(name string) Command {
	if name == "open.command" {
		return a.Open.Command
	}
	return a.Commands[strings.TrimPrefix(name, "commands.")]
}

// KeyArgs are the commands run with arguments by their keybindings.
func (a *Adapter) KeyArgs() []Command {
	var out []Command
	for _, name := range a.commandNames() {
		if c := a.command(name); c.Args != nil && c.Keybinding != "" {
			out = append(out, c)
		}
	}
	return out
}

// root names the folder a file's path is in, for messages.
func (f File) root() string {
	if f.Root == RootHome {
		return "the simulator's HOME"
	}
	return "the editor's user-data folder"
}
