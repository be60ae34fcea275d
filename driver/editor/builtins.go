package editor

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"dialogfarm/internal/runfiles"
)

// builtinsFolder is code-server's folder of built-in extensions under the
// tools folder that `make setup` makes.
func builtinsFolder(root string) string {
	return filepath.Join(root, "tools", "code-server", "node_modules", "code-server", "lib", "vscode", "extensions")
}

// linkBuiltins makes dst a folder of built-in extensions for code-server's
// --builtin-extensions-dir: a symbolic link to every entry of src (the
// install's own folder) except the extensions skip names (publisher.name,
// any case). VSCODE_SKIP_BUILTIN_EXTENSIONS alone filters the skipped ones
// out only after the server has scanned them: it reads every manifest and
// its translations for each window, keeps them in a cache file it reads
// and re-checks against a fresh scan, and sends the descriptions to the
// workbench. Left out of the folder, they cost none of that (the skipped
// ones were 1.2 MB of the 1.3 MB cache). Entries that are not extensions
// (the shared node_modules) are linked as they are.
func linkBuiltins(src, dst string, skip []string) error {
	entries, err := os.ReadDir(src)
	if err != nil {
		return fmt.Errorf("list built-in extensions: %w", err)
	}
	if err := os.RemoveAll(dst); err != nil {
		return fmt.Errorf("built-in extensions folder: %w", err)
	}
	if err := runfiles.MkdirAll(dst); err != nil {
		return fmt.Errorf("built-in extensions folder: %w", err)
	}
	skipped := map[string]bool{}
	for _, id := range skip {
		skipped[strings.ToLower(id)] = true
	}
	for _, e := range entries {
		from := filepath.Join(src, e.Name())
		id, err := extensionID(from)
		if err != nil {
			return err
		}
		if id != "" && skipped[strings.ToLower(id)] {
			continue
		}
		if err := os.Symlink(from, filepath.Join(dst, e.Name())); err != nil {
			return fmt.Errorf("built-in extensions folder: %w", err)
		}
	}
	return nil
}

// manifest is what dialogfarm reads of an extension's package.json.
type manifest struct {
	Publisher, Name string
	Contributes     struct {
		// ConfigurationDefaults holds "[language]" keys whose value is
		// that language's default for some settings.
		ConfigurationDefaults map[string]json.RawMessage `json:"configurationDefaults"`
	}
}

// readManifest reads the package.json in dir; ok is false when dir is not
// an extension (a file, or a folder without a manifest that names both
// publisher and name).
func readManifest(dir string) (m manifest, ok bool, err error) {
	data, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return m, false, nil
	}
	if err != nil {
		return m, false, fmt.Errorf("read extension %s: %w", dir, err)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return m, false, fmt.Errorf("read extension %s: package.json: %w", dir, err)
	}
	return m, m.Publisher != "" && m.Name != "", nil
}

// extensionID is publisher.name from the package.json in dir, or "" when
// dir is not an extension.
func extensionID(dir string) (string, error) {
	m, ok, err := readManifest(dir)
	if err != nil || !ok {
		return "", err
	}
	return m.Publisher + "." + m.Name, nil
}

// skippedKinds is the remote.extensionKind setting that keeps the skipped
// built-ins out of the workbench's web worker extension host: code-server
// skips them on its side only, and the workbench, which lists the
// built-ins of its own build, then ran those that also have browser code
// (Emmet, git-base, GitHub sign-in, merge-conflict, npm, the JSON client,
// TypeScript's browser part, ...) in a web worker of every window. Marked
// "workspace" they may run only where code-server has them: nowhere. In
// the browser "web" is added back to a configured kind unless "-web" says
// no.
func skippedKinds(skip []string) map[string][]string {
	if len(skip) == 0 {
		return nil
	}
	kinds := map[string][]string{}
	for _, id := range skip {
		kinds[id] = []string{"workspace", "-web"}
	}
	return kinds
}
