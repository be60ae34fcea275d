package mcp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap/zaptest"

	"dialogfarm/pipeline"
)

var testEnv = pipeline.Env{Endpoints: []string{"judge"}, Plugins: []string{"askplugin"}}

// fixture is a store and runs behind an MCP server, with clients
// connected over in-memory transports.
type fixture struct {
	t     *testing.T
	ctx   context.Context
	store *pipeline.Store
	runs  *pipeline.Runs
	srv   *Server
	out   string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	return newFixtureWith(t, filepath.Join(t.TempDir(), "pipelines"), testEnv)
}

// newFixtureWith opens the store in dir; the store and the runs check
// pipelines against env.
func newFixtureWith(t *testing.T, dir string, env pipeline.Env) *fixture {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	log := zaptest.NewLogger(t)
	reg := pipeline.NewRegistry()
	store, err := pipeline.OpenStore(dir, reg, env)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "runs")
	runs := pipeline.NewRuns(ctx, out, reg, func(dir string) (pipeline.RunEnv, func(), error) {
		return pipeline.RunEnv{Out: dir, Log: log, Validate: env}, func() {}, nil
	}, log)
	srv := New(store, runs, log)
	stop := srv.Forward(ctx)
	t.Cleanup(func() { stop(); cancel(); runs.Wait() })
	return &fixture{t: t, ctx: ctx, store: store, runs: runs, srv: srv, out: out}
}

// agent is one connected MCP client.
type agent struct {
	f       *fixture
	cs      *sdk.ClientSession
	updates chan string
}

func (f *fixture) connect(name string) *agent {
	f.t.Helper()
	a := &agent{f: f, updates: make(chan string, 64)}
	client := sdk.NewClient(&sdk.Implementation{Name: name, Version: "1"}, &sdk.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *sdk.ResourceUpdatedNotificationRequest) {
			select {
			case a.updates <- req.Params.URI:
			default:
			}
		},
	})
	ct, st := sdk.NewInMemoryTransports()
	ss, err := f.srv.SDK().Connect(f.ctx, st, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { ss.Close() })
	cs, err := client.Connect(f.ctx, ct, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { cs.Close() })
	a.cs = cs
	return a
}

// call calls a tool and decodes its structured result into out.
func (a *agent) call(tool string, args map[string]any, out any) *sdk.CallToolResult {
	a.f.t.Helper()
	res, err := a.cs.CallTool(a.f.ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		a.f.t.Fatalf("%s: %v", tool, err)
	}
	if out != nil && res.StructuredContent != nil {
		data, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(data, out); err != nil {
			a.f.t.Fatalf("%s: decode %s: %v", tool, data, err)
		}
	}
	return res
}

