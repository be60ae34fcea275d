package driver

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap/zaptest"
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
	seen := map[Backend][]string{}
	for _, b := range []Backend{BackendRod, BackendChromedp} {
		t.Run(string(b), func(t *testing.T) { seen[b] = driveTestPage(t, b, srv.URL) })
	}
	if d := cmp.Diff(seen[BackendRod], seen[BackendChromedp]); d != "" && !t.Failed() {
		t.Errorf("the page saw different events (-rod +chromedp):\n%s", d)
	}
}

// TestStartupEndsWhileWindowsAreBusy launches Chromium with each backend
// and keeps the window's renderer busy at once: Chromium's start-up still
// ends (endStartup's page idles in a renderer of its own), before the
// window is free again. The windows share one renderer process here, as
// they do on a 2-core machine.
func TestStartupEndsWhileWindowsAreBusy(t *testing.T) {
	for _, backend := range []Backend{BackendRod, BackendChromedp} {
		t.Run(string(backend), func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cfg := DefaultBrowserConfig()
			cfg.Backend, cfg.Dir, cfg.RendererProcesses = backend, t.TempDir(), 1
			br, err := launchBrowser(ctx, cfg, zaptest.NewLogger(t))
			if err != nil {
				t.Fatal(err)
			}
			defer br.Close()
			p, err := br.NewWindow(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if _, err := p.Eval(ctx, `() => { setTimeout(() => {
				const end = Date.now() + 8000;
				while (Date.now() < end);
				window.freeAt = Date.now();
			}, 0); }`); err != nil {
				t.Fatal(err)
			}
			if err := br.startup.wait(ctx); err != nil {
				t.Fatal(err)
			}
			ended := time.Now()
			if done, err := br.StartupDone(ctx); err != nil || !done {
				t.Fatalf("Chromium's start-up ended: %v (%v), want true", done, err)
			}
			raw, err := p.Eval(ctx, `() => window.freeAt`)
			if err != nil {
				t.Fatal(err)
			}
			free, err := strconv.ParseInt(string(raw), 10, 64)
			if err != nil {
				t.Fatalf("the window's busy spell: %s: %v", raw, err)
			}
			if freeAt := time.UnixMilli(free); !ended.Before(freeAt) {
				t.Errorf("Chromium's start-up ended at %s, after the busy window was free again (%s)", ended.Format("15:04:05.000"), freeAt.Format("15:04:05.000"))
			}
		})
	}
}

// testWindow launches Chromium with the backend and opens one 800x600
// window; both close when the test ends.
func testWindow(ctx context.Context, t *testing.T, backend Backend) (*chromium, page) {
	t.Helper()
	cfg := DefaultBrowserConfig()
	cfg.Backend, cfg.Dir, cfg.Width, cfg.Height = backend, t.TempDir(), 800, 600
	br, err := launchBrowser(ctx, cfg, zaptest.NewLogger(t))
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

func driveTestPage(t *testing.T, backend Backend, url string) []string {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	br, p := testWindow(ctx, t, backend)
	if !strings.Contains(br.Version(), "Chrome/") || br.PID() <= 0 {
		t.Errorf("version %q, pid %d", br.Version(), br.PID())
	}
	// Launching sets about ending Chromium's start-up, without which
	// service worker jobs (every webview waits for one) are held back.
	if err := br.startup.wait(ctx); err != nil {
		t.Fatal(err)
	}
	if done, err := br.StartupDone(ctx); err != nil || !done {
		t.Errorf("Chromium's start-up ended: %v (%v), want true", done, err)
	}
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
	step("click", w.click(ctx, at, mouseLeft))
	step("focus", w.waitFor(ctx, "the textarea has focus", `() => document.activeElement?.id === 't'`))
	step("insert", w.insert(ctx, "héllo «ok» "))
	step("shift+a", w.keys(ctx, keyShift, "KeyA"))
	step("enter", w.keys(ctx, keyEnter))
	step("ctrl+shift+left ×2", w.repeat(ctx, 2, keyArrowLeft, keyControl, keyShift))
	step("right click", w.click(ctx, point{X: 120, Y: 100}, mouseRight))
	val, err := w.value(ctx, "the textarea has text", `() => document.getElementById('t').value`)
	step("read text", err)
	if want := "héllo «ok» a\n"; val != want {
		t.Errorf("textarea holds %q, want %q", val, want)
	}

	// A Shift+click: the mouse event carries the modifier.
	step("shift+click", w.page.Mouse(ctx, mouseEvent{Type: "mousePressed", X: 130, Y: 110, Button: mouseLeft, Buttons: 1, ClickCount: 1, Modifiers: modShift}))
	step("shift+click release", w.page.Mouse(ctx, mouseEvent{Type: "mouseReleased", X: 130, Y: 110, Button: mouseLeft, ClickCount: 1, Modifiers: modShift}))

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
	checkNoBrowserUI(t, br.PID())
	return log
}

// checkNoBrowserUI checks that Chromium runs no renderer for its own UI
// beside the page's: the WebUI omnibox popup, which it otherwise preloads
// at start (155 MiB), is switched off.
func checkNoBrowserUI(t *testing.T, browserPID int) {
	t.Helper()
	if rendererCmdlines(t, browserPID, func(c string) {
		if strings.Contains(c, "--top-chrome-webui") {
			t.Errorf("Chromium runs a WebUI renderer for its own UI: %s", clip(c, 200))
		}
	}) == 0 {
		t.Errorf("no renderer in Chromium's process group %d: the check sees nothing", browserPID)
	}
}

// rendererCmdlines passes the command line of each renderer process in
// Chromium's process group to see and returns how many there are.
func rendererCmdlines(t *testing.T, browserPID int, see func(cmdline string)) int {
	t.Helper()
	renderers := 0
	for _, pid := range processGroup(t, browserPID) {
		cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		c := string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}))
		if strings.Contains(c, "--type=renderer") {
			renderers++
			see(c)
		}
	}
	return renderers
}

