package driver

import (
	"context"
	"fmt"
	"path"
	"time"
)

// Workbench actions: each presses keys or clicks the way a developer would
// and then waits for the state it promises, read from the DOM.

// jsReady holds when the workbench has loaded, extensions are running, the
// explorer shows the folder and the plugin's readiness sign (a selector from
// its adapter, e.g. its status item) is up.
const jsReady = `(sel) => !!document.querySelector('.monaco-workbench') &&
	performance.getEntriesByName('code/didLoadExtensions').length > 0 &&
	!!document.querySelector('.explorer-folders-view .monaco-list-row') &&
	(!sel || !!document.querySelector(sel))`

// jsQuickInputFocused holds when the quick input box is open and has focus.
const jsQuickInputFocused = `() => {
	const w = document.querySelector('.quick-input-widget');
	return !!w && w.style.display !== 'none' && w.contains(document.activeElement);
}`

// jsQuickInputClosed holds when the quick input box is gone.
const jsQuickInputClosed = `() => {
	const w = document.querySelector('.quick-input-widget');
	return !w || w.style.display === 'none';
}`

// jsRowLabels returns the aria-labels of all visible quick-input rows.
const jsRowLabels = `() => [...document.querySelectorAll('.quick-input-widget .quick-input-list .monaco-list-row')]
	.map(r => r.getAttribute('aria-label') || '')`

// rowMatch says which quick-input row is wanted: its aria-label equals
// Exact or starts with one of Prefixes.
type rowMatch struct {
	Exact    string   `json:"exact"`
	Prefixes []string `json:"prefixes"`
}

// jsRowWanted returns "focused" when the focused quick-input row is a
// wanted one, "listed" when a wanted row is listed but not focused, and
// null while none is listed.
const jsRowWanted = `(m) => {
	const ok = (r) => { const l = r.getAttribute('aria-label') || ''; return l === m.exact || m.prefixes.some(p => l.startsWith(p)); };
	const rows = [...document.querySelectorAll('.quick-input-widget .quick-input-list .monaco-list-row')];
	if (!rows.some(ok)) return null;
	return rows.some(r => r.classList.contains('focused') && ok(r)) ? 'focused' : 'listed';
}`

// jsEditorActive holds when the active tab is the file and an editor in
// the active group has focus.
const jsEditorActive = `(name) => {
	const tab = document.querySelector('.editor-group-container.active .tab.active');
	const label = tab ? (tab.getAttribute('aria-label') || '') : '';
	const ed = document.querySelector('.editor-group-container.active .monaco-editor');
	return (label === name || label.startsWith(name + ',')) && !!ed && ed.contains(document.activeElement);
}`

// jsStatusSelection returns the editor selection status text ("Ln 9, Col 5").
const jsStatusSelection = `() => {
	const el = document.querySelector('[id="status.editor.selection"]');
	return el ? el.textContent.trim() : '';
}`

// waitReady waits for the workbench and the plugin to be usable.
func (w *window) waitReady(ctx context.Context, pluginReady string) error {
	return w.waitFor(ctx, "the workbench is ready (extensions loaded, explorer shown, plugin ready: "+pluginReady+")", jsReady, pluginReady)
}

// quickPick types text into an open quick input and picks the row that m
// matches, moving the keyboard focus to it first. The caller waits for
// what picking it does, together with quickInputClosed.
func (w *window) quickPick(ctx context.Context, text string, m rowMatch, want string) error {
	if err := w.waitFor(ctx, "the quick input has focus", jsQuickInputFocused); err != nil {
		return err
	}
	if err := w.insert(ctx, text); err != nil {
		return err
	}
	// Results arrive asynchronously: wait in the page until the wanted row
	// is listed, then walk the focus to it. Enter on an earlier row opens
	// the wrong thing.
	for attempt := 0; ; attempt++ {
		v, err := w.value(ctx, "the quick input lists "+want, jsRowWanted, m)
		if err != nil {
			return fmt.Errorf("%w (rows: %q)", err, w.rowLabels(ctx))
		}
		if v == "focused" {
			break
		}
		if attempt > 24 {
			return fmt.Errorf("quick input: cannot move focus to %s (rows: %q)", want, w.rowLabels(ctx))
		}
		if err := w.keys(ctx, keyArrowDown); err != nil {
			return err
		}
	}
	return w.keys(ctx, keyEnter)
}

// quickInputClosed is the state after a pick: the quick input is gone.
var quickInputClosed = cond{what: "the quick input closes", js: jsQuickInputClosed}

// rowLabels reads the quick input's rows, for error messages (also after
// ctx ended).
func (w *window) rowLabels(ctx context.Context) []string {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	res, err := w.eval(ctx, jsRowLabels)
	if err != nil {
		return nil
	}
	var labels []string
	for _, v := range res.Arr() {
		labels = append(labels, v.Str())
	}
	return labels
}

