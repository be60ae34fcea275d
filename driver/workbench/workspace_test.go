package workbench

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"dialogfarm/adapter"
)

// TestWorkspaceFileWrittenOnlyWhenItChanges: a window watches its
// workspace file and reads it again on every write, so the file a session
// shows is not rewritten for each config on the same repository; it is
// when what it says changes.
func TestWorkspaceFileWrittenOnlyWhenItChanges(t *testing.T) {
	repo := t.TempDir()
	a := &adapter.Adapter{Name: "ask", Settings: map[string]any{"ask.endpoint": "{{capture_url}}"}}
	s := &Session{ID: "s1", capture: noExchanges{}, dir: t.TempDir(), adapters: []*adapter.Adapter{a}}
	path, err := s.workspaceFile(repo)
	if err != nil {
		t.Fatal(err)
	}
	var ws struct {
		Folders  []struct{ Path string } `json:"folders"`
		Settings map[string]any          `json:"settings"`
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &ws); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(ws.Folders) != 1 || ws.Folders[0].Path != repo || ws.Settings["ask.endpoint"] != "http://127.0.0.1:1/s" {
		t.Fatalf("%s says %s, want the repository and the session's capture URL", path, data)
	}
	// A time stamp far in the past: a write, however soon, moves it.
	old := time.Unix(1_000_000_000, 0)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.workspaceFile(repo)
	if err != nil || again != path {
		t.Fatalf("second config on the repository: %q, %v; want %q", again, err, path)
	}
	after, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !after.ModTime().Equal(before.ModTime()) || !os.SameFile(before, after) {
		t.Fatalf("the unchanged workspace file was written again (modified %v, was %v)", after.ModTime(), before.ModTime())
	}
	a.Settings["ask.endpoint"] = "http://127.0.0.1:2/other"
	if _, err := s.workspaceFile(repo); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); !json.Valid(data) || !strings.Contains(string(data), "127.0.0.1:2/other") {
		t.Fatalf("changed settings did not reach the workspace file: %s", data)
	}
}
