package workbench

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap/zaptest"

	"dialogfarm/driver/browser"
)

// browserTestPage logs the key, input and mouse events a person's actions
// cause, so that both backends can be held to the same sequence.
const browserTestPage = `<!doctype html><title>first</title>
<textarea id="t" style="position:absolute; left:100px; top:80px; width:300px; height:100px"></textarea>
<script>
window.events = [];
const t = document.getElementById('t');
for (const type of ['keydown', 'keyup']) {
	t.addEventListener(type, (e) => events.push([type, e.key, e.code, e.ctrlKey, e.shiftKey, e.altKey].join(' ')));
}
t.addEventListener('mousedown', (e) => events.push('mousedown ' + e.button + ' ' + e.clientX + ',' + e.clientY + (e.shiftKey ? ' shift' : '')));
t.addEventListener('contextmenu', (e) => { e.preventDefault(); events.push('contextmenu'); });
</script>`

// TestBackends launches Chromium with each backend (start-up ended), drives
// a small page through the window methods the steps use, and checks what
// the page saw: the same key
// events (modifiers held, text typed), clicks where they were aimed,
// inserted text, accepted dialogs, a screenshot, a patient poll that sees
// a change in a frame, a poll that survives a navigation and a script
// error reported as an error.
func TestBackends(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if r.URL.Path == "/second" {
			fmt.Fprint(w, `<!doctype html><title>second</title><p>second page</p>`)
			return
		}
		fmt.Fprint(w, browserTestPage)
	}))
	defer srv.Close()
	seen := map[browser.Backend][]string{}
	for _, b := range []browser.Backend{browser.BackendRod, browser.BackendChromedp} {
		t.Run(string(b), func(t *testing.T) { seen[b] = driveTestPage(t, b, srv.URL) })
	}
	if d := cmp.Diff(seen[browser.BackendRod], seen[browser.BackendChromedp]); d != "" && !t.Failed() {
		t.Errorf("the page saw different events (-rod +chromedp):\n%s", d)
	}
}

