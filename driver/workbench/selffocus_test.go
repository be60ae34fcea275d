package workbench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"dialogfarm/adapter"
	"dialogfarm/driver/browser"
)

// selfFocusPage is a chat view in a frame whose input takes the keyboard
// focus 50 ms after the page loads when focus is "self", and never
// otherwise.
const selfFocusPage = `<!doctype html><title>chat</title>
<iframe id="f" srcdoc="<textarea id='in'></textarea>"></iframe>
<script>
const f = document.getElementById('f');
f.addEventListener('load', () => {
	if (%q !== 'self') return;
	setTimeout(() => { f.contentWindow.focus(); f.contentDocument.getElementById('in').focus(); }, 50);
});
</script>`

// countingPage counts the page reads a window makes.
type countingPage struct {
	browser.Page
	evals atomic.Int32
}

func (p *countingPage) Eval(ctx context.Context, fn string, args ...any) (json.RawMessage, error) {
	p.evals.Add(1)
	return p.Page.Eval(ctx, fn, args...)
}

// A first query waits for a revealed view's input to take the focus on its
// own; a plugin whose view did not is remembered, and its input is then
// clicked without waiting, while another plugin's view is still waited for.
func TestSelfFocusIsLearnedPerPlugin(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, selfFocusPage, r.URL.Query().Get("focus"))
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, p := testWindow(ctx, t, browser.BackendRod)
	cp := &countingPage{Page: p}
	s := &Session{ID: "s1", win: &window{page: cp}, log: zaptest.NewLogger(t)}
	u := ui{Frames: []string{"iframe"}, Ready: "#in", Input: "#in"}
	still, self := &adapter.Adapter{Name: "still"}, &adapter.Adapter{Name: "self"}

	load := func(focus string) {
		t.Helper()
		if err := s.win.navigate(ctx, srv.URL+"/?focus="+focus); err != nil {
			t.Fatal(err)
		}
		if err := s.win.waitFor(ctx, "the chat view is loaded", js("ui", `return !!chatDoc(ui);`, jsChatDoc), u); err != nil {
			t.Fatal(err)
		}
	}
	load("never")
	if s.awaitSelfFocus(ctx, still, u) {
		t.Fatal("a view that never focuses its input was said to")
	}
	before := cp.evals.Load()
	if s.awaitSelfFocus(ctx, still, u) {
		t.Fatal("a view that never focuses its input was said to, the second time")
	}
	if n := cp.evals.Load() - before; n != 0 {
		t.Errorf("the second query for a plugin that did not focus its input read the page %d times, want none", n)
	}

	load("self")
	if !s.awaitSelfFocus(ctx, self, u) {
		t.Fatal("a view that focuses its input 50 ms after loading was not waited for")
	}
	if got := s.selfFocus; !got["self"] || got["still"] {
		t.Errorf("learned %v, want self: true, still: false", got)
	}
}
