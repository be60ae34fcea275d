package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"dialogfarm/analyst"
	"dialogfarm/configgen"
	"dialogfarm/dataset"
	"dialogfarm/dialog"
	"dialogfarm/profiles"
	"dialogfarm/sft"
)

func sampleRepo(tb testing.TB) string {
	tb.Helper()
	p, err := filepath.Abs("../examples/sample-repo")
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// recordedDialogues makes the dialogues a drive would record for configs:
// one turn each, a plugin-shaped request, one candidate judged score (5
// for every other config, 3 for the rest). All are ok: a failed config
// would be driven again.
func recordedDialogues(tb testing.TB, configs []dialog.ChatConfig) []dialog.Dialogue {
	tb.Helper()
	var out []dialog.Dialogue
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i, c := range configs {
		d := dialog.Dialogue{ConfigID: c.ID, Status: dialog.StatusOK, Config: c, Session: "s1", StartedAt: start, Seconds: 3}
		q := "explain this code"
		if len(c.Turns) > 0 {
			q = c.Turns[0].Query
		}
		body, _ := json.Marshal(map[string]any{"model": "ask", "stream": true, "messages": []dialog.Message{
			{Role: "system", Content: "You are Ask."}, {Role: "user", Content: q}}})
		answer := fmt.Sprintf("Answer %d: it reads the file.", i)
		score := 5.0
		if i%2 == 1 {
			score = 3
		}
		d.Turns = []dialog.Turn{{Query: q, Shown: answer, Exchange: dialog.Exchange{
			Session: "s1", Seq: i + 1, Request: body, Answer: answer, Responder: "pool", Model: "m",
			Candidates: []dialog.Candidate{{Member: "a", Model: "m", Text: answer, PromptTokens: 10, CompletionTokens: 5, CostUSD: 0.001}},
			Verdicts:   []dialog.Verdict{{Candidate: 0, LLMScore: int(score), Score: score, Rank: 1}},
			Received:   start, Seconds: 1,
		}}}
		out = append(out, d)
	}
	return out
}

// TestRunDefault runs the default pipeline, as `run` does, into a run
// folder holding recorded dialogues (so the drive node starts no editor:
// every config is recorded), checks the files and results it writes, that
// a second run reuses every node, that editing a node's params runs it and
// what depends on it again, and that other arguments on the folder are
// refused.
func TestRunDefault(t *testing.T) {
	ctx := context.Background()
	log := zaptest.NewLogger(t)
	repo := sampleRepo(t)
	seed := int64(7)
	const n = 8
	prof, err := profiles.Load("default")
	if err != nil {
		t.Fatal(err)
	}
	export := sft.DefaultOptions()

	// The configs the plan makes, to record dialogues for.
	pl, err := analyst.MakePlan(prof, analyst.PlanConfig{N: n, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	cc := configgen.DefaultConfig()
	cc.Repos, cc.Seed = []string{repo}, seed
	gen, err := configgen.Generate(ctx, pl, cc, log)
	if err != nil {
		t.Fatal(err)
	}
	ds := recordedDialogues(t, gen.Configs)

	runB := t.TempDir()
	if err := writeDialogues(filepath.Join(runB, DialoguesFile), ds); err != nil {
		t.Fatal(err)
	}
	var tableB bytes.Buffer
	dsOpt := dataset.DefaultOptions()
	dsOpt.Name, dsOpt.Split = "demo-set", 0.5
	o := DefaultOptions{Profile: "default", N: n, Seed: &seed, Repos: []string{repo}, Export: export, Dataset: dsOpt}
	states, err := RunDefault(ctx, o, RunEnv{Out: runB, Table: &tableB, Log: log})
	if err != nil {
		t.Fatalf("RunDefault: %v", err)
	}
	if len(states) != 7 {
		t.Fatalf("ran %d nodes, want 7", len(states))
	}
	for _, f := range []string{ManifestFile, PlanFile, ConfigsFile, DialoguesFile, SFTFile, sft.SidecarPath(SFTFile), ReportFile,
		"report.html", filepath.Join(DatasetDir, "train.jsonl"), filepath.Join(DatasetDir, "validation.jsonl"), filepath.Join(DatasetDir, "README.md")} {
		if _, err := os.Stat(filepath.Join(runB, f)); err != nil {
			t.Errorf("the default pipeline did not write %s", f)
		}
	}
	// The plan and configs are those of the plan and seed asked for.
	gotPlan, err := profiles.ReadPlan(filepath.Join(runB, PlanFile))
	if err != nil || gotPlan.ID != pl.ID {
		t.Errorf("plan %v, err %v; want the plan of n %d seed %d (%s)", gotPlan, err, n, seed, pl.ID)
	}
	configs, err := readConfigsFile(filepath.Join(runB, ConfigsFile))
	if err != nil || len(configs) != n {
		t.Errorf("%d configs, err %v", len(configs), err)
	}
	if tableB.Len() == 0 {
		t.Error("no report table printed")
	}
	res, err := ResultOf(states)
	if err != nil {
		t.Fatal(err)
	}
	// Split 0.5 by a hash of each id: these 4 ids give 1 train, 3 validation.
	if res.Drive.Skipped != n || res.Drive.OK != 0 || res.Export.Records != n/2 || res.Dataset.Records != n/2 ||
		res.Dataset.Splits[dataset.SplitValidation] != 3 || res.Dataset.Splits[dataset.SplitTrain] != 1 {
		t.Errorf("results: drive %+v, export %d records, dataset %d records %v", res.Drive, res.Export.Records, res.Dataset.Records, res.Dataset.Splits)
	}
	card, _ := os.ReadFile(filepath.Join(runB, DatasetDir, "README.md"))
	if !bytes.Contains(card, []byte("demo-set")) {
		t.Errorf("the dataset options did not reach the dataset node: card %.300s", card)
	}
	sftData, _ := os.ReadFile(filepath.Join(runB, SFTFile))
	if got := bytes.Count(sftData, []byte("\n")); got != n/2 {
		t.Errorf("sft records %d, want %d (the 5-point dialogues)", got, n/2)
	}
	spec := DefaultSpec(o)

	// Other arguments on the folder are refused, not mixed in.
	other := o
	other.N = n + 1
	if _, err := RunDefault(ctx, other, RunEnv{Out: runB, Log: log}); !errors.Is(err, ErrOtherRun) {
		t.Errorf("another n on the run folder: err = %v, want ErrOtherRun", err)
	}

	// A second run reuses every node, with its results.
	var statuses []string
	states, err = RunDefault(ctx, o, RunEnv{Out: runB, Log: log, OnNode: func(s NodeState) {
		if s.Status == NodeCached || s.Status == NodeDone {
			statuses = append(statuses, s.ID+"="+s.Status)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"profile=cached", "plan=cached", "configs=cached", "drive=done", "export=cached", "report=cached", "dataset=cached"}
	if !slices.Equal(statuses, want) {
		t.Errorf("second run: %v, want %v", statuses, want)
	}
	if again, _ := ResultOf(states); again.Export.Records != n/2 || again.Dataset.Records != n/2 {
		t.Errorf("cached nodes lost their results: %+v", again)
	}

	// Edit the export's min_score: only export and report run again (the
	// dataset node has its own min_score), and
	// the old sft.jsonl is kept under nodes/stale.
	spec.Node("export").Params["min_score"] = 3.0
	spec.Node("report").Params["min_score"] = 3.0
	statuses = nil
	_, err = RunSpec(ctx, spec, NewRegistry(), RunEnv{Out: runB, Log: log, OnNode: func(s NodeState) {
		if s.Status == NodeCached || s.Status == NodeDone {
			statuses = append(statuses, s.ID+"="+s.Status)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"profile=cached", "plan=cached", "configs=cached", "drive=done", "export=done", "report=done", "dataset=cached"}
	if !slices.Equal(statuses, want) {
		t.Errorf("after editing export: %v, want %v", statuses, want)
	}
	sftData, _ = os.ReadFile(filepath.Join(runB, SFTFile))
	if got := bytes.Count(sftData, []byte("\n")); got != n {
		t.Errorf("sft records with min_score 3: %d, want %d", got, n)
	}
	stale, _ := filepath.Glob(filepath.Join(runB, "nodes", "stale", "export-*", SFTFile))
	if len(stale) != 1 {
		t.Errorf("old sft.jsonl not kept under nodes/stale: %v", stale)
	}
}

func TestParseSpecErrorsNameFileAndLine(t *testing.T) {
	_, err := ParseSpec("p.yaml", []byte("apiVersion: dialogfarm/v1\nkind: Pipeline\nnodes:\n  - id: a\n    op: plan\n    parms: {n: 1}\n"))
	if err == nil || !strings.Contains(err.Error(), "p.yaml") || !strings.Contains(err.Error(), "line 6") {
		t.Fatalf("unknown key: %v", err)
	}
	s, err := ParseSpec("p.yaml", []byte("apiVersion: dialogfarm/v1\nkind: Pipeline\nnodes:\n  - id: a\n    op: export\n    inputs:\n      dialogues: x\n      dialogues: y\n"))
	if err != nil {
		t.Fatal(err)
	}
	fs := Validate(s, NewRegistry(), Env{})
	if !hasCode(fs, CodeDuplicateProd, "a") || fs[0].Line == 0 {
		t.Fatalf("repeated input: %v", fs)
	}
}

func hasCode(fs []Finding, code, node string) bool {
	return slices.ContainsFunc(fs, func(f Finding) bool { return f.Code == code && (node == "" || f.Node == node) })
}

func TestDedupExactAndNear(t *testing.T) {
	mk := func(id, q string) dialog.Dialogue {
		return dialog.Dialogue{ConfigID: id, Status: dialog.StatusOK, Turns: []dialog.Turn{{Query: q, Exchange: dialog.Exchange{Answer: "a"}}}}
	}
	ds := []dialog.Dialogue{
		mk("a", "Why does the parser drop the last token when the input ends without a newline?"),
		mk("b", "why does the parser DROP the last token, when the input ends without a newline"),   // exact after normalising
		mk("c", "Why does the parser drop the last token when the input ends without any newline?"), // near
		mk("d", "Explain the retry loop in the HTTP client"),
	}
	run := func(near float64) []string {
		dir := t.TempDir()
		in, out := filepath.Join(dir, "in.jsonl"), filepath.Join(dir, "out.jsonl")
		if err := writeDialogues(in, ds); err != nil {
			t.Fatal(err)
		}
		x := &nodeRun{node: &Node{ID: "d"}, params: map[string]any{"key": "query", "near": near},
			in: map[string]Value{"dialogues": {Path: in}}, out: map[string]Value{"dialogues": {Path: out}}}
		if err := runDedup(context.Background(), x); err != nil {
			t.Fatal(err)
		}
		got, err := readDialogues(out)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, d := range got {
			ids = append(ids, d.ConfigID)
		}
		return ids
	}
	if got := run(0); !slices.Equal(got, []string{"a", "c", "d"}) {
		t.Errorf("exact: %v", got)
	}
	if got := run(0.8); !slices.Equal(got, []string{"a", "d"}) {
		t.Errorf("near 0.8: %v", got)
	}
}
