package editor

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"dialogfarm/adapter"
)

// editorAdapter parses an adapter that writes files under both roots and
// a keybinding with arguments.
func editorAdapter(t *testing.T, extra string) *adapter.Adapter {
	t.Helper()
	src := `name: files
isolation: editor
extension: {id: pub.files, vsix: files.vsix}
open: {activity_bar: Files}
webview: {frames: [iframe], ready: body}
input: {selector: '#in', method: fill, send: {key: enter}}
answer: {selector: .a, done: {stable_ms: 100}}
new_chat: {command: New}
` + extra
	a, err := adapter.Parse([]byte(src), "files.yaml", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestWriteEditorFiles(t *testing.T) {
	a := editorAdapter(t, `files:
  - path: User/globalStorage/{{extension_id}}/providers.json
    content: '[{"apiHostname": "{{capture_host}}", "apiPort": {{capture_port}}, "apiPath": "{{capture_path}}", "apiKey": "{{secret}}"}]'
  - {path: .files/config.yaml, root: home, content: "url: {{capture_url}}\nhome: {{home}}\ndata: {{user_data}}\n"}
commands:
  /set: {id: files.set, keybinding: ctrl+alt+y, args: {origin: '{{capture_origin}}', session: '{{session}}'}}
`)
	dir := t.TempDir()
	v := adapter.Vars{CaptureURL: "http://127.0.0.1:5151/K3Y/s/s2/v1", Session: "s2", Secret: "K3Y"}
	if err := (Config{Dir: dir}).WriteFiles(v, []*adapter.Adapter{a}); err != nil {
		t.Fatal(err)
	}
	read := func(path string) string {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(dir, path))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	var providers []map[string]any
	if err := json.Unmarshal([]byte(read("user-data/User/globalStorage/pub.files/providers.json")), &providers); err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{{"apiHostname": "127.0.0.1", "apiPort": 5151.0, "apiPath": "/K3Y/s/s2/v1", "apiKey": "K3Y"}}
	if diff := cmp.Diff(want, providers); diff != "" {
		t.Errorf("providers.json (-want +got):\n%s", diff)
	}
	if got, want := read("home/.files/config.yaml"), "url: http://127.0.0.1:5151/K3Y/s/s2/v1\nhome: "+filepath.Join(dir, "home")+"\ndata: "+filepath.Join(dir, "user-data")+"\n"; got != want {
		t.Errorf("config.yaml %q, want %q", got, want)
	}
	var keys []map[string]any
	if err := json.Unmarshal([]byte(read("user-data/User/keybindings.json")), &keys); err != nil {
		t.Fatal(err)
	}
	wantKeys := []map[string]any{{"key": "ctrl+alt+y", "command": "files.set", "args": map[string]any{"origin": "http://127.0.0.1:5151", "session": "s2"}}}
	if diff := cmp.Diff(wantKeys, keys); diff != "" {
		t.Errorf("keybindings.json (-want +got):\n%s", diff)
	}
}

// TestEditorFileMayNotLeaveItsRoot: a path that a placeholder's value
// makes absolute is refused, and the error does not show the value (here
// the capture secret).
func TestEditorFileMayNotLeaveItsRoot(t *testing.T) {
	a := editorAdapter(t, "files:\n  - {path: '{{capture_path}}.json', root: home, content: x}\n")
	dir := t.TempDir()
	err := Config{Dir: dir}.WriteFiles(adapter.Vars{CaptureURL: "http://127.0.0.1:5151/K3Y/s/s2/v1", Session: "s2", Secret: "K3Y"}, []*adapter.Adapter{a})
	if err == nil || !strings.Contains(err.Error(), `files's file "{{capture_path}}.json" (files.yaml, field files[0].path)`) || !strings.Contains(err.Error(), "an absolute path") {
		t.Fatalf("err = %v", err)
	}
	if strings.Contains(err.Error(), "K3Y") {
		t.Errorf("the error shows the secret: %v", err)
	}
	if _, err := os.Stat("/K3Y"); err == nil {
		t.Errorf("a file was written outside the root")
	}
}