// testWindow launches Chromium with the backend and opens one 800x600
// window; both close when the test ends.
func testWindow(ctx context.Context, t *testing.T, backend browser.Backend) (*browser.Chromium, browser.Page) {
	t.Helper()
	cfg := browser.DefaultConfig()
	cfg.Backend, cfg.Dir, cfg.Width, cfg.Height = backend, t.TempDir(), 800, 600
	br, err := browser.Launch(ctx, cfg, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(br.Close)
	p, err := br.NewWindow(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return br, p
}

func driveTestPage(t *testing.T, backend browser.Backend, url string) []string {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, p := testWindow(ctx, t, backend)
	w := &window{page: p}
	if err := w.navigate(ctx, url); err != nil {
		t.Fatal(err)
	}
	at, err := w.point(ctx, "the textarea is laid out", `() => {
		const r = document.getElementById('t')?.getBoundingClientRect();
		return r && r.width > 0 ? {x: r.left + 10, y: r.top + 10} : null;
	}`)
	if err != nil {
		t.Fatal(err)
	}
	if at != (point{X: 110, Y: 90}) {
		t.Errorf("textarea at %+v, want 110,90 (the window is not 800x600)", at)
	}
	step := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	step("click", w.click(ctx, at, browser.MouseLeft))
	step("focus", w.waitFor(ctx, "the textarea has focus", `() => document.activeElement?.id === 't'`))
	step("insert", w.insert(ctx, "héllo «ok» "))
	step("shift+a", w.keys(ctx, keyShift, "KeyA"))
	step("enter", w.keys(ctx, keyEnter))
	step("ctrl+shift+left ×2", w.repeat(ctx, 2, keyArrowLeft, keyControl, keyShift))
	step("right click", w.click(ctx, point{X: 120, Y: 100}, browser.MouseRight))
	val, err := w.value(ctx, "the textarea has text", `() => document.getElementById('t').value`)
	step("read text", err)
	if want := "héllo «ok» a\n"; val != want {
		t.Errorf("textarea holds %q, want %q", val, want)
	}

	// A Shift+click: the mouse event carries the modifier.
	step("shift+click", w.page.Mouse(ctx, browser.MouseEvent{Type: "mousePressed", X: 130, Y: 110, Button: browser.MouseLeft, Buttons: 1, ClickCount: 1, Modifiers: modShift}))
	step("shift+click release", w.page.Mouse(ctx, browser.MouseEvent{Type: "mouseReleased", X: 130, Y: 110, Button: browser.MouseLeft, ClickCount: 1, Modifiers: modShift}))

	// A dialog would block every later call; it is accepted.
	_, err = w.eval(ctx, `() => { setTimeout(() => { window.confirmed = confirm('leave?'); }, 0); return true; }`)
	step("open a dialog", err)
	step("dialog", w.waitFor(ctx, "the dialog was accepted", `() => window.confirmed === true`))

	// The heap grows by what the page keeps: 20 MiB of strings show.
	before, err := w.page.HeapUsed(ctx)
	step("heap", err)
	_, err = w.eval(ctx, `() => { window.kept = Array.from({length: 20}, (_, i) => String(i).padEnd(1 << 20, 'x').split('').join('')); return true; }`)
	step("allocate", err)
	after, err := w.page.HeapUsed(ctx)
	step("heap after", err)
	if before <= 0 || after-before < 10<<20 {
		t.Errorf("heap in use %.1f MiB, then %.1f MiB after keeping 20 MiB of strings", before/(1<<20), after/(1<<20))
	}

	png, err := w.screenshot(ctx)
	step("screenshot", err)
	if !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Errorf("screenshot is not a PNG (%d bytes)", len(png))
	}

	if _, err := w.eval(ctx, `() => { throw new Error('boom'); }`); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("a throwing script: %v", err)
	}
	res, err := w.eval(ctx, `(a, b) => ({sum: a.n + b, s: a.s})`, map[string]any{"n": 2, "s": "<\u2028>"}, 3)
	step("eval with arguments", err)
	if res.Get("sum").Int() != 5 || res.Get("s").Str() != "<\u2028>" {
		t.Errorf("eval with arguments: %s", res.JSON("", ""))
	}

	events, err := w.eval(ctx, `() => window.events`)
	step("read events", err)
	var log []string
	for _, e := range events.Arr() {
		log = append(log, e.Str())
	}
	for _, want := range []string{
		"mousedown 0 110,90",
		"keydown Shift ShiftLeft false true false", "keydown a KeyA false true false", "keyup Shift ShiftLeft false false false",
		"keydown Enter Enter false false false",
		"keydown ArrowLeft ArrowLeft true true false",
		"mousedown 2 120,100", "contextmenu", "mousedown 0 130,110 shift",
	} {
		if !slices.Contains(log, want) {
			t.Errorf("the page saw no %q in %q", want, log)
		}
	}

	// A patient poll (the wait for the model) sees a change inside a
	// same-origin frame when it happens, and checks the page only every
	// few seconds meanwhile, not 20 times a second.
	_, err = w.eval(ctx, `() => { const f = document.createElement('iframe'); f.srcdoc = '<p id="x">wait</p>'; document.body.append(f); return true; }`)
	step("add a frame", err)
	step("the frame loads", w.waitFor(ctx, "the frame shows its paragraph", `() => !!document.querySelector('iframe')?.contentDocument?.getElementById('x')`))
	_, err = w.eval(ctx, `() => { window.checks = 0; setTimeout(() => { document.querySelector('iframe').contentDocument.getElementById('x').dataset.state = 'done'; }, 1500); return true; }`)
	step("schedule a change in the frame", err)
	checks, err := w.pollPaced(ctx, patient, "the frame's paragraph is done", `() => {
		window.checks++;
		return document.querySelector('iframe').contentDocument.getElementById('x').dataset.state === 'done' ? window.checks : null;
	}`)
	step("patient poll", err)
	if n := checks.Int(); n < 2 || n > 8 {
		t.Errorf("the patient poll checked %d times over 1.5 s, want 2 (at the start and on the change) plus at most one a second", n)
	}

	// The page navigates while a poll waits in it: the poll goes on in the
	// new document.
	_, err = w.eval(ctx, `() => { setTimeout(() => { location.href = '/second'; }, 50); return true; }`)
	step("schedule a navigation", err)
	step("poll across a navigation", w.waitFor(ctx, "the second page shows", `() => document.title === 'second'`))
	return log
}
