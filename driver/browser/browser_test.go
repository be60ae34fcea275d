package browser

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-rod/rod/lib/cdp"
	"go.uber.org/zap/zaptest"

	"dialogfarm/internal/procstat"
)

// TestStartupEndsWhileWindowsAreBusy launches Chromium with each backend
// and keeps the window's renderer busy at once: Chromium's start-up still
// ends (endStartup's page idles in a renderer of its own), before the
// window is free again. The windows share one renderer process here, as
// they do on a 2-core machine. Chromium runs no renderer of its own UI.
func TestStartupEndsWhileWindowsAreBusy(t *testing.T) {
	for _, backend := range []Backend{BackendRod, BackendChromedp} {
		t.Run(string(backend), func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cfg := DefaultConfig()
			cfg.Backend, cfg.Dir, cfg.RendererProcesses = backend, t.TempDir(), 1
			br, err := Launch(ctx, cfg, zaptest.NewLogger(t))
			if err != nil {
				t.Fatal(err)
			}
			defer br.Close()
			if !strings.Contains(br.Version(), "Chrome/") || br.PID() <= 0 {
				t.Errorf("version %q, pid %d", br.Version(), br.PID())
			}
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
			if err := br.WaitStartup(ctx); err != nil {
				t.Fatal(err)
			}
			ended := time.Now()
			if done, err := br.b.StartupDone(ctx); err != nil || !done {
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
			checkNoBrowserUI(t, br.PID())
		})
	}
}

// checkNoBrowserUI checks that Chromium runs no renderer for its own UI
// beside the page's: the WebUI omnibox popup, which it otherwise preloads
// at start (155 MiB), is switched off.
func checkNoBrowserUI(t *testing.T, browserPID int) {
	t.Helper()
	if rendererCmdlines(t, browserPID, func(c string) {
		if strings.Contains(c, "--top-chrome-webui") {
			t.Errorf("Chromium runs a WebUI renderer for its own UI: %s", c[:min(len(c), 200)])
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
	for _, pid := range procstat.Group(procstat.Read(), browserPID) {
		cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		c := string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}))
		if strings.Contains(c, "--type=renderer") {
			renderers++
			see(c)
		}
	}
	return renderers
}

