package workbench

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"dialogfarm/driver/browser"
)

// Workbench actions: each presses keys or clicks the way a developer would
// and then waits for the state it promises, read from the DOM.

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
// wanted one, else how many rows the focus must move to reach the nearest
// wanted row below it ("+2", by the rows' list index), and null while none
// is listed.
const jsRowWanted = `(m) => {
	const ok = (r) => { const l = r.getAttribute('aria-label') || ''; return l === m.exact || m.prefixes.some(p => l.startsWith(p)); };
	const rows = [...document.querySelectorAll('.quick-input-widget .quick-input-list .monaco-list-row')];
	if (!rows.some(ok)) return null;
	if (rows.some(r => r.classList.contains('focused') && ok(r))) return 'focused';
	const at = (r) => Number(r.getAttribute('data-index'));
	const f = rows.find(r => r.classList.contains('focused'));
	const from = f ? at(f) : -1;
	const below = rows.filter(ok).map(at).filter(i => i > from).sort((a, b) => a - b);
	return '+' + (below.length ? below[0] - from : 1);
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
		// Move as far as the list says in one go, then look again.
		n, err := strconv.Atoi(strings.TrimPrefix(v, "+"))
		if err != nil || n < 1 {
			n = 1
		}
		if err := w.repeat(ctx, n, keyArrowDown); err != nil {
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

// openFile opens the file rel of the workspace folder root with Quick Open
// (Ctrl+P) and waits for its tab to be active with the editor focused. It
// types the file's absolute path, as one pasted from a terminal: Quick
// Open only stats such a path, where a relative name waits for a search of
// the workspace's files (which it starts after 200 ms without typing while
// its file list loads, and which grows with the repository).
// A non-empty at ("9:5": line and column) is typed after the path, as
// Quick Open allows, so that the file opens with the cursor there: one
// step instead of Quick Open and then Go to Line.
func (w *window) openFile(ctx context.Context, root, rel, at string) error {
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
	text, err := filepath.Abs(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		return fmt.Errorf("open %s: %w", rel, err)
	}
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

// jsContextMenuPoint is where a right click opens the editor's context
// menu on the selection (the middle of the widest selected line the
// editor shows whole: a line scrolled half out of view is under the tabs
// or the scrollbar) or else at the cursor, with the status bar's
// selection item then.
const jsContextMenuPoint = `() => {
	const ed = document.querySelector('.editor-group-container.active .monaco-editor');
	if (!ed) return null;
	const status = (` + jsStatusSelection + `)();
	const guard = ed.querySelector('.overflow-guard');
	if (!guard) return null;
	const g = guard.getBoundingClientRect();
	const bar = ed.querySelector('.scrollbar.horizontal');
	const bottom = bar ? Math.min(g.bottom, bar.getBoundingClientRect().top) : g.bottom;
	const sel = [...ed.querySelectorAll('.selected-text')].map(e => e.getBoundingClientRect())
		.filter(r => r.width > 4 && r.height > 2 && r.top >= g.top && r.bottom <= bottom).sort((a, b) => b.width - a.width);
	if (sel.length) { const r = sel[0]; return {x: r.left + r.width / 2, y: r.top + r.height / 2, status}; }
	const c = ed.querySelector('.cursors-layer .cursor');
	if (!c) return null;
	const r = c.getBoundingClientRect();
	if (r.height < 2) return null;
	return {x: r.left + 1, y: r.top + r.height / 2, status};
}`

// contextMenu right-clicks in the editor (inside the selection if there is
// one, else at the cursor), hovers the menu item with the given label and
// activates it with Enter; it waits until the menu has closed and the
// conditions the item promises hold.
func (w *window) contextMenu(ctx context.Context, item string, then ...cond) error {
	// Where to click, and the status bar then (the click must not move
	// the cursor).
	v, err := w.poll(ctx, "the cursor or selection is visible in the editor", jsContextMenuPoint)
	if err != nil {
		return err
	}
	before := v.Get("status").Str()
	if err := w.click(ctx, point{X: v.Get("x").Num(), Y: v.Get("y").Num()}, browser.MouseRight); err != nil {
		return err
	}
	m, err := w.poll(ctx, fmt.Sprintf("the editor context menu shows %q", item), `(item) => {
		for (const host of document.querySelectorAll('.shadow-root-host')) {
			const root = host.shadowRoot;
			if (!root) continue;
			for (const a of root.querySelectorAll('.monaco-menu .action-menu-item')) {
				const label = a.querySelector('.action-label');
				if (label && label.textContent.trim() === item) {
					const r = a.getBoundingClientRect();
					if (r.width > 0 && r.height > 0) return {x: r.left + r.width / 2, y: r.top + r.height / 2, status: (`+jsStatusSelection+`)()};
				}
			}
		}
		return null;
	}`, item)
	if err != nil {
		return err
	}
	if after := m.Get("status").Str(); after != before {
		return fmt.Errorf("right click moved the cursor: status %q, was %q", after, before)
	}
	// Hover first, as a hand does: the menu focuses the item under the
	// pointer, and a click on an item the menu has not focused yet can be
	// lost while the menu is still settling.
	if err := w.move(ctx, point{X: m.Get("x").Num(), Y: m.Get("y").Num()}); err != nil {
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
	closed := cond{what: "the context menu closes", js: `() => ![...document.querySelectorAll('.shadow-root-host')].some(h => {
		const m = h.shadowRoot && h.shadowRoot.querySelector('.monaco-menu');
		return m && m.getBoundingClientRect().width > 0;
	})`}
	return w.waitAll(ctx, append([]cond{closed}, then...)...)
}

// jsTextPoint finds where the active editor draws the given line and
// visual column: the point just inside the left edge of that character
// (just past the line's end for the column after it), for a click that
// puts the cursor exactly there. It returns {none: why} when the
// editor does not show the spot (with offscreen when the line is not
// drawn, or is covered, as by the tabs or scrollbar at the view's edges),
// or shows other text than the file's (shown: the line as drawn, tabs
// widened; the click must hit that text).
const jsTextPoint = `(line, vcol, shown) => {
	const ed = document.querySelector('.editor-group-container.active .monaco-editor');
	if (!ed) return {none: 'no active editor'};
	const num = [...ed.querySelectorAll('.margin-view-overlays .line-numbers')].find(e => e.textContent.trim() === String(line));
	if (!num) return {none: 'line ' + line + ' is not drawn', offscreen: true};
	const nr = num.getBoundingClientRect();
	const vl = [...ed.querySelectorAll('.view-lines .view-line')].find(v => Math.abs(v.getBoundingClientRect().top - nr.top) < 1.5);
	if (!vl) return {none: 'no text drawn beside line number ' + line};
	const nodes = [];
	let text = '';
	const tw = document.createTreeWalker(vl, NodeFilter.SHOW_TEXT);
	for (let n = tw.nextNode(); n; n = tw.nextNode()) { if (n.data) { nodes.push([n, text.length]); text += n.data; } }
	if (text.replace(/\u00a0/g, ' ') !== shown) return {none: 'line ' + line + ' is drawn as ' + JSON.stringify(text.slice(0, 60))};
	const vr = vl.getBoundingClientRect();
	const i = vcol - 1, range = document.createRange();
	let x;
	if (i < text.length) {
		const [n, off] = nodes.findLast(([, o]) => o <= i);
		range.setStart(n, i - off); range.setEnd(n, i - off + 1);
		const r = range.getBoundingClientRect();
		x = r.left + Math.min(2, r.width / 4);
	} else if (text.length > 0) {
		const [n] = nodes[nodes.length - 1];
		range.setStart(n, n.data.length - 1); range.setEnd(n, n.data.length);
		x = range.getBoundingClientRect().right + 3;
	} else {
		x = vr.left + 2;
	}
	const y = vr.top + vr.height / 2;
	const hit = document.elementFromPoint(x, y);
	const lines = ed.querySelector('.lines-content');
	if (!hit || !lines || !lines.contains(hit) || hit.closest('.contentWidgets, .overlayWidgets, .sticky-widget') || (!vl.contains(hit) && hit.closest('.view-lines')))
		return {none: 'line ' + line + ' col ' + vcol + ' is hidden or covered', offscreen: true};
	return {x, y};
}`

// shiftClickText Shift+clicks where the active editor draws line and
// visual column vcol (line's text as drawn is shown), extending the
// selection to there; when the line is out of view or only partly in it,
// scrollToLine brings it in first. The mouse stays there, as a hand's
// would: the editor shows no hovers (DefaultEditorSettings). When the
// editor does not show that spot it selects nothing and returns why.
func (w *window) shiftClickText(ctx context.Context, line, vcol int, shown string) (string, error) {
	v, err := w.eval(ctx, jsTextPoint, line, vcol, shown)
	if err == nil && v.Has("offscreen") {
		var why string
		if why, err = w.scrollToLine(ctx, line); err == nil && why != "" {
			return why, nil
		}
		if err == nil {
			v, err = w.eval(ctx, jsTextPoint, line, vcol, shown)
		}
	}
	if err != nil {
		return "", fmt.Errorf("find line %d col %d in the editor: %w", line, vcol, err)
	}
	if v.Has("none") {
		return v.Get("none").Str(), nil
	}
	p := point{X: v.Get("x").Num(), Y: v.Get("y").Num()}
	events := []browser.MouseEvent{
		{Type: "mouseMoved", X: p.X, Y: p.Y, Button: "none", Modifiers: modShift},
		{Type: "mousePressed", X: p.X, Y: p.Y, Button: browser.MouseLeft, Buttons: 1, ClickCount: 1, Modifiers: modShift},
		{Type: "mouseReleased", X: p.X, Y: p.Y, Button: browser.MouseLeft, ClickCount: 1, Modifiers: modShift},
	}
	var kb keyboard
	kb.down(keyShift)
	down := kb.events
	kb.events = nil
	kb.up(keyShift)
	up := kb.events
	if err := w.sendKeys(ctx, down); err != nil {
		return "", fmt.Errorf("hold Shift: %w", err)
	}
	for _, e := range events {
		if err := w.page.Mouse(ctx, e); err != nil {
			return "", fmt.Errorf("shift+click line %d col %d: %w", line, vcol, err)
		}
	}
	if err := w.sendKeys(ctx, up); err != nil {
		return "", fmt.Errorf("release Shift: %w", err)
	}
	return "", nil
}

// statusChange waits up to d for the editor's selection status item to
// read other than from, and returns what it reads then.
func (w *window) statusChange(ctx context.Context, from string, d time.Duration) (string, error) {
	wctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	v, err := w.value(wctx, fmt.Sprintf("the status bar changes from %q", from), `(from) => { const s = (`+jsStatusSelection+`)(); return s !== from ? s : null; }`, from)
	if err == nil || ctx.Err() != nil || !errIsTimeout(err) {
		return v, err
	}
	return w.status(ctx), nil
}
