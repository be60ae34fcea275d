package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-rod/rod"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap/zaptest"

	"dialogfarm/dialog"
	"dialogfarm/driver/browser"
	"dialogfarm/internal/llmtest"
	"dialogfarm/pipeline"
	"dialogfarm/pool"
	"dialogfarm/sft"
)

// site is a served store with an MCP client and a browser page.
type site struct {
	t       *testing.T
	ctx     context.Context
	url     string
	store   *pipeline.Store
	runs    *pipeline.Runs
	cs      *sdk.ClientSession
	updates chan string
	browser *browser.RodBrowser
}

// recorded gives a drive node recorded dialogues for its configs (so the
// editor is not started: every config is recorded), judged 5, 4, 3, …;
// before the export it turns the last record into a failure with a
// screenshot and DOM, as a drive that failed that config leaves it.
func recorded(n *pipeline.Node, in, out map[string]pipeline.Value) error {
	if n.Op == "export" {
		return failLast(in["dialogues"].Path)
	}
	if n.Op != "drive" {
		return nil
	}
	f, err := os.Open(in["configs"].Path)
	if err != nil {
		return err
	}
	defer f.Close()
	configs, err := dialog.ReadConfigs(f, in["configs"].Path)
	if err != nil {
		return err
	}
	var lines []string
	for i, c := range configs {
		// One dialogue every 2 s: 30 a minute, as status and the dashboard must both say.
		d := dialog.Dialogue{ConfigID: c.ID, Status: dialog.StatusOK, Config: c, StartedAt: time.Date(2026, 1, 1, 0, 0, 2*i, 0, time.UTC), Seconds: 2}
		body, _ := json.Marshal(map[string]any{"messages": []dialog.Message{{Role: "user", Content: c.Turns[0].Query}}})
		ans := fmt.Sprintf("answer %d", i)
		score := float64(5 - i%3)
		d.Turns = []dialog.Turn{{Query: c.Turns[0].Query, Exchange: dialog.Exchange{Request: body, Answer: ans,
			Candidates: []dialog.Candidate{{Member: "a", Model: "m", Text: ans, CostUSD: 0.002}},
			Verdicts:   []dialog.Verdict{{Candidate: 0, Score: score, Rank: 1}}}}}
		data, _ := json.Marshal(d)
		lines = append(lines, string(data))
	}
	return os.WriteFile(out["dialogues"].Path, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}

// failLast rewrites the last dialogue as failed, with artifacts.
func failLast(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	var d dialog.Dialogue
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &d); err != nil {
		return err
	}
	art := filepath.Join(filepath.Dir(path), "failures", d.ConfigID)
	if err := os.MkdirAll(art, 0o755); err != nil {
		return err
	}
	_ = os.WriteFile(filepath.Join(art, "screenshot.png"), []byte("png"), 0o644)
	_ = os.WriteFile(filepath.Join(art, "dom.html"), []byte("<div>chat</div>"), 0o644)
	d.Status, d.FailedStep, d.Error, d.Artifacts, d.Turns = dialog.StatusFailed, "wait_answer", "answer did not finish", art, nil
	last, _ := json.Marshal(d)
	lines[len(lines)-1] = string(last)
	return os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}

func newSite(t *testing.T) *site {
	t.Helper()
	return newSiteWith(t, nil)
}

// newSiteWith is newSite with the server's handler wrapped by wrap (nil:
// as it is).
func newSiteWith(t *testing.T, wrap func(http.Handler) http.Handler) *site {
	t.Helper()
	return newSiteOpts(t, siteOptions{wrap: wrap})
}

// siteOptions vary a test site.
type siteOptions struct {
	wrap        func(http.Handler) http.Handler
	store, runs string        // folders of the store and the runs ("": new ones)
	roots       []string      // data roots (nil: not confined)
	hold        chan struct{} // when set, drive nodes wait until it is closed
	profiles    string        // where the profile editor saves ("": nowhere)
}

