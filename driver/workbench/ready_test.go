package workbench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"dialogfarm/driver/browser"
)

// TestWaitReadyNamesWhatIsMissing: a workbench that never gets ready fails
// the wait with what was missing, the page, what the side bar and the
// explorer show and the notifications shown; a cancelled wait fails at
// once, without that diagnosis.
func TestWaitReadyNamesWhatIsMissing(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if r.URL.Path == "/rows/" { // the explorer is shown with its folder
			fmt.Fprint(w, `<!doctype html><div class="monaco-workbench"><div class="explorer-folders-view" style="height: 40px"><div class="monaco-list-row">repo</div></div>
<div class="activitybar"><div class="action-item checked"><a class="action-label" aria-label="Explorer (Ctrl+Shift+E)"></a></div></div></div>`)
			return
		}
		fmt.Fprint(w, `<!doctype html><div class="monaco-workbench"><div class="explorer-folders-view"></div>
<div class="activitybar"><div class="action-item"><a class="action-label" aria-label="Explorer (Ctrl+Shift+E)"></a></div>
<div class="action-item checked"><a class="action-label" aria-label="Ask"></a></div></div>
<div class="notifications-toasts"><div class="notification-list-item-message">Extension host terminated unexpectedly</div></div></div>`)
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, p := testWindow(ctx, t, browser.BackendRod)
	w := &window{page: p}
	log := zaptest.NewLogger(t)
	if err := w.navigate(ctx, srv.URL+"/stable/"); err != nil {
		t.Fatal(err)
	}
	wctx, wcancel := context.WithTimeout(ctx, 2*time.Second)
	defer wcancel()
	err := w.waitReady(wctx, `[id$="askplugin.status"]`, time.Second, time.Second, log)
	if !errIsTimeout(err) {
		t.Fatalf("waitReady: %v, want a timeout", err)
	}
	want := `(missing: extensions loaded, the explorer's folder, the plugin's sign [id$="askplugin.status"]; page /stable/; side bar: Ask; explorer: folders view 0 px high, 0 rows; notifications: Extension host terminated unexpectedly)`
	if !strings.HasSuffix(err.Error(), want) {
		t.Errorf("waitReady: %v\nwant it to end with %s", err, want)
	}
	if err := w.navigate(ctx, srv.URL+"/rows/"); err != nil {
		t.Fatal(err)
	}
	rctx, rcancel := context.WithTimeout(ctx, 2*time.Second)
	defer rcancel()
	err = w.waitReady(rctx, `[id$="askplugin.status"]`, 0, 0, log)
	want = `(missing: extensions loaded, the plugin's sign [id$="askplugin.status"]; page /rows/; side bar: Explorer (Ctrl+Shift+E); explorer: folders view 40 px high, 1 rows)`
	if !errIsTimeout(err) || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("waitReady: %v\nwant a timeout ending with %s", err, want)
	}
	// A cancelled run (not a timeout) is not held up by the diagnosis.
	cctx, ccancel := context.WithCancel(ctx)
	ccancel()
	if err := w.waitReady(cctx, `[id$="askplugin.status"]`, 0, 0, log); err == nil || strings.Contains(err.Error(), "missing:") {
		t.Errorf("waitReady with a cancelled context: %v, want an error without a diagnosis", err)
	}
}

