package workbench

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"

	"dialogfarm/adapter"
	"dialogfarm/internal/runfiles"
)

// workspaceFile writes a .code-workspace that opens repo with the plugin
// pointed at this session's capture URL. The per-session file is what lets
// several windows on one code-server talk to separate sessions. The file
// is written only when it is missing or its content changes, and then
// atomically: a window that shows the workspace watches its file (through
// code-server), and every write made it read the workspace again, and a
// read during a plain write's truncation would find no folder in it.
func (s *Session) workspaceFile(repo string) (string, error) {
	abs, err := filepath.Abs(repo)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(abs))
	path := filepath.Join(s.dir, "workspaces", s.ID, filepath.Base(abs)+"-"+hex.EncodeToString(sum[:4])+".code-workspace")
	settings := map[string]any{}
	vars := s.vars()
	for _, a := range s.adapters {
		for k, v := range a.ExpandSettings(vars) {
			settings[k] = v
		}
	}
	ws := map[string]any{
		"folders":  []map[string]string{{"path": abs}},
		"settings": settings,
	}
	data, err := json.MarshalIndent(ws, "", "  ")
	if err != nil {
		return "", err
	}
	if err := runfiles.MkdirAll(filepath.Dir(path)); err != nil {
		return "", err
	}
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return path, nil
	}
	return path, runfiles.WriteAtomic(path, data)
}

// vars are the values of the adapters' placeholders in this session.
func (s *Session) vars() adapter.Vars {
	return adapter.Vars{CaptureURL: s.capture.BaseURL(s.ID), Session: s.ID, Secret: s.secret,
		UserData: s.userData, Home: s.home}
}

// expander replaces a's placeholders with this session's values.
func (s *Session) expander(a *adapter.Adapter) func(string) string {
	v := s.vars()
	return func(str string) string { return a.Expand(str, v) }
}