func newSiteOpts(t *testing.T, o siteOptions) *site {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	log := zaptest.NewLogger(t)
	reg := pipeline.NewRegistry()
	if o.store == "" {
		o.store = filepath.Join(t.TempDir(), "pipelines")
	}
	if o.runs == "" {
		o.runs = t.TempDir()
	}
	env := testEnv
	env.Roots = o.roots
	before := recorded
	if o.hold != nil {
		before = func(n *pipeline.Node, in, out map[string]pipeline.Value) error {
			if n.Op == "drive" {
				<-o.hold
			}
			return recorded(n, in, out)
		}
	}
	store, err := pipeline.OpenStore(o.store, reg, env)
	if err != nil {
		t.Fatal(err)
	}
	model := llmtest.New(t, func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: "Query: \"why does this loop stop early?\""}
	})
	mc := pool.DefaultMemberConfig()
	mc.Name, mc.BaseURL, mc.Model, mc.Stream = "writer", model.URL, "writer", false
	qm, err := pool.NewMember(mc, pool.Policy{Retry: pool.RetryConfig{MaxAttempts: 1}}, nil, log)
	if err != nil {
		t.Fatal(err)
	}
	runs := pipeline.NewRuns(ctx, o.runs, reg, func(out string) (pipeline.RunEnv, func(), error) {
		return pipeline.RunEnv{Out: out, Log: log, Validate: env, QueryModel: qm, BeforeNode: before}, func() {}, nil
	}, log)
	runs.OnFinish = func(info pipeline.RunInfo) {
		if err := pipeline.WriteDashboard(info.Spec, info.Nodes, info.Out, info.Status); err != nil {
			t.Errorf("static dashboard: %v", err)
		}
	}
	ts := httptest.NewUnstartedServer(nil)
	srv, err := New(store, runs, Options{Token: testToken, Addr: ts.Listener.Addr().String(), Roots: o.roots, ProfilesDir: o.profiles}, log)
	if err != nil {
		t.Fatal(err)
	}
	stop := srv.Start(ctx)
	h := srv.Handler()
	if o.wrap != nil {
		h = o.wrap(h)
	}
	ts.Config.Handler = h
	ts.Start()
	s := &site{t: t, ctx: ctx, url: ts.URL, store: store, runs: runs, updates: make(chan string, 64)}
	client := sdk.NewClient(&sdk.Implementation{Name: "ui-test-agent", Version: "1"}, &sdk.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *sdk.ResourceUpdatedNotificationRequest) {
			select {
			case s.updates <- req.Params.URI:
			default:
			}
		},
	})
	// An MCP client passes the token as a bearer, as serve's help says.
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: ts.URL + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport{}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.cs = cs
	b, err := browser.LaunchRod(ctx, browser.Config{Bin: "/usr/bin/chromium", Headless: true, Width: 1300, Height: 850, Dir: t.TempDir()}, log)
	if err != nil {
		t.Fatal(err)
	}
	s.browser = b
	t.Cleanup(func() {
		b.Close()
		cs.Close()
		ts.Close()
		stop()
		cancel()
		runs.Wait()
	})
	return s
}

// bearerTransport adds the token to every request.
type bearerTransport struct{}

func (bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+testToken)
	return http.DefaultTransport.RoundTrip(r)
}

func (s *site) call(tool string, args map[string]any, out any) *sdk.CallToolResult {
	s.t.Helper()
	res, err := s.cs.CallTool(s.ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		s.t.Fatalf("%s: %v", tool, err)
	}
	if out != nil {
		data, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(data, out); err != nil {
			s.t.Fatalf("%s: %v", tool, err)
		}
	}
	return res
}

func (s *site) page(path string) *rod.Page {
	s.t.Helper()
	p, err := s.browser.NewPage(s.ctx)
	if err != nil {
		s.t.Fatal(err)
	}
	// Every page records what its Content-Security-Policy blocked; the
	// UI's own pages must need nothing it forbids.
	if _, err := p.EvalOnNewDocument(`window.__csp = []; document.addEventListener('securitypolicyviolation',
		(e) => window.__csp.push(e.violatedDirective + ' ' + (e.blockedURI || e.sourceFile + ':' + e.lineNumber)))`); err != nil {
		s.t.Fatal(err)
	}
	// Every page is opened as a person opens the URL serve printed: with
	// the token, which becomes the cookie, and then the page without it.
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	if err := p.Navigate(s.url + path + sep + "token=" + testToken); err != nil {
		s.t.Fatal(err)
	}
	// The token URL answers with a page that refreshes to the page
	// without the token: tests start on that second document.
	waitJS(s.t, p, `!location.search.includes('token=') && document.readyState === 'complete'`)
	s.t.Cleanup(func() {
		if v, err := p.Eval(`() => JSON.stringify(window.__csp || [])`); err == nil && v.Value.Str() != "[]" {
			s.t.Errorf("page %s: CSP violations %s", path, v.Value.Str())
		}
	})
	return p
}