// openFile opens a workspace-relative file with Quick Open (Ctrl+P) and
// waits for its tab to be active with the editor focused. A non-empty at
// ("9:5": line and column) is typed after the name, as Quick Open allows,
// so that the file opens with the cursor there: one step instead of Quick
// Open and then Go to Line.
func (w *window) openFile(ctx context.Context, rel, at string) error {
	if err := w.keys(ctx, keyControl, keyP); err != nil {
		return err
	}
	base, dir := path.Base(rel), path.Dir(rel)
	// File rows are labelled "<name> <folder>, <group>", the group being
	// "file results", "recently opened", ...
	want := base
	if dir != "." {
		want = base + " " + dir
	}
	match := rowMatch{Exact: want, Prefixes: []string{want + ", "}}
	text := rel
	if at != "" {
		text += ":" + at
	}
	if err := w.quickPick(ctx, text, match, base); err != nil {
		return fmt.Errorf("open %s: %w", rel, err)
	}
	return w.waitAll(ctx, quickInputClosed, cond{what: "the editor tab " + base + " is active and focused", js: jsEditorActive, args: []any{base}})
}

// runCommand runs a command by its palette title (F1) and waits until the
// palette has closed and the conditions the command promises hold.
func (w *window) runCommand(ctx context.Context, title string, then ...cond) error {
	if err := w.keys(ctx, keyF1); err != nil {
		return err
	}
	match := rowMatch{Exact: title, Prefixes: []string{title + ",", title + " "}}
	if err := w.quickPick(ctx, title, match, title); err != nil {
		return fmt.Errorf("run command %q: %w", title, err)
	}
	return w.waitAll(ctx, append([]cond{quickInputClosed}, then...)...)
}

// waitStatus waits for the editor's selection status item to read want.
func (w *window) waitStatus(ctx context.Context, want string) error {
	return w.waitFor(ctx, fmt.Sprintf("the status bar shows %q", want), `(want) => (`+jsStatusSelection+`)() === want`, want)
}

// status reads the editor's selection status item.
func (w *window) status(ctx context.Context) string {
	res, err := w.eval(ctx, jsStatusSelection)
	if err != nil {
		return ""
	}
	return res.Str()
}

// contextMenu right-clicks in the editor (inside the selection if there is
// one, else at the cursor), hovers the menu item with the given label and
// activates it with Enter.
func (w *window) contextMenu(ctx context.Context, item string) error {
	p, err := w.point(ctx, "the cursor or selection is visible in the editor", `() => {
		const ed = document.querySelector('.editor-group-container.active .monaco-editor');
		if (!ed) return null;
		const sel = [...ed.querySelectorAll('.selected-text')].map(e => e.getBoundingClientRect())
			.filter(r => r.width > 4 && r.height > 2).sort((a, b) => b.width - a.width);
		if (sel.length) { const r = sel[0]; return {x: r.left + r.width / 2, y: r.top + r.height / 2}; }
		const c = ed.querySelector('.cursors-layer .cursor');
		if (!c) return null;
		const r = c.getBoundingClientRect();
		if (r.height < 2) return null;
		return {x: r.left + 1, y: r.top + r.height / 2};
	}`)
	if err != nil {
		return err
	}
	before := w.status(ctx)
	if err := w.click(ctx, p, mouseRight); err != nil {
		return err
	}
	q, err := w.point(ctx, fmt.Sprintf("the editor context menu shows %q", item), `(item) => {
		for (const host of document.querySelectorAll('.shadow-root-host')) {
			const root = host.shadowRoot;
			if (!root) continue;
			for (const a of root.querySelectorAll('.monaco-menu .action-menu-item')) {
				const label = a.querySelector('.action-label');
				if (label && label.textContent.trim() === item) {
					const r = a.getBoundingClientRect();
					if (r.width > 0 && r.height > 0) return {x: r.left + r.width / 2, y: r.top + r.height / 2};
				}
			}
		}
		return null;
	}`, item)
	if err != nil {
		return err
	}
	if after := w.status(ctx); after != before {
		return fmt.Errorf("right click moved the cursor: status %q, was %q", after, before)
	}
	// Hover first, as a hand does: the menu focuses the item under the
	// pointer, and a click on an item the menu has not focused yet can be
	// lost while the menu is still settling.
	if err := w.move(ctx, q); err != nil {
		return fmt.Errorf("hover %q: %w", item, err)
	}
	if err := w.waitFor(ctx, fmt.Sprintf("the context menu item %q is focused", item), `(item) => {
		for (const host of document.querySelectorAll('.shadow-root-host')) {
			const root = host.shadowRoot;
			if (!root) continue;
			for (const li of root.querySelectorAll('.monaco-menu .action-item.focused')) {
				const label = li.querySelector('.action-label');
				if (label && label.textContent.trim() === item) return true;
			}
		}
		return false;
	}`, item); err != nil {
		return err
	}
	// Enter activates the item the pointer focused, as a keyboard user
	// would; a mouse click that lands while the menu is still settling is
	// dropped, and telling that apart costs a timeout.
	if err := w.keys(ctx, keyEnter); err != nil {
		return err
	}
	return w.waitFor(ctx, "the context menu closes", `() => ![...document.querySelectorAll('.shadow-root-host')].some(h => {
		const m = h.shadowRoot && h.shadowRoot.querySelector('.monaco-menu');
		return m && m.getBoundingClientRect().width > 0;
	})`)
}