// TestWindowsShareRenderers opens windows on one site in a browser per
// RendererProcesses setting, all before Chromium's start-up has ended,
// and counts Chromium's renderer processes once it has (and the page that
// ended it has closed): a process per window for 0, one for all three
// windows for 1, and for 2 two processes of two windows each (with
// Chromium's --renderer-process-limit=2 the four windows opened while
// the start-up page had a renderer of its own all went to one process).
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
		limit, windows, min, max, heapMiB int
		jit                               bool
		backend                           Backend
		jsFlags                           []string
	}{
		{limit: 0, windows: 3, min: 3, max: 99, backend: BackendRod},
		{limit: 1, windows: 3, min: 1, max: 1, heapMiB: 768, jit: true, backend: BackendRod},
		{limit: 2, windows: 4, min: 2, max: 2, backend: BackendRod, jsFlags: []string{"--bytecode-old-age=2", "--flush-baseline-code"}},
		{limit: 2, windows: 4, min: 2, max: 2, backend: BackendChromedp, jsFlags: []string{"--bytecode-old-age=3"}},
	} {
		t.Run(fmt.Sprintf("limit=%d/%s", c.limit, c.backend), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cfg := DefaultConfig()
			cfg.Dir, cfg.RendererProcesses, cfg.RendererHeapMiB, cfg.OptimizingJIT, cfg.Backend = t.TempDir(), c.limit, c.heapMiB, c.jit, c.backend
			cfg.JSFlags = c.jsFlags
			wantHeap := [2]float64{260, 290}
			if c.heapMiB > 0 {
				wantHeap = [2]float64{float64(c.heapMiB), float64(c.heapMiB) * 1.2}
			}
			br, err := Launch(ctx, cfg, zaptest.NewLogger(t))
			if err != nil {
				t.Fatal(err)
			}
			defer br.Close()
			// As a run does, the windows open blank first and load
			// their pages afterwards.
			pages := make([]Page, c.windows)
			for i := range pages {
				p, err := br.NewWindow(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer p.Close()
				pages[i] = p
			}
			for i, p := range pages {
				path := fmt.Sprintf("/w%d", i)
				if err := p.Navigate(ctx, srv.URL+path); err != nil {
					t.Fatal(err)
				}
				waitTrue(ctx, t, p, `(want) => document.getElementById('p')?.textContent === want`, path)
				raw, err := p.Eval(ctx, `() => performance.memory.jsHeapSizeLimit / 1048576`)
				if err != nil {
					t.Fatal(err)
				}
				var l float64
				if err := json.Unmarshal(raw, &l); err != nil {
					t.Fatal(err)
				}
				if l < wantHeap[0] || l > wantHeap[1] {
					t.Errorf("window %d: V8 heap limit %.0f MiB, want %.0f to %.0f", i, l, wantHeap[0], wantHeap[1])
				}
			}
			// endStartup's page has a renderer of its own until the
			// start-up ends; then the page closes and its renderer goes.
			if err := br.WaitStartup(ctx); err != nil {
				t.Fatal(err)
			}
			tick := time.NewTicker(50 * time.Millisecond)
			defer tick.Stop()
			for n := rendererCmdlines(t, br.PID(), func(string) {}); n > c.max; n = rendererCmdlines(t, br.PID(), func(string) {}) {
				select {
				case <-ctx.Done():
					t.Fatalf("%d renderer processes for %d windows with RendererProcesses %d once start-up ended, want at most %d", n, c.windows, c.limit, c.max)
				case <-tick.C:
				}
			}
			// V8 runs every window's scripts without its optimising
			// compilers (jsFlags) unless OptimizingJIT, and grows its
			// heap 3x between full collections: the switches reach each
			// renderer.
			if n := rendererCmdlines(t, br.PID(), func(cmdline string) {
				if !strings.Contains(cmdline, "--heap-growing-percent=200") {
					t.Errorf("the renderer's V8 switches lack --heap-growing-percent=200: %s", cmdline[:min(len(cmdline), 300)])
				}
				for _, f := range []string{"--no-maglev", "--no-turbofan"} {
					if strings.Contains(cmdline, f) == c.jit {
						t.Errorf("OptimizingJIT %v, yet the renderer's %s is %v: %s", c.jit, f, strings.Contains(cmdline, f), cmdline[:min(len(cmdline), 300)])
					}
				}
				for _, f := range c.jsFlags {
					if !strings.Contains(cmdline, " "+f) {
						t.Errorf("the renderer's V8 switches lack JSFlags' %s: %s", f, cmdline[:min(len(cmdline), 400)])
					}
				}
			}); n < c.min || n > c.max {
				t.Errorf("%d renderer processes for %d windows with RendererProcesses %d, want %d to %d", n, c.windows, c.limit, c.min, c.max)
			}
			if c.limit > 0 {
				sizes := groupSizes(br.windows)
				if slices.Max(sizes)-slices.Min(sizes) > 1 || len(sizes) != c.limit {
					t.Errorf("windows per process %v, want %d processes of about %d windows", sizes, c.limit, c.windows/c.limit)
				}
			}
		})
	}
}

// V8 switches are --name or --name=value, separated by spaces; nothing
// else gets to the renderers' command line.
func TestParseJSFlags(t *testing.T) {
	got, err := ParseJSFlags("  --bytecode-old-age=2   --flush-baseline-code ")
	if err != nil || !slices.Equal(got, []string{"--bytecode-old-age=2", "--flush-baseline-code"}) {
		t.Errorf("ParseJSFlags = %q, %v", got, err)
	}
	if got, err := ParseJSFlags(""); err != nil || len(got) != 0 {
		t.Errorf("ParseJSFlags(\"\") = %q, %v, want none", got, err)
	}
	for _, bad := range []string{"bytecode-old-age=2", "--a --b=\"x\"", "-x", "--flag=a'b", "--=1"} {
		if _, err := ParseJSFlags(bad); err == nil {
			t.Errorf("ParseJSFlags(%q) passed", bad)
		}
	}
}

// groupSizes are the live windows of each of g's groups.
func groupSizes(g *windowGroups) []int {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]int, len(g.groups))
	for i, ws := range g.groups {
		out[i] = len(ws)
	}
	return out
}

// waitTrue evaluates the predicate js in p until it returns true, and
// fails the test when ctx ends first.
func waitTrue(ctx context.Context, t *testing.T, p Page, js string, args ...any) {
	t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		raw, err := p.Eval(ctx, js, args...)
		if err == nil && string(raw) == "true" {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s never held (last: %s, %v)", js, raw, err)
		case <-tick.C:
		}
	}
}