// waitJS waits until the JS expression is true in the page. A check
// that a navigation cut short (the token page's refresh) is made again
// in the new document.
func waitJS(tb testing.TB, p *rod.Page, expr string) {
	tb.Helper()
	tp := p.Timeout(30 * time.Second)
	holds := rod.Eval(`() => { try { return !!(` + expr + `) } catch (e) { return false } }`)
	err := tp.Wait(holds)
	for browser.NavigatedAway(err) && tp.GetContext().Err() == nil {
		err = tp.Wait(holds)
	}
	if err != nil {
		state, _ := p.Eval(`() => JSON.stringify({df: !!window.df, ready: window.df && df.ready, rev: window.df && df.revision,
			nodes: window.df && df.cy && df.cy.nodes().length, cytoscape: typeof cytoscape, body: document.body.innerText.slice(0, 300)})`)
		tb.Fatalf("waiting for %s: %v; page: %v", expr, err, state)
	}
}

// TestUISync: an agent's MCP commit appears on an open canvas; a person's
// edit in the page is what the agent's next get_pipeline returns. Both
// latencies are logged (not asserted).
func TestUISync(t *testing.T) {
	s := newSite(t)
	var res pipeline.ApplyResult
	s.call("add_node", map[string]any{"pipeline": "ui", "base_revision": 0, "node": "recorded", "operator": "load_dialogues",
		"params": map[string]any{"path": "../sft/testdata/dialogues.jsonl"}}, &res)
	if !res.Committed {
		t.Fatalf("first node: %+v", res)
	}
	if err := s.cs.Subscribe(s.ctx, &sdk.SubscribeParams{URI: "dialogfarm://pipelines/ui"}); err != nil {
		t.Fatal(err)
	}
	p := s.page("/p/ui")
	waitJS(t, p, `window.df && df.ready && df.revision === 1 && df.cy.nodes().length === 1`)

	// Agent → canvas.
	start := time.Now()
	s.call("add_node", map[string]any{"pipeline": "ui", "base_revision": 1, "node": "export", "operator": "export",
		"inputs": map[string]any{"dialogues": "recorded"}}, &res)
	committed := time.Now()
	if !res.Committed {
		t.Fatalf("agent's add_node: %+v", res)
	}
	waitJS(t, p, `df.cy.getElementById('export').length === 1 && df.cy.edges().length === 1`)
	shown := time.Now()
	t.Logf("agent commit → canvas: %v after the commit returned (%v after the call started)",
		shown.Sub(committed).Round(time.Millisecond), shown.Sub(start).Round(time.Millisecond))

	// Person → get_pipeline: select the export node, set min_score, save.
	drain(s.updates)
	p.MustEval(`() => { df.cy.getElementById('export').emit('tap'); return true }`)
	waitJS(t, p, `document.querySelector('#node-form input[name=min_score]')`)
	p.MustElement(`#node-form input[name=min_score]`).MustInput("4")
	start = time.Now()
	p.MustElement(`#node-save`).MustClick()
	var got struct {
		Revision int            `json:"revision"`
		Spec     *pipeline.Spec `json:"spec"`
	}
	for {
		select {
		case <-s.updates:
		case <-time.After(30 * time.Second):
			t.Fatal("the person's edit never reached the agent")
		}
		s.call("get_pipeline", map[string]any{"pipeline": "ui"}, &got)
		if got.Spec.Node("export").Params["min_score"] == 4.0 {
			break
		}
	}
	t.Logf("UI edit → get_pipeline: %v after the click", time.Since(start).Round(time.Millisecond))
	hist, _ := s.store.History("ui")
	if last := hist[len(hist)-1]; last.Author != "ui" || got.Revision != 3 {
		t.Fatalf("last entry %+v at r%d", last, got.Revision)
	}
	// The agent's stale edit now conflicts and names the person's change.
	s.call("set_param", map[string]any{"pipeline": "ui", "base_revision": 2, "node": "export", "param": "format", "value": "sharegpt"}, &res)
	if res.Committed || res.Conflict == nil || !strings.Contains(res.Conflict.Message, "r3 by ui") {
		t.Fatalf("stale agent edit: %+v", res)
	}
	// The page shows the validation panel and the history with revert.
	waitJS(t, p, `document.querySelectorAll('#history li').length === 3 && document.querySelector('#findings li')`)
	p.MustElement(`#history li:last-child .revert`).MustClick() // revert to r1
	waitJS(t, p, `df.revision === 4 && df.cy.nodes().length === 1`)
}

