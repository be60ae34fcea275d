package editor

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"dialogfarm/adapter"
	"dialogfarm/driver/internal/procenv"
	"dialogfarm/internal/runfiles"
)

// userDataDir is the user-data folder of the editor whose folder
// (Config.Dir) is dir.
func userDataDir(dir string) string { return filepath.Join(dir, "user-data") }

// UserData is the user-data folder of an editor started from c: the
// {{user_data}} of adapter files.
func (c Config) UserData() string { return userDataDir(c.Dir) }

// Home is the HOME of an editor started from c and of the processes it
// starts (the extension hosts, so the plugin): the {{home}} of adapter
// files.
func (c Config) Home() string { return procenv.Home(c.Dir) }

// WriteFiles writes, before an editor starts from c, what the adapters
// put into it: their files (under its user-data folder or HOME) and the
// keybindings that run their commands with arguments, placeholders
// replaced with v (whose UserData and Home are set here).
func (c Config) WriteFiles(v adapter.Vars, adapters []*adapter.Adapter) error {
	v.UserData, v.Home = c.UserData(), c.Home()
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
