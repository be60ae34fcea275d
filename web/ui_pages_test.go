package web

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dialogfarm/pipeline"
	"dialogfarm/sft"
)

// repoRoot is the checkout, the data root of these tests.
func repoRoot(tb testing.TB) string {
	tb.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		tb.Fatal(err)
	}
	return root
}

// TestUINewFromDefaultAndImport: the index makes a pipeline from the
// default one (a repository outside the data roots is refused with its
// finding shown, one inside commits and opens the canvas) and from an
// imported YAML file (a malformed one is refused naming file and line).
func TestUINewFromDefaultAndImport(t *testing.T) {
	root := repoRoot(t)
	s := newSiteOpts(t, siteOptions{roots: []string{root}})
	p := s.page("/")
	waitJS(t, p, `document.getElementById('new-default')`)
	if got := p.MustElement(`#new-repos`).MustProperty("value").String(); got != root {
		t.Errorf("repositories default to %q, want the first data root %q", got, root)
	}
	p.MustElement(`#new-name`).MustInput("fromdefault")
	p.MustElement(`#new-repos`).MustSelectAllText().MustInput("/")
	p.MustElement(`#new-default`).MustClick()
	waitJS(t, p, `document.querySelector('#new-result').textContent.includes('PATH_OUTSIDE_ROOTS')`)
	if _, _, err := s.store.Get("fromdefault"); err == nil {
		t.Fatal("committed a pipeline reading / ")
	}
	p.MustElement(`#new-repos`).MustSelectAllText().MustInput(filepath.Join(root, "examples", "sample-repo"))
	p.MustElement(`#new-default`).MustClick()
	waitJS(t, p, `location.pathname === '/p/fromdefault' && window.df && df.ready && df.cy.nodes().length === 7`)
	spec, rev, err := s.store.Get("fromdefault")
	if err != nil || rev != 1 || spec.Node("configs") == nil || spec.Node("dataset") == nil {
		t.Fatalf("from default: r%d %v %v", rev, spec, err)
	}

	dir := t.TempDir()
	good := filepath.Join(dir, "Curated Set.yaml")
	yaml := "apiVersion: dialogfarm/v1\nkind: Pipeline\nnodes:\n  - id: recorded\n    op: load_dialogues\n    params: {path: " +
		filepath.Join(root, "sft", "testdata", "dialogues.jsonl") + "}\n  - id: export\n    op: export\n    inputs: {dialogues: recorded}\n"
	bad := filepath.Join(dir, "broken.yaml")
	for f, data := range map[string]string{good: yaml, bad: "apiVersion: dialogfarm/v1\nkind: Pipeline\nnodes:\n  - id: x\n    opp: export\n"} {
		if err := os.WriteFile(f, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	p = s.page("/")
	waitJS(t, p, `document.getElementById('import-file')`)
	p.MustElement(`#import-file`).MustSetFiles(bad)
	waitJS(t, p, `document.getElementById('import-yaml').value.includes('opp')`)
	p.MustElement(`#import`).MustClick()
	waitJS(t, p, `document.querySelector('#new-result').textContent.includes('broken.yaml')`)
	if msg := p.MustElement(`#new-result`).MustText(); !strings.Contains(msg, "line 5") || !strings.Contains(msg, "opp") {
		t.Errorf("malformed import: %q", msg)
	}
	p.MustEval(`() => { document.getElementById('new-name').value = ''; return true }`)
	p.MustElement(`#import-file`).MustSetFiles(good)
	waitJS(t, p, `document.getElementById('new-name').value === 'curated-set'`)
	p.MustElement(`#import`).MustClick()
	waitJS(t, p, `location.pathname === '/p/curated-set' && window.df && df.ready && df.cy.nodes().length === 2 && df.cy.edges().length === 1`)
	if h, _ := s.store.History("curated-set"); len(h) != 1 || h[0].Author != "ui" || !strings.Contains(h[0].Message, "Curated Set.yaml") {
		t.Fatalf("import history: %+v", h)
	}
}

// TestUIYAMLPanel: an edit in the YAML panel commits as one revision; an
// edit made on a revision an agent has since replaced is refused as a
// conflict, the person's text kept, nothing lost on either side.
func TestUIYAMLPanel(t *testing.T) {
	s := newSite(t)
	var res pipeline.ApplyResult
	s.call("apply_mutations", map[string]any{"pipeline": "ui", "base_revision": 0, "mutations": []any{
		map[string]any{"op": "add_node", "node": "recorded", "operator": "load_dialogues", "params": map[string]any{"path": "../sft/testdata/dialogues.jsonl"}},
		map[string]any{"op": "add_node", "node": "export", "operator": "export", "params": map[string]any{"min_score": 3}, "inputs": map[string]any{"dialogues": "recorded"}},
	}}, &res)
	if !res.Committed {
		t.Fatalf("setup: %+v", res)
	}
	p := s.page("/p/ui")
	waitJS(t, p, `window.df && df.ready && df.revision === 1 && document.getElementById('yaml-edit').value.includes('min_score: 3')`)
	edit := func(from, to string) {
		t.Helper()
		p.MustEval(`(a, b) => { const ta = document.getElementById('yaml-edit'); ta.value = ta.value.replace(a, b);
			ta.dispatchEvent(new Event('input')); return true }`, from, to)
	}
	edit("min_score: 3", "min_score: 4")
	p.MustElement(`#yaml-commit`).MustClick()
	waitJS(t, p, `df.revision === 2 && document.getElementById('yaml-state').textContent === 'r2'`)
	spec, _, _ := s.store.Get("ui")
	if spec.Node("export").Params["min_score"] != 4.0 {
		t.Fatalf("after the YAML commit: %+v", spec.Node("export").Params)
	}
	if h, _ := s.store.History("ui"); h[len(h)-1].Author != "ui" {
		t.Fatalf("author %q", h[len(h)-1].Author)
	}

	// The person edits; meanwhile an agent commits r3.
	edit("min_score: 4", "min_score: 5")
	s.call("set_param", map[string]any{"pipeline": "ui", "base_revision": 2, "node": "export", "param": "format", "value": "sharegpt"}, &res)
	if !res.Committed {
		t.Fatalf("agent: %+v", res)
	}
	waitJS(t, p, `df.revision === 3 && document.getElementById('yaml-state').textContent.includes('r3 has been committed since')`)
	if v := p.MustElement(`#yaml-edit`).MustProperty("value").String(); !strings.Contains(v, "min_score: 5") || strings.Contains(v, "sharegpt") {
		t.Fatalf("the live update overwrote the person's text:\n%s", v)
	}
	p.MustElement(`#yaml-commit`).MustClick()
	waitJS(t, p, `document.querySelector('#findings').textContent.includes('CONFLICT')`)
	if msg := p.MustElement(`#findings`).MustText(); !strings.Contains(msg, "r3 by agent:ui-test-agent") {
		t.Errorf("conflict message: %q", msg)
	}
	spec, rev, _ := s.store.Get("ui")
	if rev != 3 || spec.Node("export").Params["format"] != "sharegpt" || spec.Node("export").Params["min_score"] != 4.0 {
		t.Fatalf("the stale YAML changed the pipeline: r%d %+v", rev, spec.Node("export").Params)
	}
	if v := p.MustElement(`#yaml-edit`).MustProperty("value").String(); !strings.Contains(v, "min_score: 5") {
		t.Fatal("the refused text is gone")
	}
	// Malformed YAML is refused with its line.
	edit("kind: Pipeline", "kind: Pipeline\nbogus: [")
	p.MustElement(`#yaml-commit`).MustClick()
	waitJS(t, p, `document.querySelector('#findings').textContent.includes('YAML not committed')`)
	// Discarding reads r3; the next commit is on r3.
	p.MustElement(`#yaml-reset`).MustClick()
	waitJS(t, p, `document.getElementById('yaml-edit').value.includes('sharegpt') && document.getElementById('yaml-state').textContent === 'r3'`)
	edit("min_score: 4", "min_score: 5")
	p.MustElement(`#yaml-commit`).MustClick()
	waitJS(t, p, `df.revision === 4`)
	if spec, _, _ := s.store.Get("ui"); spec.Node("export").Params["min_score"] != 5.0 || spec.Node("export").Params["format"] != "sharegpt" {
		t.Fatalf("r4: %+v", spec.Node("export").Params)
	}
}

// TestUIRunsListedAndKept: the index lists the run folders `dialogfarm
// run` made in the runs folder, with their dashboard; a run started in
// the UI shows cancel while it runs and not once done; after a restart
// of the server its runs are still listed, one that was running marked
// interrupted.
func TestUIRunsListedAndKept(t *testing.T) {
	storeDir, runsDir := filepath.Join(t.TempDir(), "pipelines"), t.TempDir()
	demo := filepath.Join(runsDir, "demo")
	if err := os.MkdirAll(demo, 0o700); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("../sft/testdata/dialogues.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for f, d := range map[string]string{pipeline.ManifestFile: "{}\n", pipeline.DialoguesFile: string(data), pipeline.ReportFile: `{"dimensions":[]}`} {
		if err := os.WriteFile(filepath.Join(demo, f), []byte(d), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	hold := make(chan struct{})
	s := newSiteOpts(t, siteOptions{store: storeDir, runs: runsDir, hold: hold})
	p := s.page("/")
	waitJS(t, p, `document.querySelector('#runs li[data-run=demo][data-status=done]')`)
	p.MustElement(`#runs li[data-run=demo] a`).MustClick()
	waitJS(t, p, `location.pathname === '/runs/demo' && document.querySelector('#dashboard')`)
	if p.MustEval(`() => !!document.getElementById('cancel')`).Bool() {
		t.Error("a run of dialogfarm run shows cancel")
	}

	repo, _ := filepath.Abs("../examples/sample-repo")
	spec := pipeline.DefaultSpec(pipeline.DefaultOptions{Profile: "default", N: 2, Repos: []string{repo}, Export: sft.DefaultOptions()})
	var res pipeline.ApplyResult
	s.call("apply_mutations", map[string]any{"pipeline": "full", "base_revision": 0, "mutations": []any{map[string]any{"op": "replace", "spec": spec}}}, &res)
	var first pipeline.RunInfo
	s.call("run_pipeline", map[string]any{"pipeline": "full"}, &first)
	p = s.page("/runs/" + first.ID)
	waitJS(t, p, `document.getElementById('cancel') && document.querySelector('#dashboard')`)
	close(hold)
	waitJS(t, p, `document.querySelector('#dashboard[data-status=done]') && !document.getElementById('cancel')`)

	// A second run is left running (its drive waits) when the server stops.
	hold2 := make(chan struct{})
	defer close(hold2)
	s2 := newSiteOpts(t, siteOptions{store: storeDir, runs: runsDir, hold: hold2})
	var second pipeline.RunInfo
	s2.call("run_pipeline", map[string]any{"pipeline": "full"}, &second)
	if second.ID == first.ID {
		t.Fatalf("run id %s again", second.ID)
	}

	// A third server over the same folders: both runs are listed.
	s3 := newSiteOpts(t, siteOptions{store: storeDir, runs: runsDir})
	p = s3.page("/")
	waitJS(t, p, `document.querySelector('#runs li[data-run="`+first.ID+`"][data-status=done]') && document.querySelector('#runs li[data-run="`+second.ID+`"][data-status=interrupted]')`)
	p = s3.page("/runs/" + second.ID)
	waitJS(t, p, `document.querySelector('#dashboard')`)
	if p.MustEval(`() => !!document.getElementById('cancel')`).Bool() {
		t.Error("an interrupted run shows cancel")
	}
}