// TestDevToolsOnlyForTheDriver launches Chromium with each backend and
// checks that no web page can reach its DevTools: go-rod's websocket
// listens on loopback only and refuses a page's origin and a foreign Host
// header; chromedp speaks over a pipe and opens no port at all.
func TestDevToolsOnlyForTheDriver(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	launch := func(t *testing.T, backend Backend) *Chromium {
		cfg := DefaultConfig()
		cfg.Backend, cfg.Dir = backend, t.TempDir()
		br, err := Launch(ctx, cfg, zaptest.NewLogger(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(br.Close)
		return br
	}
	t.Run("rod: DevTools listens on loopback and refuses web pages", func(t *testing.T) {
		br := launch(t, BackendRod)
		control := br.b.(*RodBrowser).control
		u, err := url.Parse(control)
		if err != nil || u.Hostname() != "127.0.0.1" {
			t.Fatalf("DevTools at %q (%v)", control, err)
		}
		try := func(path string, header map[string]string) int {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+u.Host+path, nil)
			for k, v := range header {
				req.Header.Set(k, v)
			}
			if h, ok := header["Host"]; ok {
				req.Host = h
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp.StatusCode
		}
		upgrade := map[string]string{"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
			"Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Origin": "http://evil.example"}
		if status := try(u.Path, upgrade); status != http.StatusForbidden {
			t.Errorf("websocket from a web page's origin: %d, want 403", status)
		}
		if status := try("/json/version", map[string]string{"Host": "evil.example:80"}); status == http.StatusOK {
			t.Errorf("/json/version with a foreign Host header: %d", status)
		}
	})

	t.Run("chromedp: DevTools is a pipe, no port is open", func(t *testing.T) {
		browserPID := launch(t, BackendChromedp).PID()
		cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(browserPID) + "/cmdline")
		if err != nil {
			t.Fatal(err)
		}
		args := strings.Split(string(cmdline), "\x00")
		if !slices.Contains(args, "--remote-debugging-pipe") || slices.ContainsFunc(args, func(a string) bool {
			return strings.HasPrefix(a, "--remote-debugging-port")
		}) {
			t.Errorf("chromium's switches: %q", args)
		}
		// A listening socket of the test's own: the positive control.
		srv := httptest.NewServer(http.NotFoundHandler())
		defer srv.Close()
		listening := listeningSockets(t)
		for _, pid := range procstat.Group(procstat.Read(), browserPID) {
			fds, _ := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
			for _, fd := range fds {
				link, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/fd/" + fd.Name())
				if listening[link] {
					t.Errorf("chromium pid %d listens on a TCP socket (%s)", pid, link)
				}
			}
		}
	})

}

// listeningSockets returns the TCP sockets in the LISTEN state, as the
// "socket:[inode]" links of /proc/PID/fd name them.
func listeningSockets(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(table)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			// sl local rem st tx:rx tr:when retr uid timeout inode
			f := strings.Fields(line)
			if len(f) > 9 && f[3] == "0A" {
				out["socket:["+f[9]+"]"] = true
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no listening TCP socket at all: the test's server should be one; the check proves nothing")
	}
	return out
}

func TestRenderersPerWindows(t *testing.T) {
	c := Config{RendererProcesses: 1, WindowsPerRenderer: 8}
	for _, tc := range []struct{ windows, want int }{{1, 1}, {8, 1}, {9, 2}, {16, 2}, {17, 3}, {64, 8}} {
		if got := c.Renderers(tc.windows); got != tc.want {
			t.Errorf("%d windows, a process per 8 windows, at least 1: %d processes, want %d", tc.windows, got, tc.want)
		}
	}
	if got := (Config{RendererProcesses: 3, WindowsPerRenderer: 8}).Renderers(16); got != 3 {
		t.Errorf("16 windows, at least 3 processes: %d, want 3", got)
	}
	if got := (Config{RendererProcesses: 1}).Renderers(16); got != 1 {
		t.Errorf("16 windows, exactly 1 process (no per-window cap): %d, want 1", got)
	}
	if got := (Config{WindowsPerRenderer: 8}).Renderers(16); got != 0 {
		t.Errorf("a process per window (0) stays so: %d, want 0", got)
	}
}

// TestNavigatedAway: the DevTools errors a navigation causes mid-script,
// as either backend wraps them, are worth a second check; others are not.
func TestNavigatedAway(t *testing.T) {
	for err, want := range map[error]bool{
		nil: false,
		&cdp.Error{Code: -32000, Message: "Inspected target navigated or closed"}:                     true,
		fmt.Errorf("eval: %w", &cdp.Error{Code: -32000, Message: "Execution context was destroyed."}): true,
		errors.New("exception \"Cannot find context with specified id\" (-32000)"):                    true,
		&cdp.Error{Code: -32000, Message: "Object reference chain is too long"}:                       false,
		context.DeadlineExceeded: false,
	} {
		if got := NavigatedAway(err); got != want {
			t.Errorf("NavigatedAway(%v) = %v, want %v", err, got, want)
		}
	}
}