// TestWindowsShareRenderers opens three windows on one site in a browser
// per RendererProcesses setting and counts Chromium's renderer processes
// once its start-up has ended (and the page that ended it has closed): a
// process per window without a cap, one for all three with a cap of 1.
// Each window reads its V8 heap limit: low-end device mode's 272 MiB, or
// RendererHeapMiB; each renderer's command line carries jsFlags' switches
// that turn V8's optimising compilers off, unless OptimizingJIT, and that
// let its heap grow 3x between full collections.
func TestWindowsShareRenderers(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><title>window</title><p id="p">`+r.URL.Path+`</p>`)
	}))
	defer srv.Close()
	for _, c := range []struct {
		limit, min, max, heapMiB int
		jit                      bool
	}{{limit: 0, min: 3, max: 99}, {limit: 1, min: 1, max: 1, heapMiB: 768, jit: true}} {
		t.Run(fmt.Sprintf("limit=%d", c.limit), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cfg := DefaultBrowserConfig()
			cfg.Dir, cfg.RendererProcesses, cfg.RendererHeapMiB, cfg.OptimizingJIT = t.TempDir(), c.limit, c.heapMiB, c.jit
			wantHeap := [2]float64{260, 290}
			if c.heapMiB > 0 {
				wantHeap = [2]float64{float64(c.heapMiB), float64(c.heapMiB) * 1.2}
			}
			br, err := launchBrowser(ctx, cfg, zaptest.NewLogger(t))
			if err != nil {
				t.Fatal(err)
			}
			defer br.Close()
			for i := range 3 {
				p, err := br.NewWindow(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer p.Close()
				w := &window{page: p}
				path := fmt.Sprintf("/w%d", i)
				if err := w.navigate(ctx, srv.URL+path); err != nil {
					t.Fatal(err)
				}
				if err := w.waitFor(ctx, "the window shows its page", `(want) => document.getElementById('p')?.textContent === want`, path); err != nil {
					t.Fatal(err)
				}
				limit, err := w.eval(ctx, `() => performance.memory.jsHeapSizeLimit / 1048576`)
				if err != nil {
					t.Fatal(err)
				}
				if l := limit.Num(); l < wantHeap[0] || l > wantHeap[1] {
					t.Errorf("window %d: V8 heap limit %.0f MiB, want %.0f to %.0f", i, l, wantHeap[0], wantHeap[1])
				}
			}
			// endStartup's page has a renderer of its own until the
			// start-up ends; then the page closes and its renderer goes.
			if err := br.startup.wait(ctx); err != nil {
				t.Fatal(err)
			}
			tick := time.NewTicker(50 * time.Millisecond)
			defer tick.Stop()
			for n := rendererCmdlines(t, br.PID(), func(string) {}); n > c.max; n = rendererCmdlines(t, br.PID(), func(string) {}) {
				select {
				case <-ctx.Done():
					t.Fatalf("%d renderer processes for 3 windows with RendererProcesses %d once start-up ended, want at most %d", n, c.limit, c.max)
				case <-tick.C:
				}
			}
			// V8 runs every window's scripts without its optimising
			// compilers (jsFlags) unless OptimizingJIT, and grows its
			// heap 3x between full collections: the switches reach each
			// renderer.
			if n := rendererCmdlines(t, br.PID(), func(cmdline string) {
				if !strings.Contains(cmdline, "--heap-growing-percent=200") {
					t.Errorf("the renderer's V8 switches lack --heap-growing-percent=200: %s", clip(cmdline, 300))
				}
				for _, f := range []string{"--no-maglev", "--no-turbofan"} {
					if strings.Contains(cmdline, f) == c.jit {
						t.Errorf("OptimizingJIT %v, yet the renderer's %s is %v: %s", c.jit, f, strings.Contains(cmdline, f), clip(cmdline, 300))
					}
				}
			}); n < c.min || n > c.max {
				t.Errorf("%d renderer processes for 3 windows with RendererProcesses %d, want %d to %d", n, c.limit, c.min, c.max)
			}
		})
	}
}
