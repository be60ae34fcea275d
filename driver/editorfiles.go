package driver

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"dialogfarm/adapter"
	"dialogfarm/internal/runfiles"
)

// userDataDir is the user-data folder of the editor whose folder
// (EditorConfig.Dir) is dir.
func userDataDir(dir string) string { return filepath.Join(dir, "user-data") }

// homeDir is the HOME of the editor whose folder is dir (and of the
// processes it starts: the extension hosts, so the plugin).
func homeDir(dir string) string { return filepath.Join(dir, "home") }

// writeEditorFiles writes, before the editor whose folder is dir starts,
// what the adapters put into it: their files (under its user-data folder
// or HOME) and the keybindings that run their commands with arguments,
// placeholders replaced with v (whose UserData and Home are set here).
func writeEditorFiles(dir string, v adapter.Vars, adapters []*adapter.Adapter) error {
	v.UserData, v.Home = userDataDir(dir), homeDir(dir)
	var keys []map[string]any
	for _, a := range adapters {
		for i, f := range a.Files {
			root := v.UserData
			if f.Root == adapter.RootHome {
				root = v.Home
			}
			path, err := inside(root, a.Expand(f.Path, v))
			if err != nil {
				// The path as written: its value may hold the secret.
				return fmt.Errorf("write %s's file %q (%s, field files[%d].path): %w", a.Name, f.Path, a.Source, i, err)
			}
			if err := runfiles.MkdirAll(filepath.Dir(path)); err != nil {
				return fmt.Errorf("write %s's file %s: %w", a.Name, f.Path, err)
			}
			if err := runfiles.WriteFile(path, []byte(a.Expand(f.Content, v))); err != nil {
				return fmt.Errorf("write %s's file %s: %w", a.Name, f.Path, err)
			}
		}
		for _, c := range a.KeyArgs() {
			keys = append(keys, map[string]any{"key": c.Keybinding, "command": c.ID, "args": a.ExpandValue(c.Args, v)})
		}
	}
	if len(keys) == 0 {
		return nil
	}
	data, err := json.MarshalIndent(keys, "", "  ")
	if err != nil {
		return fmt.Errorf("encode keybindings: %w", err)
	}
	path := filepath.Join(v.UserData, "User", "keybindings.json")
	if err := runfiles.MkdirAll(filepath.Dir(path)); err != nil {
		return fmt.Errorf("write keybindings: %w", err)
	}
	if err := runfiles.WriteFile(path, data); err != nil {
		return fmt.Errorf("write keybindings: %w", err)
	}
	return nil
}

// inside joins root and the relative path rel, and refuses a path that
// is not inside root (a placeholder's value may hold a ..). The error
// does not repeat rel, which may hold a secret.
func inside(root, rel string) (string, error) {
	if filepath.IsAbs(rel) {
		return "", fmt.Errorf("with its placeholders replaced it is an absolute path; want one inside %s", root)
	}
	path := filepath.Join(root, rel)
	if r, err := filepath.Rel(root, path); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) || r == "." {
		return "", fmt.Errorf("with its placeholders replaced it is not inside %s", root)
	}
	return path, nil
}

// workspaceFile writes (once) a .code-workspace that opens repo with the
// plugin pointed at this session's capture URL. The per-session file is
// what lets several windows on one code-server talk to separate sessions.
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
	return path, runfiles.WriteFile(path, data)
}

// vars are the values of the adapters' placeholders in this session.
func (s *Session) vars() adapter.Vars {
	return adapter.Vars{CaptureURL: s.capture.BaseURL(s.ID), Session: s.ID, Secret: s.secret,
		UserData: userDataDir(s.editorDir), Home: homeDir(s.editorDir)}
}

// expander replaces a's placeholders with this session's values.
func (s *Session) expander(a *adapter.Adapter) func(string) string {
	v := s.vars()
	return func(str string) string { return a.Expand(str, v) }
}