func text(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

var didYouMean = regexp.MustCompile(`did you mean ([\w.-]+)`)
var connectTo = regexp.MustCompile(`connect it to ([\w.-]+)`)

// suggested returns the first name a finding's suggestion proposes.
func suggested(fs []pipeline.Finding, code string) string {
	for _, f := range fs {
		if f.Code != code {
			continue
		}
		if m := didYouMean.FindStringSubmatch(f.Suggestion); m != nil {
			return m[1]
		}
		if m := connectTo.FindStringSubmatch(f.Suggestion); m != nil {
			return m[1]
		}
	}
	return ""
}

// TestScriptedAgent builds a pipeline from scratch over MCP, making each
// kind of mistake (made-up operator, wrong port, wrong port type, cycle,
// stale revision) and repairing it from the findings' suggestions alone,
// then validates and runs it.
func TestScriptedAgent(t *testing.T) {
	f := newFixture(t)
	ag := f.connect("scripted-agent")
	person := f.connect("person")
	if err := ag.cs.Subscribe(f.ctx, &sdk.SubscribeParams{URI: "dialogfarm://pipelines/curate"}); err != nil {
		t.Fatal(err)
	}
	var ops listOperatorsOut
	ag.call("list_operators", map[string]any{"category": "data"}, &ops)
	if len(ops.Operators) < 5 {
		t.Fatalf("data operators: %+v", ops.Operators)
	}
	rev := 0
	var res pipeline.ApplyResult
	mistakes, detected, repaired := 0, 0, 0
	commit := func(tool string, args map[string]any) pipeline.ApplyResult {
		t.Helper()
		args["pipeline"], args["base_revision"] = "curate", rev
		var r pipeline.ApplyResult
		out := ag.call(tool, args, &r)
		if r.Committed {
			rev = r.Revision
		} else if !out.IsError {
			t.Fatalf("%s: rejected without IsError: %s", tool, text(out))
		}
		return r
	}
	// Made-up operator.
	mistakes++
	res = commit("add_node", map[string]any{"node": "recorded", "operator": "load_dialogs", "params": map[string]any{"path": "../sft/testdata/dialogues.jsonl"}})
	fix := suggested(res.Findings, pipeline.CodeUnknownOperator)
	if !res.Committed && fix != "" {
		detected++
	}
	res = commit("add_node", map[string]any{"node": "recorded", "operator": fix, "params": map[string]any{"path": "../sft/testdata/dialogues.jsonl"}})
	if res.Committed {
		repaired++
	}
	res = commit("add_node", map[string]any{"node": "best", "operator": "filter_score", "params": map[string]any{"min": 4}, "inputs": map[string]any{"dialogues": "recorded"}})
	if !res.Committed {
		t.Fatalf("filter_score: %+v", res.Findings)
	}
	// Wrong port name.
	mistakes++
	res = commit("add_node", map[string]any{"node": "sft", "operator": "export", "inputs": map[string]any{"dialogs": "best"}})
	fix = suggested(res.Findings, pipeline.CodeUnknownPort)
	if !res.Committed && fix == "dialogues" {
		detected++
	}
	res = commit("add_node", map[string]any{"node": "sft", "operator": "export", "inputs": map[string]any{fix: "best"}})
	if res.Committed {
		repaired++
	}
	// Wrong port type: a report reading dialogues where it wants configs.
	res = commit("add_node", map[string]any{"node": "profile", "operator": "profile", "params": map[string]any{"name": "default"}})
	if !res.Committed {
		t.Fatalf("profile: %+v", res.Findings)
	}
	mistakes++
	res = commit("apply_mutations", map[string]any{"mutations": []any{
		map[string]any{"op": "add_node", "node": "cfg", "operator": "load_configs", "params": map[string]any{"path": "../examples/demo-configs.jsonl"}},
		map[string]any{"op": "add_node", "node": "fidelity", "operator": "report", "inputs": map[string]any{"profile": "profile", "configs": "best", "dialogues": "best"}},
	}, "message": "add a report"})
	fix = suggested(res.Findings, pipeline.CodeTypeMismatch)
	if !res.Committed && fix == "cfg" {
		detected++
	}
	res = commit("apply_mutations", map[string]any{"mutations": []any{
		map[string]any{"op": "add_node", "node": "cfg", "operator": "load_configs", "params": map[string]any{"path": "../examples/demo-configs.jsonl"}},
		map[string]any{"op": "add_node", "node": "fidelity", "operator": "report", "inputs": map[string]any{"profile": "profile", "configs": fix, "dialogues": "best"}},
	}, "message": "add a report"})
	if res.Committed {
		repaired++
	}
	// Cycle: feed the export's input back through a merge.
	mistakes++
	res = commit("apply_mutations", map[string]any{"mutations": []any{
		map[string]any{"op": "add_node", "node": "both", "operator": "merge", "inputs": map[string]any{"a": "recorded", "b": "best"}},
		map[string]any{"op": "connect", "node": "best", "port": "dialogues", "from": "both"},
	}})
	var cyc *pipeline.Finding
	for i := range res.Findings {
		if res.Findings[i].Code == pipeline.CodeDuplicateProd {
			// the connect needs replace: do what the suggestion says
			res = commit("apply_mutations", map[string]any{"mutations": []any{
				map[string]any{"op": "add_node", "node": "both", "operator": "merge", "inputs": map[string]any{"a": "recorded", "b": "best"}},
				map[string]any{"op": "connect", "node": "best", "port": "dialogues", "from": "both", "replace": true},
			}})
			break
		}
	}
	for i := range res.Findings {
		if res.Findings[i].Code == pipeline.CodeCycle {
			cyc = &res.Findings[i]
		}
	}
	if !res.Committed && cyc != nil && strings.Contains(cyc.Message, "best → both → best") {
		detected++
	}
	// The suggestion names the input that closes the cycle: leave it out.
	if cyc != nil && strings.Contains(cyc.Suggestion, "remove the input of both that reads best") {
		res = commit("add_node", map[string]any{"node": "both", "operator": "merge", "inputs": map[string]any{"a": "recorded", "b": "recorded"}})
		if res.Committed {
			repaired++
		}
	}
	res = commit("remove_node", map[string]any{"node": "both"})
	if !res.Committed {
		t.Fatalf("remove both: %+v", res.Findings)
	}
	// Stale revision: the person commits in between.
	var got pipelineOut
	person.call("get_pipeline", map[string]any{"pipeline": "curate"}, &got)
	var pr pipeline.ApplyResult
	person.call("set_param", map[string]any{"pipeline": "curate", "base_revision": got.Revision, "node": "best", "param": "min", "value": 5}, &pr)
	if !pr.Committed {
		t.Fatalf("person's edit: %+v", pr)
	}
	mistakes++
	res = commit("set_param", map[string]any{"node": "sft", "param": "format", "value": "sharegpt"})
	if !res.Committed && res.Conflict != nil && strings.Contains(res.Conflict.Message, "agent:person") && strings.Contains(res.Conflict.Message, "best") {
		detected++
	}
	ag.call("get_pipeline", map[string]any{"pipeline": "curate"}, &got)
	rev = got.Revision
	res = commit("set_param", map[string]any{"node": "sft", "param": "format", "value": "sharegpt"})
	if res.Committed {
		repaired++
	}
	t.Logf("agent mistakes %d, detected %d, repaired from the suggestions %d", mistakes, detected, repaired)
	if detected != mistakes || repaired != mistakes {
		t.Fatalf("detected %d and repaired %d of %d mistakes", detected, repaired, mistakes)
	}
	// Both edits are in the pipeline; it validates; history names both.
	ag.call("get_pipeline", map[string]any{"pipeline": "curate"}, &got)
	if got.Spec.Node("best").Params["min"] != 5.0 || got.Spec.Node("sft").Params["format"] != "sharegpt" {
		t.Fatalf("lost an edit: %s", got.YAML)
	}
	var v validateOut
	ag.call("validate", map[string]any{"pipeline": "curate"}, &v)
	if !v.Valid {
		t.Fatalf("final pipeline invalid: %+v", v.Findings)
	}
	// The subscription heard about the commits.
	select {
	case uri := <-ag.updates:
		if uri != "dialogfarm://pipelines/curate" {
			t.Fatalf("update for %s", uri)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no resource update notification")
	}
	// Dry run, then a real run to the end.
	var info pipeline.RunInfo
	ag.call("run_pipeline", map[string]any{"pipeline": "curate", "dry_run": true}, &info)
	if info.Status != pipeline.RunDryRun || len(info.Order) != len(got.Spec.Nodes) {
		t.Fatalf("dry run: %+v", info)
	}
	ag.call("run_pipeline", map[string]any{"pipeline": "curate"}, &info)
	id := info.ID
	deadline := time.Now().Add(time.Minute)
	for info.Status == pipeline.RunRunning && time.Now().Before(deadline) {
		select {
		case <-ag.updates:
		case <-time.After(100 * time.Millisecond):
		}
		ag.call("get_run_status", map[string]any{"run_id": id}, &info)
	}
	if info.Status != pipeline.RunDone {
		t.Fatalf("run: %+v", info)
	}
	data, err := os.ReadFile(filepath.Join(info.Out, "nodes", "sft", "sft.jsonl"))
	if err != nil || len(data) == 0 {
		t.Fatalf("run wrote no SFT: %v", err)
	}
	// The pipeline resource is the YAML.
	rr, err := ag.cs.ReadResource(f.ctx, &sdk.ReadResourceParams{URI: "dialogfarm://pipelines/curate"})
	if err != nil || !strings.Contains(rr.Contents[0].Text, "op: filter_score") {
		t.Fatalf("pipeline resource: %v %+v", err, rr)
	}
	rr, err = ag.cs.ReadResource(f.ctx, &sdk.ReadResourceParams{URI: "dialogfarm://skills/build-pipeline"})
	if err != nil || !strings.Contains(rr.Contents[0].Text, "base_revision") {
		t.Fatalf("skill resource: %v", err)
	}
}

func TestDescribeUnknownOperator(t *testing.T) {
	f := newFixture(t)
	ag := f.connect("a")
	res := ag.call("describe_operator", map[string]any{"name": "exprt"}, nil)
	if !res.IsError || !strings.Contains(text(res), "did you mean export") {
		t.Fatalf("describe unknown: %s", text(res))
	}
	var d operatorDetail
	ag.call("describe_operator", map[string]any{"name": "split"}, &d)
	if len(d.Outputs) != 2 || d.ParamSchema == nil {
		t.Fatalf("describe split: %+v", d)
	}
}

// TestToolsConfineHostPaths: with data roots set, validate, add_node and
// apply_mutations report a path outside them as PATH_OUTSIDE_ROOTS (node,
// param, suggestion) and commit nothing; a pipeline committed before the
// roots were set (replayed from its journal) does not run.
func TestToolsConfineHostPaths(t *testing.T) {
	outside, err := filepath.Abs("../sft/testdata/dialogues.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "pipelines")
	old := newFixtureWith(t, dir, testEnv) // no roots
	var res pipeline.ApplyResult
	old.connect("a").call("add_node", map[string]any{"pipeline": "p", "base_revision": 0, "node": "recorded", "operator": "load_dialogues",
		"params": map[string]any{"path": outside}}, &res)
	if !res.Committed {
		t.Fatalf("without roots: %+v", res)
	}

	env := testEnv
	env.Roots = []string{t.TempDir()}
	f := newFixtureWith(t, dir, env)
	ag := f.connect("b")
	isOutside := func(fs []pipeline.Finding) bool {
		for _, fd := range fs {
			if fd.Code == pipeline.CodeOutsideRoots && fd.Node == "recorded" && fd.Param == "path" && strings.Contains(fd.Suggestion, "--data-root") {
				return true
			}
		}
		return false
	}
	var v validateOut
	ag.call("validate", map[string]any{"yaml": "apiVersion: dialogfarm/v1\nkind: Pipeline\nnodes:\n  - id: recorded\n    op: load_dialogues\n    params: {path: " + outside + "}\n"}, &v)
	if v.Valid || !isOutside(v.Findings) {
		t.Fatalf("validate yaml: %+v", v)
	}
	ag.call("validate", map[string]any{"pipeline": "p"}, &v)
	if v.Valid || !isOutside(v.Findings) {
		t.Fatalf("validate stored: %+v", v)
	}
	r := ag.call("add_node", map[string]any{"pipeline": "q", "base_revision": 0, "node": "recorded", "operator": "load_dialogues",
		"params": map[string]any{"path": outside}}, &res)
	if res.Committed || !isOutside(res.Findings) || !r.IsError || !strings.Contains(text(r), "PATH_OUTSIDE_ROOTS") {
		t.Fatalf("add_node outside the roots: %+v", res)
	}
	var info pipeline.RunInfo
	ag.call("run_pipeline", map[string]any{"pipeline": "p"}, &info)
	if info.Status != pipeline.RunFailed || !isOutside(info.Findings) {
		t.Fatalf("run of a pipeline reading outside the roots: %+v", info)
	}
}
