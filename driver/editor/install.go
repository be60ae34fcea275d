package editor

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"dialogfarm/adapter"
	"dialogfarm/driver/internal/procenv"
	"dialogfarm/internal/runfiles"
)

// Install makes dir an extensions folder (Config.ExtensionsDir) with
// every adapter's plugin in it: a .vsix is installed with code-server bin
// --install-extension (as a user would), a folder is linked. work holds
// the installer's own HOME, XDG folders and TMPDIR; it sees no other
// environment than the allow-list of package procenv.
func Install(ctx context.Context, bin, dir, work string, adapters []*adapter.Adapter) error {
	env, err := procenv.Isolated(work, false)
	if err != nil {
		return fmt.Errorf("install plugins: %w", err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("install plugins: %w", err)
	}
	if err := runfiles.MkdirAll(dir); err != nil {
		return fmt.Errorf("install plugins: %w", err)
	}
	// Packaged ones first: code-server then writes extensions.json, which
	// the linked folders are added to.
	for _, a := range adapters {
		if a.Extension.VSIX == "" {
			continue
		}
		vsix := a.Path(a.Extension.VSIX)
		cmd := exec.CommandContext(ctx, bin, "--extensions-dir", dir, "--install-extension", vsix, "--force")
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("install %s from %s: %w: %s", a.Extension.ID, vsix, err, strings.TrimSpace(string(out)))
		}
	}
	for _, a := range adapters {
		if a.Extension.Folder == "" {
			continue
		}
		src, err := filepath.Abs(a.Path(a.Extension.Folder))
		if err != nil {
			return fmt.Errorf("install %s: %w", a.Extension.ID, err)
		}
		m, err := ReadPluginManifest(src)
		if err != nil {
			return fmt.Errorf("install %s: %w", a.Extension.ID, err)
		}
		if m.ID() != a.Extension.ID {
			return fmt.Errorf("install %s: %s says it is %s (adapter %s, field extension.id)", a.Extension.ID, src, m.ID(), a.Source)
		}
		rel := m.ID() + "-" + m.Version
		if err := os.Symlink(src, filepath.Join(dir, rel)); err != nil {
			return fmt.Errorf("install %s: %w", a.Extension.ID, err)
		}
		if err := addToExtensionsJSON(dir, m, rel); err != nil {
			return fmt.Errorf("install %s: %w", a.Extension.ID, err)
		}
	}
	return nil
}

// addToExtensionsJSON lists a linked extension in the folder's
// extensions.json when code-server wrote one: with that file present it
// loads only what the file lists.
func addToExtensionsJSON(dir string, m PluginManifest, rel string) error {
	path := filepath.Join(dir, "extensions.json")
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	var list []map[string]any
	if err := json.Unmarshal(data, &list); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	list = append(list, map[string]any{
		"identifier":       map[string]any{"id": m.ID()},
		"version":          m.Version,
		"location":         map[string]any{"$mid": 1, "path": filepath.Join(dir, rel), "scheme": "file"},
		"relativeLocation": rel,
	})
	out, err := json.Marshal(list)
	if err != nil {
		return err
	}
	return runfiles.WriteFile(path, out)
}
