package driver

import (
	"context"
	"testing"
	"time"

	"dialogfarm/dialog"
)

// checkNoHighlighting drives a config on a JavaScript file, whose
// built-in extension sets a highlighting limit of its own for JavaScript,
// and checks that the editor left open shows the file untokenized, as the
// settings ask for every language: each piece of text in the default
// colour class (mtk1). A highlighted file shows keywords in another class
// within the first render after its grammar loaded, long before the
// dialogue ends; the check still watches the editor for 2 s more.
func checkNoHighlighting(ctx context.Context, t *testing.T, r *Runner) {
	t.Helper()
	c := dialog.ChatConfig{ID: "javascript-untokenized", Repo: testRepo, File: "web/cart.js", Language: "javascript",
		Cursor: configPtr(configPos(4, 3)), Trigger: dialog.TriggerKeybinding, Instruction: dialog.InstructionFreeText,
		Turns: configTurns("What does lineTotal return?")}
	sum, err := r.Drive(ctx, []dialog.ChatConfig{c})
	if err != nil {
		t.Fatal(err)
	}
	if d := readRecords(t, sum.Records)[c.ID]; d.Status != dialog.StatusOK {
		t.Fatalf("%s: %s at %s: %s", c.ID, d.Status, d.FailedStep, d.Error)
	}
	w := r.sessions[0].win
	shown := `() => {
		const ed = document.querySelector('.editor-group-container.active .monaco-editor');
		const text = ed ? [...ed.querySelectorAll('.view-line')].map(l => l.textContent).join('\n') : '';
		return text.includes('function lineTotal(item)');
	}`
	if err := w.waitFor(ctx, "the editor shows cart.js", shown); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	v, err := w.poll(wctx, "a piece of cart.js in a colour of its own", `() => {
		const ed = document.querySelector('.editor-group-container.active .monaco-editor');
		const other = [...ed.querySelectorAll('.view-line span[class^="mtk"]')].find(s => s.className !== 'mtk1');
		return other ? other.className + ': ' + other.textContent : null;
	}`)
	if err == nil {
		t.Errorf("the editor highlights JavaScript: %s", v.Str())
	} else if !errIsTimeout(err) {
		t.Fatal(err)
	}
}
