package workbench

import (
	"context"
	"fmt"
	"math"
	"time"
)

// jsEditorView tells where the active editor's view is: its top as a
// fractional line number (from the line numbers it draws fully), its line
// height, the first and last lines it draws fully, and its height.
const jsEditorView = `() => {
	const ed = document.querySelector('.editor-group-container.active .monaco-editor');
	const guard = ed && ed.querySelector('.overflow-guard');
	if (!guard) return {none: 'no active editor'};
	const g = guard.getBoundingClientRect();
	const nums = [...ed.querySelectorAll('.margin-view-overlays .line-numbers')]
		.map((e) => ({n: Number(e.textContent.trim()), r: e.getBoundingClientRect()}))
		.filter((x) => x.n > 0 && x.r.height > 0 && x.r.top >= g.top - 0.5 && x.r.bottom <= g.bottom + 0.5)
		.sort((a, b) => a.n - b.n);
	if (!nums.length) return {none: 'the editor draws no line numbers'};
	const lh = nums[0].r.height;
	return {top: nums[0].n - (nums[0].r.top - g.top) / lh, lh, first: nums[0].n, last: nums[nums.length - 1].n,
		height: g.height};
}`

// editorView is what jsEditorView reports.
type editorView struct {
	None        string  `json:"none"`
	Top, LH     float64 // fractional top line; line height in CSS pixels
	First, Last int
	Height      float64
}

func (w *window) editorView(ctx context.Context) (editorView, error) {
	var v editorView
	raw, err := w.eval(ctx, jsEditorView)
	if err == nil {
		err = jsonUnmarshal(raw.JSON("", ""), &v)
	}
	return v, err
}

// scrollToLine scrolls the active editor with the keyboard until it draws
// line fully, as a developer scrolls to where a selection is to end, the
// cursor staying where it is: Alt+PageDown a page at a time and Ctrl+Down
// (Ctrl+Up) a line at a time (Alt+PageUp upwards), as scrollKeys says.
// Key presses, unlike mouse wheel events (which Chromium delivers one per
// frame, each a notch of some 2.6 lines), go out in a burst. The editor
// may draw a burst over several frames, so it then waits for the line
// itself (at most 2 s) and only then looks again. It returns why not when
// the line is not drawn after a few bursts (a wrapped or folded file) or
// the editor did not scroll; "" once it is drawn.
func (w *window) scrollToLine(ctx context.Context, line int) (string, error) {
	top := math.NaN()
	for range 3 {
		v, err := w.editorView(ctx)
		if err != nil {
			return "", fmt.Errorf("read the editor's view: %w", err)
		}
		switch {
		case v.None != "" || v.LH <= 0:
			return "the editor's view: " + v.None, nil
		case line >= v.First && line <= v.Last:
			return "", nil
		case v.Top == top:
			return fmt.Sprintf("the editor did not scroll from line %.2f", top), nil
		}
		top = v.Top
		pages, lines := scrollKeys(line, v)
		pageKey, lineKey := keyPageDown, keyArrowDown
		if pages < 0 {
			pages, pageKey = -pages, keyPageUp
		}
		if lines < 0 {
			lines, lineKey = -lines, keyArrowUp
		}
		if err := w.repeat(ctx, pages, pageKey, keyAlt); err != nil {
			return "", err
		}
		if err := w.repeat(ctx, lines, lineKey, keyControl); err != nil {
			return "", err
		}
		wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err = w.waitFor(wctx, fmt.Sprintf("the editor draws line %d", line), `(line) => {
			const v = (`+jsEditorView+`)();
			return v.first !== undefined && line >= v.first && line <= v.last;
		}`, line)
		cancel()
		switch {
		case err == nil:
			return "", nil
		case ctx.Err() != nil:
			return "", err
		}
	}
	return fmt.Sprintf("line %d is not drawn after 3 scrolls", line), nil
}

// scrollKeys says how many pages and lines (down positive) to scroll the
// view v by for it to draw line with a line to spare: whole pages (the
// editor's page is the view's height in lines less 2) when a number of
// them does, the fewest key presses; else pages one way and lines either
// way to put it in the middle of the half of the view nearest where it
// is, as a developer scrolling to a selection's end stops once it shows.
func scrollKeys(line int, v editorView) (pages, lines int) {
	page, half := max(int(v.Height/v.LH)-2, 1), max((v.Last-v.First)/2, 0)
	lo, hi := line-v.Last+1, line-v.First-1
	for k := lo/page - 1; k <= hi/page+1; k++ {
		if d := k * page; k != 0 && d >= lo && d <= hi && (pages == 0 || abs(k) < abs(pages)) {
			pages = k
		}
	}
	if pages != 0 {
		return pages, 0
	}
	d := lo + half/2 // below the view: to the lower half's middle
	if line < v.First {
		d = hi - half/2
	}
	k := int(math.Round(float64(d) / float64(page)))
	return k, d - k*page
}

func abs(n int) int { return max(n, -n) }
