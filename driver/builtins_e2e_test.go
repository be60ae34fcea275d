package driver

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"dialogfarm/driver/editor"
)

// checkBuiltinsSkipped reads which extensions the extension hosts
// activated (their logs, under the editor's logs folder) and checks that
// the plugins did, that Quill's adapter's needed built-in did, and that no
// other skipped built-in did (git, GitHub, merge-conflict and Emmet
// activate in every window when loaded).
func checkBuiltinsSkipped(t *testing.T, logs string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(logs, "*", "exthost*", "remoteexthost.log"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no extension host log under %s (%v)", logs, err)
	}
	activated := map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			_, rest, ok := strings.Cut(line, "ExtensionService#_doActivateExtension ")
			if id, _, _ := strings.Cut(rest, ","); ok {
				activated[strings.ToLower(id)] = true
			}
		}
	}
	for _, id := range []string{"dialogfarm.askplugin", "dialogfarm-test.quill", "vscode.merge-conflict"} {
		if !activated[id] {
			t.Errorf("%s was not activated; activated: %v", id, activated)
		}
	}
	for _, id := range editor.SkippedBuiltins() {
		if id != "vscode.merge-conflict" && activated[strings.ToLower(id)] {
			t.Errorf("skipped built-in %s was activated", id)
		}
	}
}

// checkNoBuiltinInWebWorker reads which built-in extensions' browser code
// the windows fetched (the URLs in Chromium's HTTP cache): the workbench's
// web worker extension host runs a built-in that code-server skips unless
// the settings forbid it, and none of the skipped ones may be fetched.
func checkNoBuiltinInWebWorker(t *testing.T, root, cache string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(cache, "*_0"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no HTTP cache entry under %s (%v)", cache, err)
	}
	skipped := map[string]bool{}
	for _, id := range editor.SkippedBuiltins() {
		skipped[strings.ToLower(id)] = true
	}
	url := regexp.MustCompile(`/static/extensions/([^/]+)/[^\x00\s]*browser[^\x00\s]*\.js`)
	sawWorkbench := false
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sawWorkbench = sawWorkbench || strings.Contains(string(data), "/static/out/vs/code/browser/workbench/workbench.js")
		for _, m := range url.FindAllSubmatch(data, -1) {
			ext, err := editor.ReadPluginManifest(filepath.Join(editor.DefaultConfig(root).Builtins, string(m[1])))
			if err != nil {
				t.Fatal(err)
			}
			id := ext.ID()
			if skipped[strings.ToLower(id)] && id != "vscode.merge-conflict" {
				t.Errorf("the browser fetched skipped built-in %s's browser code: %s", id, m[0])
			}
		}
	}
	if !sawWorkbench {
		t.Errorf("the workbench's script is not among %d cache entries: the check sees nothing", len(files))
	}
}
