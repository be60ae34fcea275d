package workbench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"dialogfarm/adapter"
	"dialogfarm/dialog"
	"dialogfarm/driver/browser"
)

// The probe's page scripts on static chat views (driver/workbench/testdata/probe) in
// the real Chromium: each view is loaded in an iframe, as a webview's
// document is, and its custom elements are the real webview UI toolkit's
// (installed by `make setup`) or written like them.

// probePages serves the fixtures, the toolkit, a top page holding a
// fixture in iframe#chat (/top?f=NAME), and /capture, which answers a
// fixture's requests and hands each one it accepts to got.
type probePages struct {
	*httptest.Server
	got chan dialog.Exchange
}

// probeAnswer is what /capture answers: markdown a view renders.
const probeAnswer = "Probe answer. **Bold** and `a < b`:\n\n```text\n<x> & y\n```\n"

func newProbePages(t *testing.T) *probePages {
	t.Helper()
	toolkit, err := filepath.Abs(filepath.Join("..", "..", "tools", "webview-ui-toolkit", "toolkit.min.js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(toolkit); err != nil {
		t.Fatalf("the webview UI toolkit is not installed (%v): run `make setup`", err)
	}
	pp := &probePages{got: make(chan dialog.Exchange, 16)}
	mux := http.NewServeMux()
	mux.Handle("/fixture/", http.StripPrefix("/fixture/", http.FileServer(http.Dir(filepath.Join("testdata", "probe")))))
	mux.HandleFunc("/toolkit.min.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		http.ServeFile(w, r, toolkit)
	})
	mux.HandleFunc("/top", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><body style="margin:0"><iframe id="chat" src="/fixture/%s" style="border:0; width:700px; height:560px"></iframe></body>`, r.URL.Query().Get("f"))
	})
	mux.HandleFunc("POST /capture", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Provider string `json:"provider"`
			Stream   bool   `json:"stream"`
		}
		_ = json.Unmarshal(body, &req)
		if req.Provider != "live" {
			http.Error(w, "unreachable provider", http.StatusServiceUnavailable)
			return
		}
		answer := probeAnswer
		if !req.Stream {
			answer = "Probe title"
		}
		pp.got <- dialog.Exchange{Request: body, Answer: answer}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"answer": answer})
	})
	pp.Server = httptest.NewServer(mux)
	t.Cleanup(pp.Close)
	return pp
}

// next is a chatProber's next: the next request /capture accepted.
func (pp *probePages) next(ctx context.Context) (dialog.Exchange, error) {
	select {
	case ex := <-pp.got:
		return ex, nil
	case <-ctx.Done():
		return dialog.Exchange{}, ctx.Err()
	}
}

// fixtureUI is the chat document of the top page: the fixture's frame.
var fixtureUI = ui{Frames: []string{"iframe#chat"}, Ready: "body"}

// open shows the fixture in w and waits until its document has loaded and
// its custom elements (those it uses) are defined.
func (pp *probePages) open(ctx context.Context, t *testing.T, w *window, name string, custom ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if custom == nil {
		custom = []string{}
	}
	if err := w.navigate(ctx, pp.URL+"/top?f="+name); err != nil {
		t.Fatal(err)
	}
	page, _, _ := strings.Cut(name, "?")
	if err := w.waitFor(ctx, "the fixture "+name+" is ready", js("ui, page, tags", `const c = chatDoc(ui);
		return !!c && c.d.location.pathname.endsWith('/' + page) && tags.every((t) => !!c.d.defaultView.customElements.get(t));`, jsChatDoc), fixtureUI, page, custom); err != nil {
		t.Fatal(err)
	}
}

// eval runs body in the fixture's document (as d) and returns its value.
func fixtureEval(ctx context.Context, t *testing.T, w *window, body string, args ...any) string {
	t.Helper()
	res, err := w.eval(ctx, js("ui, arg", `const c = chatDoc(ui); const d = c.d; `+body, jsChatDoc), append([]any{fixtureUI}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	return res.String()
}

// TestProbeOnPages runs the probe's ranking, element listing, setup steps
// and tries on the fixtures in one Chromium.
func TestProbeOnPages(t *testing.T) {
	pp := newProbePages(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, p := testWindow(ctx, t, browser.BackendRod)
	w := &window{page: p}
	t.Run("ranking", func(t *testing.T) { probeRanking(ctx, t, pp, w) })
	t.Run("elements", func(t *testing.T) { probeElements(ctx, t, pp, w) })
	t.Run("setup steps on custom elements", func(t *testing.T) { probeSetupSteps(ctx, t, pp, w) })
	t.Run("tries until a request", func(t *testing.T) { probeTries(ctx, t, pp, w, false) })
	t.Run("picks a provider to send", func(t *testing.T) { probeTries(ctx, t, pp, w, true) })
}

// probeRanking: each fixture's composer ranks first, before search boxes,
// filters, other panels' inputs, file inputs and hidden or disabled fields.
func probeRanking(ctx context.Context, t *testing.T, pp *probePages, w *window) {
	for _, c := range []struct {
		page   string
		custom []string
		kind   string
		// is holds in the fixture for the first input's element (el).
		is string
	}{
		{"search-before-prosemirror.html", nil, "prosemirror", `el.classList.contains('ProseMirror')`},
		{"textarea-and-inputs.html", nil, "textarea", `el.placeholder === 'Type your message'`},
		{"codemirror-and-filter.html", nil, "codemirror", `el.classList.contains('cm-content')`},
		{"toolkit-view.html", []string{"vscode-panels", "vscode-button"}, "prosemirror", `el.matches('div.tiptap.ProseMirror')`},
		{"chat.html", []string{"x-btn"}, "contenteditable", `el.classList.contains('editor')`},
	} {
		t.Run(c.page, func(t *testing.T) {
			pp.open(ctx, t, w, c.page, c.custom...)
			p := &chatProber{w: w, u: fixtureUI}
			inputs, err := p.rank(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, in := range inputs {
				t.Logf("%-45s %-15s score %3d visible %v enabled %v: %s", in.Selector, in.Kind, in.Score, in.Visible, in.Enabled, in.Why)
			}
			if len(inputs) < 2 {
				t.Fatalf("%d inputs ranked, want the composer and the others", len(inputs))
			}
			first := inputs[0]
			if first.Kind != c.kind || !first.Visible || !first.Enabled {
				t.Errorf("first: %+v, want a visible, enabled %s", first, c.kind)
			}
			if got := fixtureEval(ctx, t, w, `const el = qs(d, arg); return !!el && (`+c.is+`);`, first.Selector); got != "true" {
				t.Errorf("the first input's selector %q does not find the composer", first.Selector)
			}
			for _, in := range inputs[1:] {
				if in.Visible && in.Enabled && in.Score >= first.Score {
					t.Errorf("%s scores %d, the composer %d", in.Selector, in.Score, first.Score)
				}
			}
		})
	}
	t.Run("send buttons", func(t *testing.T) {
		pp.open(ctx, t, w, "toolkit-view.html", "vscode-button")
		p := &chatProber{w: w, u: fixtureUI}
		bs, err := p.sendButtons(ctx, "div.tiptap.ProseMirror")
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bs {
			t.Logf("%-40s %4d %q: %s", b.Selector, b.Score, b.Label, b.Why)
		}
		if len(bs) == 0 || bs[0].Selector != `vscode-button[aria-label="Send"]` || bs[0].Score <= 0 {
			t.Fatalf("best send button %+v, want vscode-button[aria-label=\"Send\"]", bs)
		}
		for _, b := range bs[1:] {
			if b.Score > 0 {
				t.Errorf("%s (%q) scores %d: it is no send button", b.Selector, b.Label, b.Score)
			}
		}
	})
}

// probeElements: custom elements are listed with their shadow roots and
// a drop-down's options; the elements inside a custom element's shadow
// root stand behind their host, except options.
func probeElements(ctx context.Context, t *testing.T, pp *probePages, w *window) {
	pp.open(ctx, t, w, "toolkit-view.html", "vscode-dropdown", "vscode-option", "vscode-button")
	els, err := w.elements(ctx, fixtureUI)
	if err != nil {
		t.Fatal(err)
	}
	byKind := map[string][]ProbeElement{}
	for _, e := range els {
		t.Logf("%-18s %-45s %q shadow %s hidden %v options %q value %q", e.Kind, e.Selector, e.Label, e.Shadow, e.Hidden, e.Options, e.Value)
		byKind[e.Kind] = append(byKind[e.Kind], e)
	}
	if len(byKind["vscode-button"]) != 3 || len(byKind["vscode-option"]) != 4 || len(byKind["vscode-panel-view"]) != 2 {
		t.Errorf("%d vscode-button, %d vscode-option, %d vscode-panel-view listed, want 3, 4, 2", len(byKind["vscode-button"]), len(byKind["vscode-option"]), len(byKind["vscode-panel-view"]))
	}
	var dd *ProbeElement
	for i, e := range byKind["vscode-dropdown"] {
		if e.Selector == "#provider-picker" {
			dd = &byKind["vscode-dropdown"][i]
		}
	}
	if dd == nil || dd.Shadow != "open" || strings.Join(dd.Options, ",") != "local,remote" || dd.Value != "local" {
		t.Errorf("provider picker listed as %+v, want #provider-picker, shadow open, options local,remote, value local", dd)
	}
	for _, e := range els {
		if e.Kind == "button" && strings.Contains(e.Selector, ">>>") {
			t.Errorf("a toolkit button's own <button> is listed apart from its host: %+v", e)
		}
	}
	if len(byKind["contenteditable"]) != 1 || byKind["contenteditable"][0].Selector != "div.tiptap" && byKind["contenteditable"][0].Selector != "div.tiptap.ProseMirror" {
		t.Errorf("composer listed as %+v", byKind["contenteditable"])
	}
	// Inside a shadow root: the chat fixture's picker options.
	pp.open(ctx, t, w, "chat.html", "x-picker")
	els, err = w.elements(ctx, fixtureUI)
	if err != nil {
		t.Fatal(err)
	}
	opts := 0
	for _, e := range els {
		if e.Kind == "div" && strings.HasPrefix(e.Selector, "#provider >>> ") {
			opts++
		}
		if e.Selector == "#provider" && strings.Join(e.Options, ",") != "live,dead" {
			t.Errorf("x-picker options %q, want live,dead", e.Options)
		}
	}
	if opts != 3 { // the listbox and its two options
		t.Errorf("%d elements listed inside #provider's shadow root, want 3: %+v", opts, els)
	}
}

// probeSetupSteps: select and click steps on the real toolkit's
// vscode-dropdown and vscode-button, and on a picker whose options live in
// its shadow root, cause the events a person's pick and click do.
func probeSetupSteps(ctx context.Context, t *testing.T, pp *probePages, w *window) {
	pp.open(ctx, t, w, "toolkit-view.html", "vscode-dropdown", "vscode-option", "vscode-button")
	run := func(a adapter.Action) error {
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		what, body, arg := setupScript(a)
		return w.waitFor(sctx, what, js("ui, arg", `const c = chatDoc(ui); if (!c) return false; const d = c.d; `+body, jsChatDoc), fixtureUI, arg)
	}
	steps := []adapter.Action{
		{Select: &adapter.Value{Selector: "#provider-picker", Value: "remote"}},
		{Select: &adapter.Value{Selector: "vscode-dropdown[aria-label=\"Model\"]", Value: "Model two"}},
		{Click: `vscode-button[aria-label="Send"]`},
	}
	for _, s := range steps {
		if err := run(s); err != nil {
			t.Fatal(err)
		}
	}
	if got := fixtureEval(ctx, t, w, `return [d.getElementById('provider-picker').value, d.getElementById('model-picker').value, d.defaultView.changes.join(' '), d.defaultView.clicks.join(' ')].join(' | ');`); got != "remote | m2 | provider-picker=remote model-picker=m2 | Send" {
		t.Errorf("after the steps: %s, want remote | m2 | provider-picker=remote model-picker=m2 | Send", got)
	}
	// A value no option has: the step waits, then fails.
	if err := run(adapter.Action{Select: &adapter.Value{Selector: "#provider-picker", Value: "nowhere"}}); err == nil {
		t.Error("a select step for a missing option passed")
	}

	pp.open(ctx, t, w, "chat.html", "x-picker")
	if err := run(adapter.Action{Select: &adapter.Value{Selector: "#provider", Value: "dead"}}); err != nil {
		t.Fatal(err)
	}
	if err := run(adapter.Action{Click: `#provider >>> button.trigger`}); err != nil {
		t.Fatal(err)
	}
	if got := fixtureEval(ctx, t, w, `const p = d.getElementById('provider'); return p.value + ' ' + d.defaultView.changes.join(',') + ' ' + p.shadowRoot.querySelector('.trigger').getAttribute('aria-expanded');`); got != "dead dead true" {
		t.Errorf("x-picker after the steps: %s, want value dead, one change, the list opened by the deep click", got)
	}
}