// TestUICommitBeforeStreamConnects: a commit made after the page read the
// pipeline but before its event stream connected still reaches the canvas.
// The test holds /events until the agent has committed.
func TestUICommitBeforeStreamConnects(t *testing.T) {
	release := make(chan struct{})
	s := newSiteWith(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/events" {
				select {
				case <-release:
				case <-r.Context().Done():
					return
				}
			}
			h.ServeHTTP(w, r)
		})
	})
	var res pipeline.ApplyResult
	s.call("add_node", map[string]any{"pipeline": "ui", "base_revision": 0, "node": "recorded", "operator": "load_dialogues",
		"params": map[string]any{"path": "../sft/testdata/dialogues.jsonl"}}, &res)
	p := s.page("/p/ui")
	waitJS(t, p, `window.df && df.revision === 1 && df.cy.nodes().length === 1`)
	s.call("add_node", map[string]any{"pipeline": "ui", "base_revision": 1, "node": "export", "operator": "export",
		"inputs": map[string]any{"dialogues": "recorded"}}, &res)
	if !res.Committed {
		t.Fatalf("agent's add_node: %+v", res)
	}
	close(release)
	waitJS(t, p, `df.ready && df.revision === 2 && df.cy.getElementById('export').length === 1`)
}

func drain(ch chan string) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

// TestUIDashboard runs the default-shaped pipeline on the fake model
// (queries by llmtest, recorded dialogues for the drive) and checks the
// live dashboard and the static dashboard.html show their plots.
func TestUIDashboard(t *testing.T) {
	s := newSite(t)
	repo, _ := filepath.Abs("../examples/sample-repo")
	spec := pipeline.DefaultSpec(pipeline.DefaultOptions{Profile: "default", N: 6, Repos: []string{repo}, Export: sft.DefaultOptions()})
	var res pipeline.ApplyResult
	s.call("apply_mutations", map[string]any{"pipeline": "full", "base_revision": 0, "mutations": []any{map[string]any{"op": "replace", "spec": spec}}}, &res)
	if !res.Committed {
		t.Fatalf("replace: %+v", res)
	}
	var info pipeline.RunInfo
	s.call("run_pipeline", map[string]any{"pipeline": "full"}, &info)
	for info.Status == pipeline.RunRunning {
		select {
		case <-s.updates:
		case <-time.After(200 * time.Millisecond):
		}
		s.call("get_run_status", map[string]any{"run_id": info.ID}, &info)
	}
	if info.Status != pipeline.RunDone {
		t.Fatalf("run: %s %s", info.Status, info.Error)
	}
	p := s.page("/runs/" + info.ID)
	waitJS(t, p, `document.querySelector('svg[data-plot=jsd]')`)
	plots := p.MustEval(`() => [...document.querySelectorAll('svg[data-plot]')].map(e => e.dataset.plot).join(',')`).String()
	for _, want := range []string{"scores-", "keep", "jsd", "failures"} {
		if !strings.Contains(plots, want) {
			t.Errorf("dashboard lacks plot %s (has %s)", want, plots)
		}
	}
	shot := p.MustElement(`.failures a`).MustAttribute("href")
	if shot == nil || !strings.HasSuffix(*shot, "screenshot.png") {
		t.Fatalf("failure link: %v", shot)
	}
	if body := p.MustEval(`async (u) => (await fetch(u)).text()`, *shot).String(); body != "png" {
		t.Fatalf("screenshot link serves %q", body)
	}
	static, err := os.ReadFile(filepath.Join(info.Out, "dashboard.html"))
	if err != nil || !strings.Contains(string(static), `data-plot="jsd"`) || !strings.Contains(string(static), `href="failures/`) {
		t.Fatalf("static dashboard: %v", err)
	}
	// The figures are status's: 30.0 dialogues/min (one every 2 s), and a
	// finished run has no cancel button.
	st, err := pipeline.ReadRunStatus(info.Out)
	if err != nil {
		t.Fatal(err)
	}
	rate := p.MustEval(`() => [...document.querySelectorAll('.tile')].find((e) => e.textContent.includes('dialogues/min')).querySelector('b').textContent`).String()
	if want := fmt.Sprintf("%.1f", st.PerMinute); rate != want || st.PerMinute != 30 {
		t.Errorf("the dashboard says %s dialogues/min, status %.1f", rate, st.PerMinute)
	}
	if !strings.Contains(string(static), "<b>30.0</b> dialogues/min") {
		t.Error("dashboard.html does not say 30.0 dialogues/min")
	}
	if p.MustEval(`() => !!document.getElementById('cancel')`).Bool() {
		t.Error("a finished run shows cancel")
	}
	t.Logf("dashboard plots: %s", plots)
}
