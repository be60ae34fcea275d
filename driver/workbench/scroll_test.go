package workbench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"dialogfarm/driver/browser"
)

func TestScrollKeys(t *testing.T) {
	// The e2e test's view: 35 lines of 19 px, lines 127-161 drawn, a page
	// of 33 lines.
	view := editorView{Top: 126.95, LH: 19, First: 127, Last: 161, Height: 666}
	for _, c := range []struct {
		name         string
		line         int
		v            editorView
		pages, lines int
	}{
		{"far below: whole pages put it in view", 209, view, 2, 0},
		{"just below: one page", 162, view, 1, 0},
		{"far above", 40, view, -3, 0},
		{"just above", 126, view, -1, 0},
		// A view of 3 lines has a page of 1 line.
		{"tiny view", 50, editorView{Top: 10, LH: 20, First: 10, Last: 12, Height: 60}, 39, 0},
		// 34 lines of 20 px, a page of 32, and 33 lines drawn: scrolling
		// 33 to 63 lines draws line 75 with a line to spare, which no
		// number of pages does; a page and 9 lines put it in the middle
		// of the view's lower half.
		{"no number of pages", 75, editorView{Top: 11, LH: 20, First: 11, Last: 43, Height: 680}, 1, 9},
	} {
		t.Run(c.name, func(t *testing.T) {
			pages, lines := scrollKeys(c.line, c.v)
			if pages != c.pages || lines != c.lines {
				t.Errorf("scrollKeys(%d, %+v) = %d pages, %d lines, want %d, %d", c.line, c.v, pages, lines, c.pages, c.lines)
			}
			// Whatever the keys, the line ends up drawn with a line to
			// spare, unless the view is too small for that.
			page := max(int(c.v.Height/c.v.LH)-2, 1)
			s := pages*page + lines
			if first, last := c.v.First+s, c.v.Last+s; c.v.Last-c.v.First >= 2 && (c.line <= first || c.line >= last) {
				t.Errorf("scrolling %d lines draws %d-%d, not line %d inside them", s, first, last, c.line)
			}
		})
	}
}

// TestContextMenuPointInScrolledView: in an editor scrolled to a
// selection's end, the right click for the context menu goes to the widest
// selected line the editor shows whole, not to a wider one scrolled half
// under the tabs (whose own menu then opens) or under the scrollbar.
func TestContextMenuPointInScrolledView(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		// The editor's view spans y 100-400, its scrollbar 388-400.
		fmt.Fprint(w, `<!doctype html><style>body { margin: 0 } .monaco-editor > div { position: absolute; left: 0 }</style>
<div class="editor-group-container active"><div class="monaco-editor">
<div class="overflow-guard" style="top: 100px; width: 600px; height: 300px"></div>
<div class="scrollbar horizontal" style="top: 388px; width: 600px; height: 12px"></div>
<div class="selected-text" style="top: 90px; width: 500px; height: 19px"></div>
<div class="selected-text" style="top: 200px; width: 300px; height: 19px"></div>
<div class="selected-text" style="top: 219px; width: 200px; height: 19px"></div>
<div class="selected-text" style="top: 380px; width: 550px; height: 19px"></div>
</div></div><div id="status.editor.selection">Ln 12, Col 1 (40 selected)</div>`)
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, p := testWindow(ctx, t, browser.BackendRod)
	w := &window{page: p}
	if err := w.navigate(ctx, srv.URL); err != nil {
		t.Fatal(err)
	}
	v, err := w.eval(ctx, jsContextMenuPoint)
	if err != nil {
		t.Fatal(err)
	}
	if x, y := v.Get("x").Num(), v.Get("y").Num(); x != 150 || y != 209.5 {
		t.Errorf("right click at %v,%v, want 150,209.5 (the 300 px line the view shows whole)", x, y)
	}
	if s := v.Get("status").Str(); s != "Ln 12, Col 1 (40 selected)" {
		t.Errorf("status %q", s)
	}
}
