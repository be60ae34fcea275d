package driver

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"dialogfarm/dialog"
	"dialogfarm/driver/workbench"
)

// checkNoFileIsHighlighted drives, on r (TestEndToEnd's editor), a config
// on the sample repository's JavaScript file, a language whose built-in
// extension sets a highlighting limit of its own, and checks that the
// editor left open shows the file untokenized, as the settings ask for
// every language: each piece of text in the default colour class (mtk1).
// A highlighted file shows keywords in another class within the first
// render after its grammar loaded, long before the dialogue ends; the
// check still watches the editor for 2 s more.
func checkNoFileIsHighlighted(t *testing.T, ctx context.Context, r *Runner) {
	c := dialog.ChatConfig{ID: "javascript-untokenized", Repo: "../examples/sample-repo", File: "web/cart.js", Language: "javascript",
		Cursor: configPtr(configPos(4, 3)), Trigger: dialog.TriggerKeybinding, Instruction: dialog.InstructionFreeText,
		Turns: configTurns("What does lineTotal return?")}
	sum := mustDriveOnFarm(ctx, t, r, []dialog.ChatConfig{c}, 1)
	if d := readRecords(t, sum.Records)[c.ID]; d.Status != dialog.StatusOK {
		t.Fatalf("%s: %s at %s: %s", c.ID, d.Status, d.FailedStep, d.Error)
	}
	page := r.slots[0].sess.Page()
	// The editor draws spaces as no-break spaces.
	shown := `() => {
		const ed = document.querySelector('.editor-group-container.active .monaco-editor');
		const text = ed ? [...ed.querySelectorAll('.view-line')].map(l => l.textContent).join('\n') : '';
		return text.replaceAll('\u00a0', ' ').includes('function lineTotal(item)');
	}`
	sctx, scancel := context.WithTimeout(ctx, 30*time.Second)
	defer scancel()
	if _, err := pollPage(sctx, page, "the editor shows cart.js", shown); err != nil {
		t.Fatal(err)
	}
	wctx, wcancel := context.WithTimeout(ctx, 2*time.Second)
	defer wcancel()
	v, err := pollPage(wctx, page, "a piece of cart.js in a colour of its own", `() => {
		const ed = document.querySelector('.editor-group-container.active .monaco-editor');
		const other = [...ed.querySelectorAll('.view-line span[class^="mtk"]')].find(s => s.className !== 'mtk1');
		return other ? other.className + ': ' + other.textContent : null;
	}`)
	if err == nil {
		t.Errorf("the editor highlights JavaScript: %s", v)
	} else if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatal(err)
	}
}

// checkWorkbenchLog: the workbench's log lines are read from where the web
// workbench keeps them (what the warning for an empty explorer shows), in
// its format (file, time stamp, level), from the window's own folder of
// logs: one folder, named by a time at or after the page's start.
func checkWorkbenchLog(t *testing.T, ctx context.Context, r *Runner) {
	if len(r.slots) == 0 || r.slots[0].sess == nil {
		t.Fatal("no window is open")
	}
	lines, err := workbench.LogLines(ctx, r.slots[0].sess.Page(), `\[info\]`, 1000)
	if err != nil {
		t.Fatal(err)
	}
	format := regexp.MustCompile(`^\S+\.log: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} \[info\] `)
	folders := map[string]bool{}
	for _, l := range lines {
		if !format.MatchString(l) {
			t.Errorf("log line %q: want file, time stamp and level", l)
		}
		folder, _, _ := strings.Cut(strings.TrimPrefix(l, "/"), "/")
		folders[folder] = true
	}
	if len(folders) > 1 {
		t.Errorf("the window's own log lines come from %d folders, want one: %v", len(folders), folders)
	}
	if len(lines) == 0 {
		t.Error("read no [info] line from the workbench's log")
	} else {
		t.Logf("%d [info] lines; the first: %s", len(lines), lines[0])
	}
}