// probeTries: the probe types into the composer (not the search box),
// finds that neither Enter nor Ctrl+Enter sends and the Send custom
// element does, each try bounded; with the dead provider first, it picks
// the live one. Then it reads what the view shows of the answer and the
// title request that follows.
func probeTries(ctx context.Context, t *testing.T, pp *probePages, w *window, dead bool) {
	page := "chat.html"
	if dead {
		page += "?provider=dead"
	}
	pp.open(ctx, t, w, page, "x-btn", "x-picker")
	rep := &ProbeReport{}
	p := &chatProber{w: w, u: fixtureUI, msg: "probe says hi", limit: time.Second, next: pp.next, rep: rep}
	start := time.Now()
	err := probeChat(ctx, p)
	for _, a := range rep.Attempts {
		t.Logf("%-12s %-45s %-50s %.1fs", a.Input, a.Method, a.Outcome, a.Seconds)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d attempts in %.1fs; observed %+v", len(rep.Attempts), time.Since(start).Seconds(), rep.Observed)
	if rep.Input == nil || rep.Send.Button == "" {
		t.Fatalf("sent from %+v by %+v, want the editor and a button", rep.Input, rep.Send)
	}
	if got := fixtureEval(ctx, t, w, `return qs(d, arg[0]).matches('div.editor') && qs(d, arg[1]).matches('x-btn.send');`, []string{rep.Input.Selector, rep.Send.Button}); got != "true" {
		t.Errorf("sent from %s by the button %s, want div.editor and x-btn.send", rep.Input.Selector, rep.Send.Button)
	}
	for _, a := range rep.Attempts {
		if a.Input == `input[placeholder="Search messages"]` && a.Outcome == outcomeRequest {
			t.Errorf("the search box sent: %+v", a)
		}
		if a.Seconds > 3.5 {
			t.Errorf("an attempt took %.1fs, over its two 1s limits and the wait of a view that took the message", a.Seconds)
		}
	}
	wantSetup := 0
	if dead {
		wantSetup = 1
	}
	if len(rep.Setup) != wantSetup || (dead && (rep.Setup[0].Select == nil || *rep.Setup[0].Select != adapter.Value{Selector: "#provider", Value: "live"})) {
		t.Errorf("setup %+v, want %d select of #provider=live", rep.Setup, wantSetup)
	}
	if len(rep.Requests) != 2 || rep.Chat != 0 || !strings.Contains(string(rep.Requests[1].Request), "short title") {
		t.Errorf("requests %d (chat %d), want the chat request then the title", len(rep.Requests), rep.Chat)
	}
	o := rep.Observed
	if o == nil {
		t.Fatalf("nothing observed; notes %q", rep.Notes)
	}
	want := ProbeObserved{User: ".msg-user", Answer: ".msg-bot", Text: ".body", Compare: "markdown", Done: adapter.Done{Disappears: "x-btn.stop"}}
	if o.User != want.User || o.Answer != want.Answer || o.Text != want.Text || o.Compare != want.Compare || o.Done.Disappears != want.Done.Disappears {
		t.Errorf("observed %+v\nwant     %+v", *o, want)
	}
}