// TestWaitReadyLoadsAgainWhenTheExplorerStaysEmpty: a workbench that is
// ready but for its explorer's folder is loaded again after the grace,
// once, with a warning; the second load shows the folder (/once/) and the
// wait passes, or it does not either (/never/) and the wait runs into its
// timeout with the diagnosis. One whose explorer shows the welcome of a
// workspace with no folder (/empty/) is loaded again after the shorter
// grace for that.
//
// The warning carries the lines at info and above of the window's own
// workbench log, which the web workbench keeps in IndexedDB: the /empty/
// page writes them there as it does, beside other windows' logs.
func TestWaitReadyLoadsAgainWhenTheExplorerStaysEmpty(t *testing.T) {
	var loads atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/favicon.ico" {
			http.NotFound(w, r)
			return
		}
		n := loads.Add(1)
		explorer := `<div class="pane expanded"><div class="explorer-folders-view" style="height: 300px"></div></div>`
		switch {
		case r.URL.Path != "/never/" && n > 1:
			explorer = `<div class="pane expanded"><div class="explorer-folders-view" style="height: 300px"><div class="monaco-list-row">repo</div></div></div>`
		case r.URL.Path == "/empty/":
			explorer = `<div class="explorer-viewlet"><div class="welcome-view-content">You have not yet added a folder to the workspace.</div></div>` + emptyLogs
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><div class="monaco-workbench">%s
<div class="activitybar"><div class="action-item checked"><a class="action-label" aria-label="Explorer (Ctrl+Shift+E)"></a></div></div>
<div id="dialogfarm.askplugin.status"></div></div><script>performance.mark('code/didLoadExtensions')</script>`, explorer)
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, p := testWindow(ctx, t, browser.BackendRod)
	w := &window{page: p}
	for _, c := range []struct {
		path, explorer string
		ready          bool
		grace, empty   time.Duration
	}{
		{"/once/", "folders view 300 px high, 0 rows", true, time.Second, time.Second},
		{"/never/", "folders view 300 px high, 0 rows", false, time.Second, time.Second},
		{"/empty/", "welcome: You have not yet added a folder to the workspace.", true, 3 * time.Second, 200 * time.Millisecond},
	} {
		t.Run(strings.Trim(c.path, "/"), func(t *testing.T) {
			loads.Store(0)
			seen, logs := observer.New(zap.WarnLevel)
			if err := w.navigate(ctx, srv.URL+c.path+"?workspace=/tmp/x.code-workspace"); err != nil {
				t.Fatal(err)
			}
			wctx, wcancel := context.WithTimeout(ctx, 4*time.Second)
			defer wcancel()
			start := time.Now()
			err := w.waitReady(wctx, `[id$="askplugin.status"]`, c.grace, c.empty, zap.New(seen))
			if c.ready && err != nil {
				t.Fatalf("waitReady: %v, want ready after one more load", err)
			}
			if !c.ready {
				want := `(missing: the explorer's folder; page /never/; side bar: Explorer (Ctrl+Shift+E); explorer: folders view 300 px high, 0 rows)`
				if !errIsTimeout(err) || !strings.HasSuffix(err.Error(), want) {
					t.Errorf("waitReady: %v\nwant a timeout ending with %s", err, want)
				}
			}
			if n := loads.Load(); n != 2 {
				t.Errorf("the page was loaded %d times, want 2 (the second after the grace)", n)
			}
			// Loaded again after the grace for what the explorer showed:
			// the shorter one for the welcome, and well before the other.
			d, wait := time.Since(start), min(c.grace, c.empty)
			if c.ready && d < wait {
				t.Errorf("ready after %v, before the %v grace was over", d, wait)
			}
			if c.empty < c.grace && d >= c.grace {
				t.Errorf("ready after %v: the explorer showed the welcome, yet the window waited the %v grace for a folder, not %v", d, c.grace, c.empty)
			}
			warned := logs.FilterMessageSnippet("explorer shows no folder").All()
			if len(warned) != 1 || warned[0].ContextMap()["explorer"] != c.explorer {
				t.Errorf("warnings %v, want one naming what the explorer showed", warned)
			} else if c.path == "/empty/" {
				got := fmt.Sprint(warned[0].ContextMap()["window_log"])
				want := "/window.log: 2026-12-06 05:10:01.500 [error] Unable to read file"
				if !strings.Contains(got, want) || !strings.HasPrefix(got, "[/") || !strings.Contains(got, "[info] Started") ||
					strings.Contains(got, "[trace]") || strings.Contains(got, "another window") ||
					strings.Contains(got, "a later window") || !strings.HasSuffix(got, "[warning] late]") {
					t.Errorf("the warning's window_log is %s, want this window's lines at info and above, oldest first, with %q", got, want)
				}
			}
			href, err := w.eval(ctx, `() => location.pathname + location.search`)
			if err != nil || href.Str() != c.path+"?workspace=/tmp/x.code-workspace" {
				t.Errorf("the window shows %q (%v), want the same address loaded again", href.Str(), err)
			}
		})
	}
}

// emptyLogs writes log files into IndexedDB as the web workbench does
// (database vscode-web-db, store vscode-logs-store, the file's path as key
// and its bytes as value, under a folder named by the workbench's start in
// local time): this page's, and those of windows that started a minute
// before and 5 s after it.
const emptyLogs = `<script>
const pad = n => String(n).padStart(2, '0');
const folder = t => { const d = new Date(t); return '/' + d.getFullYear() + pad(d.getMonth() + 1) + pad(d.getDate()) +
	'T' + pad(d.getHours()) + pad(d.getMinutes()) + pad(d.getSeconds()); };
const mine = folder(performance.timeOrigin + 200), before = folder(performance.timeOrigin - 60000), after = folder(performance.timeOrigin + 5000);
const db = indexedDB.open('vscode-web-db', 3);
db.onupgradeneeded = () => {
	for (const s of ['vscode-userdata-store', 'vscode-logs-store', 'vscode-filehandles-store']) db.result.createObjectStore(s);
};
db.onsuccess = () => {
	const st = db.result.transaction('vscode-logs-store', 'readwrite').objectStore('vscode-logs-store');
	const enc = new TextEncoder();
	st.put(enc.encode('2026-12-06 05:10:01.000 [info] Started local extension host\n' +
		'2026-12-06 05:10:01.200 [trace] noise\n' +
		'2026-12-06 05:10:01.500 [error] Unable to read file \'vscode-remote://localhost/tmp/x.code-workspace\'\n'), mine + '/window.log');
	st.put(enc.encode('2026-12-06 05:10:02.000 [warning] late\n'), mine + '/remoteagent.log');
	st.put(enc.encode('2026-12-06 05:10:01.100 [error] another window\n'), before + '/window.log');
	st.put(enc.encode('2026-12-06 05:10:01.300 [error] a later window\n'), after + '/window.log');
};
</script>`
