package web

import (
	"bufio"
	"context"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"dialogfarm/pipeline"
)

var testEnv = pipeline.Env{Endpoints: []string{"judge"}, Plugins: []string{"askplugin"}}

const testToken = "s3cret-s3cret-s3cret"

// guarded is a server on a loopback port with one finished run whose
// folder holds a repository's .html and .svg, a screenshot and a binary.
type guarded struct {
	t     *testing.T
	url   string
	port  string
	runID string
	out   string
}

func newGuarded(t *testing.T, opt Options) *guarded {
	t.Helper()
	log := zaptest.NewLogger(t)
	reg := pipeline.NewRegistry()
	store, err := pipeline.OpenStore(filepath.Join(t.TempDir(), "p"), reg, testEnv)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	runs := pipeline.NewRuns(ctx, t.TempDir(), reg, func(out string) (pipeline.RunEnv, func(), error) {
		return pipeline.RunEnv{Out: out, Log: log, Validate: testEnv}, func() {}, nil
	}, log)
	t.Cleanup(func() { cancel(); runs.Wait() })
	ts := httptest.NewUnstartedServer(nil)
	opt.Token, opt.Addr = testToken, ts.Listener.Addr().String()
	srv, err := New(store, runs, opt, log)
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = srv.Handler()
	ts.Start()
	t.Cleanup(ts.Close)
	g := &guarded{t: t, url: ts.URL, port: ts.URL[strings.LastIndex(ts.URL, ":")+1:]}

	res, err := store.Apply("demo", pipeline.Batch{Mutations: []pipeline.Mutation{{Op: pipeline.MutAddNode, Node: "recorded",
		Operator: "load_dialogues", Params: map[string]any{"path": "../sft/testdata/dialogues.jsonl"}}}})
	if err != nil || !res.Committed {
		t.Fatalf("commit: %v %+v", err, res)
	}
	spec, rev, _ := store.Get("demo")
	info, err := runs.Start("demo", spec, rev, false, 0)
	if err != nil {
		t.Fatal(err)
	}
	for info.Status == pipeline.RunRunning {
		time.Sleep(10 * time.Millisecond)
		info, _ = runs.Get(info.ID)
	}
	g.runID, g.out = info.ID, info.Out
	for name, data := range map[string]string{
		"workspace/repo/x.html":  `<script>fetch('/api/pipelines')</script>`,
		"workspace/repo/x.svg":   `<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`,
		"failures/c1/shot.png":   "\x89PNG\r\n\x1a\n",
		"workspace/repo/lib.bin": "\x00\x01\x02ELF",
	} {
		p := filepath.Join(info.Out, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return g
}

// do sends one request (redirects not followed); hdr "Host" sets the Host.
func (g *guarded) do(method, path, body string, hdr map[string]string) *http.Response {
	g.t.Helper()
	req, err := http.NewRequest(method, g.url+path, strings.NewReader(body))
	if err != nil {
		g.t.Fatal(err)
	}
	if body == "" {
		req.Body = http.NoBody
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		g.t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

var bearer = map[string]string{"Authorization": "Bearer " + testToken}

func with(h map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range h {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// TestEveryRouteNeedsTheToken: static files, pages, the API, run files,
// the event stream and MCP all answer 401 without the token (and with a
// wrong one), and serve it with the token as a bearer or the cookie.
func TestEveryRouteNeedsTheToken(t *testing.T) {
	g := newGuarded(t, Options{})
	cookie := map[string]string{"Cookie": "dialogfarm-token-" + g.port + "=" + testToken}
	routes := []struct{ method, path string }{
		{"GET", "/"}, {"GET", "/static/app.js"}, {"GET", "/static/vendor/cytoscape.min.js"}, {"GET", "/dashboard.css"},
		{"GET", "/p/demo"}, {"GET", "/api/pipelines"}, {"GET", "/api/pipelines/demo"}, {"GET", "/api/runs"},
		{"GET", "/runs/" + g.runID}, {"GET", "/runs/" + g.runID + "/panel"}, {"GET", "/runs/" + g.runID + "/files/workspace/repo/x.html"},
		{"GET", "/events"}, {"POST", "/mcp"}, {"GET", "/mcp"}, {"POST", "/api/pipelines/demo/apply"},
		{"GET", "/profiles"}, {"GET", "/profiles/default"}, {"GET", "/api/profiles/default"},
		{"POST", "/api/profiles/preview"}, {"POST", "/api/profiles/mine"},
	}
	for _, rt := range routes {
		if got := g.do(rt.method, rt.path, "", nil).StatusCode; got != http.StatusUnauthorized {
			t.Errorf("%s %s without a token: %d, want 401", rt.method, rt.path, got)
		}
		if got := g.do(rt.method, rt.path, "", map[string]string{"Authorization": "Bearer s3cret-s3cret-s3creT"}).StatusCode; got != http.StatusUnauthorized {
			t.Errorf("%s %s with a wrong token: %d, want 401", rt.method, rt.path, got)
		}
		if rt.path == "/events" || rt.method == "GET" && rt.path == "/mcp" {
			continue // streams: checked below
		}
		for name, h := range map[string]map[string]string{"bearer": bearer, "cookie": cookie} {
			if got := g.do(rt.method, rt.path, "", h).StatusCode; got == http.StatusUnauthorized || got == http.StatusForbidden {
				t.Errorf("%s %s with the token as %s: %d", rt.method, rt.path, name, got)
			}
		}
	}
	// The event stream opens with the cookie.
	req, _ := http.NewRequest("GET", g.url+"/events", nil)
	req.Header.Set("Cookie", cookie["Cookie"])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(resp.Body).ReadString('\n')
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(line, ": connected") {
		t.Fatalf("/events with the cookie: %d %q", resp.StatusCode, line)
	}
}

// refreshTo is where a token URL's answer sends the browser.
func (g *guarded) refreshTo(path string) (*http.Response, string) {
	g.t.Helper()
	resp, err := http.Get(g.url + path)
	if err != nil {
		g.t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := regexp.MustCompile(`http-equiv="refresh" content="0;url=([^"]*)"`).FindSubmatch(body)
	if m == nil {
		return resp, ""
	}
	return resp, html.UnescapeString(string(m[1]))
}

// TestTokenURLSetsTheCookie: /?token= sets an HttpOnly, SameSite=Strict
// cookie and sends the browser on to the same page without the token,
// never off the site.
func TestTokenURLSetsTheCookie(t *testing.T) {
	g := newGuarded(t, Options{})
	resp, to := g.refreshTo("/p/demo?token=" + testToken + "&x=1")
	if resp.StatusCode != http.StatusOK || to != "/p/demo?x=1" || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("token URL: %d to %q", resp.StatusCode, to)
	}
	cs := resp.Cookies()
	if len(cs) != 1 || cs[0].Value != testToken || !cs[0].HttpOnly || cs[0].SameSite != http.SameSiteStrictMode || cs[0].Path != "/" {
		t.Fatalf("cookie: %+v", cs)
	}
	if _, to := g.refreshTo("//evil.example/?token=" + testToken); to != "/evil.example/" {
		t.Fatalf("token URL of //evil.example/ goes to %q", to)
	}
	// A page opened without the cookie gets a same-origin link to itself
	// (which, followed, brings a SameSite=Strict cookie along).
	req, _ := http.NewRequest("GET", g.url+"/p/demo?x=%3Cb%3E", nil)
	req.Header.Set("Accept", "text/html,application/xhtml+xml")
	page, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(page.Body)
	page.Body.Close()
	if page.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), `href="/p/demo?x=%3Cb%3E"`) {
		t.Fatalf("page without the token: %d %s", page.StatusCode, body)
	}
	if resp := g.do("GET", "/?token=wrong-wrong-wrong-wrong", "", nil); resp.StatusCode != http.StatusUnauthorized || len(resp.Cookies()) > 0 {
		t.Fatalf("wrong token URL: %d %v", resp.StatusCode, resp.Cookies())
	}
}

// TestHostAndOriginAllowList: a Host that is not a loopback name on the
// bound port (a rebound DNS name, another port) or an --allowed-host is
// refused on every route, token or not; so is a foreign Origin and a
// cross-site state change.
func TestHostAndOriginAllowList(t *testing.T) {
	g := newGuarded(t, Options{AllowedHosts: []string{"farm.example", "proxy.example:8443"}})
	cases := []struct {
		name, method, path string
		hdr                map[string]string
		want               int
	}{
		{"rebound name, API", "GET", "/api/pipelines", with(bearer, "Host", "evil.example:"+g.port), 403},
		{"rebound name, commit", "POST", "/api/pipelines/x/apply", with(bearer, "Host", "evil.example:"+g.port), 403},
		{"rebound name, run file", "GET", "/runs/" + g.runID + "/files/workspace/repo/x.html", with(bearer, "Host", "evil.example:"+g.port), 403},
		{"rebound name, events", "GET", "/events", with(bearer, "Host", "evil.example:"+g.port), 403},
		{"rebound name, static", "GET", "/static/app.js", with(bearer, "Host", "evil.example:"+g.port), 403},
		{"rebound name, MCP", "POST", "/mcp", with(bearer, "Host", "evil.example:"+g.port), 403},
		{"rebound name, no token", "GET", "/", map[string]string{"Host": "evil.example:" + g.port}, 403},
		{"loopback, other port", "GET", "/api/pipelines", with(bearer, "Host", "127.0.0.1:1"), 403},
		{"localhost", "GET", "/api/pipelines", with(bearer, "Host", "localhost:"+g.port), 200},
		{"::1", "GET", "/api/pipelines", with(bearer, "Host", "[::1]:"+g.port), 200},
		{"allowed name", "GET", "/api/pipelines", with(bearer, "Host", "farm.example"), 200},
		{"allowed name:port", "GET", "/api/pipelines", with(bearer, "Host", "proxy.example:8443"), 200},
		{"allowed name, other port", "GET", "/api/pipelines", with(bearer, "Host", "proxy.example:1"), 403},
		{"foreign Origin on GET", "GET", "/api/pipelines", with(bearer, "Origin", "http://evil.example:"+g.port), 403},
		{"null Origin", "GET", "/api/pipelines", with(bearer, "Origin", "null"), 403},
		{"own Origin", "GET", "/api/pipelines", with(bearer, "Origin", "http://127.0.0.1:"+g.port), 200},
		{"cross-site POST", "POST", "/api/pipelines/x/apply", with(bearer, "Sec-Fetch-Site", "cross-site"), 403},
		{"same-origin POST", "POST", "/api/pipelines/x/apply", with(bearer, "Sec-Fetch-Site", "same-origin"), 200},
	}
	for _, c := range cases {
		if got := g.do(c.method, c.path, `{"base_revision":0,"mutations":[]}`, c.hdr).StatusCode; got != c.want {
			t.Errorf("%s: %s %s = %d, want %d", c.name, c.method, c.path, got, c.want)
		}
	}
}

// TestRunFilesNeverRenderActive: a repository's .html and .svg come as
// text/plain, a screenshot as an image, a binary as a download, all
// with a sandbox CSP and nosniff; the UI's pages carry their own CSP.
func TestRunFilesNeverRenderActive(t *testing.T) {
	g := newGuarded(t, Options{})
	files := "/runs/" + g.runID + "/files/"
	cases := []struct{ path, ctype, disposition string }{
		{"workspace/repo/x.html", "text/plain; charset=utf-8", ""},
		{"workspace/repo/x.svg", "text/plain; charset=utf-8", ""},
		{"workspace/repo/x.html?download=1", "text/plain; charset=utf-8", "attachment"},
		{"failures/c1/shot.png", "image/png", ""},
		{"workspace/repo/lib.bin", "application/octet-stream", "attachment"},
	}
	for _, c := range cases {
		resp := g.do("GET", files+c.path, "", bearer)
		h := resp.Header
		if resp.StatusCode != 200 || h.Get("Content-Type") != c.ctype || !strings.HasPrefix(h.Get("Content-Security-Policy"), "sandbox") ||
			h.Get("X-Content-Type-Options") != "nosniff" || !strings.HasPrefix(h.Get("Content-Disposition"), c.disposition) {
			t.Errorf("%s: %d %q CSP %q nosniff %q disposition %q", c.path, resp.StatusCode, h.Get("Content-Type"),
				h.Get("Content-Security-Policy"), h.Get("X-Content-Type-Options"), h.Get("Content-Disposition"))
		}
	}
	if err := os.Symlink("/etc", filepath.Join(g.out, "etc")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"..%2F..%2F..%2Fetc%2Fpasswd", "etc/passwd"} {
		if resp := g.do("GET", files+p, "", bearer); resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s, out of the run folder: %d", p, resp.StatusCode)
		}
	}
	for _, p := range []string{"/", "/p/demo", "/runs/" + g.runID, "/profiles", "/profiles/default"} {
		if csp := g.do("GET", p, "", bearer).Header.Get("Content-Security-Policy"); csp != pageCSP {
			t.Errorf("%s: CSP %q", p, csp)
		}
	}
}

// TestLimits: request bodies over the limit are refused with 413 (the
// API and MCP), and event streams beyond the cap with 503 until one
// closes.
func TestLimits(t *testing.T) {
	g := newGuarded(t, Options{MaxStreams: 3, MaxBodyBytes: 1 << 10})
	big := `{"base_revision":0,"message":"` + strings.Repeat("x", 2<<10) + `","mutations":[]}`
	if got := g.do("POST", "/api/pipelines/x/apply", big, bearer).StatusCode; got != http.StatusRequestEntityTooLarge {
		t.Errorf("big apply: %d, want 413", got)
	}
	mcpBody := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","clientInfo":{"name":"x","version":"` + strings.Repeat("1", 2<<10) + `"},"capabilities":{}}}`
	if got := g.do("POST", "/mcp", mcpBody, with(bearer, "Content-Type", "application/json", "Accept", "application/json, text/event-stream")).StatusCode; got != http.StatusRequestEntityTooLarge {
		t.Errorf("big MCP request: %d, want 413", got)
	}
	open := func() (*http.Response, context.CancelFunc) {
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel) // before the server closes, which waits for open streams
		req, _ := http.NewRequestWithContext(ctx, "GET", g.url+"/events", nil)
		req.Header.Set("Authorization", "Bearer "+testToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp, cancel
	}
	var cancels []context.CancelFunc
	for range 3 {
		resp, cancel := open()
		cancels = append(cancels, cancel)
		if resp.StatusCode != 200 {
			t.Fatalf("stream within the cap: %d", resp.StatusCode)
		}
	}
	resp, cancel := open()
	cancel()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("stream beyond the cap: %d", resp.StatusCode)
	}
	cancels[0]()
	for {
		resp, cancel := open()
		cancels = append(cancels, cancel)
		if resp.StatusCode == 200 {
			break
		}
		time.Sleep(10 * time.Millisecond) // the closed stream's slot frees when its handler returns
	}
	for _, c := range cancels {
		c()
	}
}

// TestNewRefusesAShortToken: there is no server without a token.
func TestNewRefusesAShortToken(t *testing.T) {
	for _, tok := range []string{"", "short"} {
		if _, err := New(nil, nil, Options{Token: tok, Addr: "127.0.0.1:1"}, zaptest.NewLogger(t)); err == nil {
			t.Errorf("token %q accepted", tok)
		}
	}
	if IsLoopback("0.0.0.0:8765") || !IsLoopback("127.0.0.1:8765") || !IsLoopback("[::1]:1") || IsLoopback("10.0.0.1:80") || IsLoopback(":8765") {
		t.Error("IsLoopback")
	}
}
