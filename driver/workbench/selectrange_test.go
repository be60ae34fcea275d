package workbench

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"dialogfarm/dialog"
	"dialogfarm/driver/browser"
)

// TestSelectRangeClicksAgainWhenAClickChangesNothing: a Shift+click the
// editor swallows (the status bar still reads the start) is made once more,
// as a hand would, before the keyboard takes over; a page drawn like the
// editor's view selects on the n-th Shift+click.
func TestSelectRangeClicksAgainWhenAClickChangesNothing(t *testing.T) {
	src := source(t, "package p\n\nvar x = 1\nvar yy = 22\n")
	sel := dialog.Selection{Start: dialog.Position{Line: 1, Col: 1}, End: dialog.Position{Line: 4, Col: 5}}
	want := fmt.Sprintf("Ln 4, Col 5 (%d selected)", src.selectedCount(sel))
	var lines strings.Builder
	for i, l := range src.lines {
		top := 20 * i
		fmt.Fprintf(&lines, `<div class="line-numbers" style="top: %dpx; left: 0">%d</div>`, top, i+1)
		fmt.Fprintf(&lines, `<div class="view-line" style="top: %dpx; left: 60px"><span>%s</span></div>`, top, strings.ReplaceAll(html.EscapeString(string(l)), " ", "&nbsp;"))
	}
	page := func(swallow int) string {
		return fmt.Sprintf(`<!doctype html><style>body { margin: 0; font: 14px monospace } .overflow-guard { position: absolute; top: 10px; width: 600px; height: 300px }
.line-numbers, .view-line { position: absolute; height: 20px; white-space: pre }</style>
<div class="editor-group-container active"><div class="monaco-editor"><div class="overflow-guard">
<div class="margin-view-overlays lines-content view-lines">%s</div></div></div></div>
<div id="status.editor.selection">Ln 1, Col 1</div>
<script>
let clicks = 0;
document.querySelector('.view-lines').addEventListener('mousedown', (e) => {
	if (e.shiftKey && ++clicks > %d) document.getElementById('status.editor.selection').textContent = %q;
});
</script>`, lines.String(), swallow, want)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, p := testWindow(ctx, t, browser.BackendRod)
	for _, c := range []struct {
		name    string
		swallow int // Shift+clicks the page ignores
		again   int // "clicking again" logged
	}{
		{"the first click selects", 0, 0},
		{"one click swallowed", 1, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				fmt.Fprint(w, page(c.swallow))
			}))
			defer srv.Close()
			core, logs := observer.New(zap.DebugLevel)
			s := &Session{win: &window{page: p}, log: zap.New(core)}
			if err := s.win.navigate(ctx, srv.URL); err != nil {
				t.Fatal(err)
			}
			// The page ignores the keyboard: were it to take over, the
			// selection would not be made.
			if err := s.selectRange(ctx, src, sel); err != nil {
				t.Fatalf("selectRange: %v", err)
			}
			if n := logs.FilterMessage("shift+click changed nothing; clicking again").Len(); n != c.again {
				t.Errorf("clicked again %d times, want %d", n, c.again)
			}
		})
	}
}
