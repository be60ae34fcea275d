package driver

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"dialogfarm/dialog"
	"dialogfarm/internal/procstat"
)

// checkFileChangesAreSeen drives, on r (TestEndToEnd's editor), a config
// on a file three folders deep in a workspace of its own, then changes
// that file on disk as another program would: the editor left open must
// show the new text. make setup has code-server watch a window's
// workspace in its own process (scripts/patch-code-server.sh), so the
// check also asks that no window has a file watcher process of its own.
func checkFileChangesAreSeen(t *testing.T, ctx context.Context, r *Runner) {
	repo := t.TempDir()
	file := filepath.Join("pkg", "store", "cache", "lru.py")
	if err := os.MkdirAll(filepath.Join(repo, filepath.Dir(file)), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(body string) {
		t.Helper()
		// Written aside and renamed over it, as editors and git do.
		tmp := filepath.Join(repo, file+".tmp")
		if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(repo, file)); err != nil {
			t.Fatal(err)
		}
	}
	write("def get(cache, key):\n    \"\"\"Return the value of key.\"\"\"\n    value = cache.pop(key)\n    cache[key] = value\n    return value\n")
	c := dialog.ChatConfig{ID: "changed-on-disk", Repo: repo, File: filepath.ToSlash(file), Language: "python",
		Cursor: configPtr(configPos(4, 5)), Trigger: dialog.TriggerKeybinding, Instruction: dialog.InstructionFreeText,
		Turns: configTurns("Why does get put the key back?")}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	sum := mustDriveOnFarm(ctx, t, r, []dialog.ChatConfig{c}, 1)
	if d := readRecords(t, sum.Records)[c.ID]; d.Status != dialog.StatusOK {
		t.Fatalf("%s: %s at %s: %s", c.ID, d.Status, d.FailedStep, d.Error)
	}

	procs := procstat.Read()
	for _, pid := range procstat.Group(procs, editorPID(r)) {
		if procstat.ClassOf(pid, false) == procstat.FileWatcher {
			t.Errorf("process %d of code-server is a file watcher: make setup's patch (scripts/patch-code-server.sh) is not applied", pid)
		}
	}

	page := r.slots[0].sess.Page()
	shows := func(text string) string {
		return `() => {
			const ed = document.querySelector('.editor-group-container.active .monaco-editor');
			const text = ed ? [...ed.querySelectorAll('.view-line')].map(l => l.textContent).join('\n') : '';
			return text.replaceAll('\u00a0', ' ').includes(` + "`" + text + "`" + `);
		}`
	}
	sctx, scancel := context.WithTimeout(ctx, 30*time.Second)
	defer scancel()
	if _, err := pollPage(sctx, page, "the editor shows lru.py", shows("cache[key] = value")); err != nil {
		t.Fatal(err)
	}
	write("def get(cache, key, default=None):\n    \"\"\"Changed on disk.\"\"\"\n    if key not in cache:\n        return default\n    return cache[key]\n")
	wctx, wcancel := context.WithTimeout(ctx, 20*time.Second)
	defer wcancel()
	if _, err := pollPage(wctx, page, "the editor shows lru.py as changed on disk", shows("Changed on disk.")); err != nil {
		t.Fatalf("%v: code-server did not see a file of its workspace change on disk", err)
	}
}
