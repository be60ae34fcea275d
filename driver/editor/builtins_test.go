package editor

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fakeBuiltins makes a folder shaped like code-server's built-in
// extensions: extensions by folder name and publisher.name, the shared
// node_modules and a loose file.
func fakeBuiltins(t *testing.T, exts map[string]string) string {
	t.Helper()
	src := t.TempDir()
	for folder, id := range exts {
		pub, name, _ := strings.Cut(id, ".")
		if err := os.MkdirAll(filepath.Join(src, folder), 0o755); err != nil {
			t.Fatal(err)
		}
		manifest := `{"publisher": "` + pub + `", "name": "` + name + `", "version": "1.0.0"}`
		if err := os.WriteFile(filepath.Join(src, folder, "package.json"), []byte(manifest), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(src, "node_modules", "dep"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "package.json"), []byte(`{"name": "vscode-extensions"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return src
}

func TestLinkBuiltinsLeavesSkippedOut(t *testing.T) {
	src := fakeBuiltins(t, map[string]string{
		"git": "vscode.git", "copilot": "GitHub.copilot-chat", "python": "vscode.python",
		"theme-defaults": "vscode.theme-defaults", "merge-conflict": "vscode.merge-conflict",
	})
	dst := filepath.Join(t.TempDir(), "builtin-extensions")
	// A stale link from an earlier start goes.
	if err := os.MkdirAll(dst, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(src, "git"), filepath.Join(dst, "git")); err != nil {
		t.Fatal(err)
	}
	// The skip list's case need not match the manifest's.
	if err := linkBuiltins(src, dst, []string{"vscode.git", "github.copilot-chat"}); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dst)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
		target, err := os.Readlink(filepath.Join(dst, e.Name()))
		if err != nil || target != filepath.Join(src, e.Name()) {
			t.Errorf("%s links to %q (%v), want %s", e.Name(), target, err, filepath.Join(src, e.Name()))
		}
	}
	want := []string{"merge-conflict", "node_modules", "package.json", "python", "theme-defaults"}
	if !slices.Equal(got, want) {
		t.Errorf("linked %v, want %v", got, want)
	}
	// A manifest read through the link is the extension's own.
	if _, err := os.Stat(filepath.Join(dst, "python", "package.json")); err != nil {
		t.Error(err)
	}
}

func TestLinkBuiltinsBadManifest(t *testing.T) {
	src := fakeBuiltins(t, map[string]string{"python": "vscode.python"})
	if err := os.WriteFile(filepath.Join(src, "python", "package.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := linkBuiltins(src, filepath.Join(t.TempDir(), "b"), nil)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(src, "python")) {
		t.Errorf("error %v, want one naming %s", err, filepath.Join(src, "python"))
	}
}

// The editor's command line names the linked folder when code-server's
// own built-ins are where setup puts them, and only then.
func TestEditorDirsBuiltinsFolder(t *testing.T) {
	src := fakeBuiltins(t, map[string]string{"git": "vscode.git", "python": "vscode.python"})
	cfg := Config{Dir: t.TempDir(), Password: "pw", SkipBuiltin: []string{"vscode.git"}, Builtins: src, ExtensionsDir: "/ext"}
	dirs, err := editorDirs(cfg)
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Join(editorArgs(cfg, dirs, "127.0.0.1:1"), " ")
	folder := filepath.Join(cfg.Dir, "builtin-extensions")
	if !strings.Contains(args, "--builtin-extensions-dir "+folder) {
		t.Errorf("args %q lack --builtin-extensions-dir %s", args, folder)
	}
	if _, err := os.Lstat(filepath.Join(folder, "git")); !os.IsNotExist(err) {
		t.Errorf("skipped git is in %s (%v)", folder, err)
	}
	if _, err := os.Lstat(filepath.Join(folder, "python")); err != nil {
		t.Errorf("python is not in %s: %v", folder, err)
	}
	if !slices.Contains(dirs.env, "VSCODE_SKIP_BUILTIN_EXTENSIONS=vscode.git") {
		t.Errorf("env lacks the skip list: %v", dirs.env)
	}

	cfg.Builtins = filepath.Join(src, "missing")
	cfg.Dir = t.TempDir()
	if dirs, err = editorDirs(cfg); err != nil {
		t.Fatal(err)
	}
	if args := strings.Join(editorArgs(cfg, dirs, "127.0.0.1:1"), " "); strings.Contains(args, "--builtin-extensions-dir") {
		t.Errorf("without code-server's folder, args %q still name one", args)
	}
}

// The skipped built-ins may run only where code-server has them, so the
// workbench's web worker extension host does not run their browser code;
// a user's own remote.extensionKind wins.
func TestSettingsKeepSkippedOutOfTheWebWorker(t *testing.T) {
	s := readSettings(t, Config{Dir: t.TempDir(), Password: "pw", SkipBuiltin: []string{"vscode.emmet", "vscode.git-base"}})
	kinds, _ := s["remote.extensionKind"].(map[string]any)
	for _, id := range []string{"vscode.emmet", "vscode.git-base"} {
		if k, _ := kinds[id].([]any); len(k) != 2 || k[0] != "workspace" || k[1] != "-web" {
			t.Errorf("remote.extensionKind[%s] = %v, want [workspace -web]", id, kinds[id])
		}
	}
	if len(kinds) != 2 {
		t.Errorf("remote.extensionKind = %v, want the two skipped", kinds)
	}
	s = readSettings(t, Config{Dir: t.TempDir(), Password: "pw"})
	if _, ok := s["remote.extensionKind"]; ok {
		t.Errorf("nothing skipped, yet remote.extensionKind = %v", s["remote.extensionKind"])
	}
	own := map[string]any{"pub.web": []string{"web"}}
	s = readSettings(t, Config{Dir: t.TempDir(), Password: "pw", SkipBuiltin: []string{"vscode.emmet"},
		Settings: map[string]any{"remote.extensionKind": own}})
	if kinds, _ := s["remote.extensionKind"].(map[string]any); len(kinds) != 1 || kinds["pub.web"] == nil {
		t.Errorf("the user's remote.extensionKind became %v", s["remote.extensionKind"])
	}
}
