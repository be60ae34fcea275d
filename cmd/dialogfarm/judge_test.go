package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"dialogfarm/dialog"
	"dialogfarm/dialog/vocab"
	"dialogfarm/internal/llmtest"
	"dialogfarm/judge"
)

// runPoolCLI runs the dialogfarm command line and returns its stdout.
func runPoolCLI(tb testing.TB, args ...string) (string, error) {
	tb.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, &out, &errOut)
	return out.String(), err
}

// fixtureDialogues copies the sft package's recorded-dialogue fixture into
// a fresh run folder.
func fixtureDialogues(tb testing.TB) string {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "sft", "testdata", "dialogues.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(tb.TempDir(), "dialogues.jsonl")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

func TestJudgeCommandWithModelAndCache(t *testing.T) {
	judgeSrv := llmtest.New(t, func(r llmtest.Request) llmtest.Reply {
		if strings.Contains(r.LastUser(), "rival answer") {
			return llmtest.Reply{Text: `{"score": 2, "reason": "rival"}`}
		}
		return llmtest.Reply{Text: "```json\n{\"score\": 5, \"reason\": \"shown\"}\n```"}
	})
	cfg := writePoolYAML(t, "judge:\n  endpoint: {base_url: \""+judgeSrv.URL+"\", model: judge-9}\n")
	in := fixtureDialogues(t)
	dir := filepath.Dir(in)
	judged, scores := filepath.Join(dir, "judged.jsonl"), filepath.Join(dir, "scores.jsonl")
	args := []string{"judge", "--config", cfg, "--in", in, "--out", judged, "--scores", scores}
	out, err := runPoolCLI(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	calls := len(judgeSrv.Requests())
	// 13 turns have candidates (the offline one has none), 2 candidates each.
	if calls != 26 || !strings.Contains(out, "judged 13 turns of 11 dialogues (judge model judge-9)") {
		t.Fatalf("%d judge calls; output:\n%s", calls, out)
	}
	first, _ := os.ReadFile(judged)
	if _, err := runPoolCLI(t, args...); err != nil {
		t.Fatal(err)
	}
	second, _ := os.ReadFile(judged)
	if len(judgeSrv.Requests()) != calls || !bytes.Equal(first, second) {
		t.Errorf("re-run made %d new judge calls (want 0, cached) or changed the output", len(judgeSrv.Requests())-calls)
	}
	if _, err := os.Stat(filepath.Join(dir, "cache")); err != nil {
		t.Errorf("no judge cache in the input's folder: %v", err)
	}
	for _, d := range readTestDialogues(t, judged) {
		for i, tr := range d.Turns {
			for _, v := range tr.Verdicts {
				if v.JudgeModel != "judge-9" || v.RulesOnly {
					t.Errorf("%s turn %d: verdict %+v not from the judge model", d.ConfigID, i+1, v)
				}
			}
		}
	}
	lines := strings.Split(strings.TrimSpace(string(readTestFile(t, scores))), "\n")
	var s judge.Scored
	if len(lines) != 13 || json.Unmarshal([]byte(lines[0]), &s) != nil || s.ID != "d06-dup#1" || s.Intent != "explain" || s.Language != "go" {
		t.Errorf("scores: %d lines, first %+v", len(lines), s)
	}

	// The re-judged file exports. The judge model gave every shown answer
	// 5, but the rules still deduct: d03's "Use int64." (a fix without code,
	// near-empty) and d01's third turn stay out.
	sft := filepath.Join(dir, "sft.jsonl")
	out, err = runPoolCLI(t, "export", "--in", judged, "--out", sft, "--meta", "none")
	if err != nil || !strings.Contains(out, "wrote 5 records (6 turns)") || strings.Contains(string(readTestFile(t, sft)), "Use int64.") {
		t.Errorf("export of judged dialogues: %v\n%s", err, out)
	}
}

func TestJudgeCommandRulesOnly(t *testing.T) {
	in := fixtureDialogues(t)
	judged := filepath.Join(filepath.Dir(in), "judged.jsonl")
	cfg := writePoolYAML(t, "judge:\n  endpoint: {base_url: \"http://127.0.0.1:1/v1\", model: never-called}\n")
	out, err := runPoolCLI(t, "judge", "--config", cfg, "--rules-only", "--in", in, "--out", judged)
	if err != nil || !strings.Contains(out, "(rules-only)") {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, d := range readTestDialogues(t, judged) {
		for _, tr := range d.Turns {
			for _, v := range tr.Verdicts {
				if !v.RulesOnly || !strings.Contains(v.LLMReason, "rules-only") {
					t.Errorf("%s: verdict does not say rules-only: %+v", d.ConfigID, v)
				}
			}
		}
	}
}

func TestJudgeEvalCommand(t *testing.T) {
	dir := t.TempDir()
	judged := filepath.Join(dir, "judged.jsonl")
	labels := filepath.Join(dir, "labels.jsonl")
	// The worked example of judge.TestEvaluateByHand: kappa 2/3, accuracy5 1/3.
	noTestErr(t, os.WriteFile(judged, []byte(`{"id":"a","score":5,"intent":"explain","language":"go","locale":"en"}
{"id":"b","score":5,"intent":"explain","language":"go","locale":"zh"}
{"id":"c","score":4,"intent":"fix","language":"python","locale":"en"}
{"id":"d","score":3,"intent":"fix","language":"python","locale":"en"}
{"id":"e","score":5,"intent":"tests","language":"go","locale":"en"}
{"id":"f","score":2,"intent":"tests","language":"go","locale":"zh"}
{"id":"g","score":4}
`), 0o644))
	noTestErr(t, os.WriteFile(labels, []byte(`{"id":"a","score":5}
{"id":"b","score":4}
{"id":"c","score":4}
{"id":"d","score":3}
{"id":"e","score":3}
{"id":"f","score":2}
{"id":"h","score":1}
`), 0o644))
	out, err := runPoolCLI(t, "judge-eval", "--judged", judged, "--labels", labels)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"overall", "1/3=0.333", "4/6=0.667", "intent=fix", "language=python", "locale=zh",
		"ids only in the judged file: 1 (g)", "ids only in the labels file: 1 (h)", "2000 resamples, seed 1"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	out, err = runPoolCLI(t, "judge-eval", "--judged", judged, "--labels", labels, "--json", "--resamples", "1000", "--seed", "9")
	var rep judge.Report
	if err != nil || json.Unmarshal([]byte(out), &rep) != nil || rep.Overall.Kappa == nil || rep.Resamples != 1000 || rep.Seed != 9 {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if k := *rep.Overall.Kappa; k < 0.6666 || k > 0.6667 {
		t.Errorf("kappa %v, want 2/3", k)
	}
	if _, err := runPoolCLI(t, "judge-eval", "--judged", judged, "--labels", labels, "--resamples", "10"); err == nil {
		t.Error("10 resamples accepted")
	}
}

func TestExportCommand(t *testing.T) {
	in := fixtureDialogues(t)
	out := filepath.Join(filepath.Dir(in), "sft.jsonl")
	args := []string{"export", "--in", in, "--out", out, "--format", "sharegpt", "--meta", "sidecar"}
	text, err := runPoolCLI(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"read 11 dialogues; wrote 5 records (6 turns)", "sft.meta.jsonl", "skipped 1: offline", "skipped 2: below_min_score", "cut short 1"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	a, b := readTestFile(t, out), readTestFile(t, filepath.Join(filepath.Dir(in), "sft.meta.jsonl"))
	if _, err := runPoolCLI(t, args...); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, readTestFile(t, out)) || !bytes.Equal(b, readTestFile(t, filepath.Join(filepath.Dir(in), "sft.meta.jsonl"))) {
		t.Error("a second export is not byte-identical")
	}
	if _, err := runPoolCLI(t, "export", "--in", in, "--out", out, "--format", "alpaca"); err == nil || !strings.Contains(err.Error(), "alpaca") {
		t.Errorf("bad format: %v", err)
	}
}

func readTestDialogues(tb testing.TB, path string) []dialog.Dialogue {
	tb.Helper()
	ds, _, err := readDialogues(path)
	if err != nil {
		tb.Fatal(err)
	}
	return ds
}

func readTestFile(tb testing.TB, path string) []byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func noTestErr(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

// judge reads each recorded request the way its plugin writes messages:
// a Quill dialogue needs Quill's adapter, whose format says the code its
// Explain This command sends is not the developer's words.
func TestJudgeCommandReadsByThePluginsAdapter(t *testing.T) {
	dir := t.TempDir()
	code := "func Div(a, b int) int {\n\t// 修复: crashes with an error when b is 0, fix it\n\treturn a / b\n}"
	req, err := json.Marshal(map[string]any{"model": "quill-model", "stream": true, "messages": []any{
		map[string]any{"role": "system", "content": []map[string]string{{"type": "text", "text": "You are Quill, a concise coding assistant."}}},
		map[string]any{"role": "user", "content": []map[string]string{{"type": "text", "text": "Explain this code from calc/div.go:\n\n" + code}}},
	}})
	noTestErr(t, err)
	answer := "It divides a by b with integer division; a zero b panics."
	d := dialog.Dialogue{ConfigID: "q1", Status: dialog.StatusOK, Config: dialog.ChatConfig{ID: "q1", Plugin: "quill"},
		Turns: []dialog.Turn{{Exchange: dialog.Exchange{Request: req, Answer: answer,
			Candidates: []dialog.Candidate{{Member: "a", Text: answer}}}}}}
	line, err := json.Marshal(d)
	noTestErr(t, err)
	in, judged, scores := filepath.Join(dir, "d.jsonl"), filepath.Join(dir, "j.jsonl"), filepath.Join(dir, "s.jsonl")
	noTestErr(t, os.WriteFile(in, append(line, '\n'), 0o644))
	cfg := writePoolYAML(t, "")
	args := []string{"judge", "--config", cfg, "--rules-only", "--in", in, "--out", judged, "--scores", scores}

	if _, err := runPoolCLI(t, args...); err == nil || !strings.Contains(err.Error(), `dialogue q1 was driven with plugin "quill", which no --adapter names`) {
		t.Fatalf("without quill's adapter: %v", err)
	}
	quill := filepath.Join("..", "..", "internal", "testdata", "quill", "adapter.yaml")
	if out, err := runPoolCLI(t, append(args, "--adapter", "ask", "--adapter", quill)...); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var s judge.Scored
	noTestErr(t, json.Unmarshal(readTestFile(t, scores), &s))
	// Read as the developer's words, the code would make it a Chinese fix.
	if s.ID != "q1#1" || s.Intent != vocab.IntentExplain || s.Locale != "en" || s.Score != 5 {
		t.Errorf("scores line %+v; want explain, en, 5", s)
	}
}

// judge-eval RUN scores the run's turns as judge --scores would and pairs
// them with labels keyed "<config id>#<turn>".
func TestJudgeEvalOfRun(t *testing.T) {
	in := fixtureDialogues(t)
	scores := filepath.Join(filepath.Dir(in), "scores.jsonl")
	if _, err := runPoolCLI(t, "judge", "--rules-only", in, "--out", filepath.Join(filepath.Dir(in), "judged.jsonl"), "--scores", scores); err != nil {
		t.Fatal(err)
	}
	var want []judge.Scored
	for _, line := range strings.Split(strings.TrimSpace(string(readTestFile(t, scores))), "\n") {
		var s judge.Scored
		noTestErr(t, json.Unmarshal([]byte(line), &s))
		want = append(want, s)
	}
	// Labels: every turn the judge scored, at the judge's own score,
	// but the first one, which a human scored 1, and one id of no turn.
	var labels bytes.Buffer
	scored, seen := 0, map[string]bool{}
	for _, s := range want {
		if s.Score < 1 || s.Score > 5 || seen[s.ID] { // the fixture repeats an id
			continue
		}
		seen[s.ID] = true
		score := s.Score
		if scored == 0 {
			score = 1
		}
		scored++
		fmt.Fprintf(&labels, "{\"id\":%q,\"score\":%v}\n", s.ID, score)
	}
	labels.WriteString(`{"id":"nobody#1","score":3}` + "\n")
	labelsPath := filepath.Join(t.TempDir(), "labels.jsonl")
	noTestErr(t, os.WriteFile(labelsPath, labels.Bytes(), 0o644))

	judged := filepath.Join(filepath.Dir(in), "judged.jsonl")
	fromRun, err := runPoolCLI(t, "judge-eval", judged, "--labels", labelsPath, "--json")
	if err != nil {
		t.Fatal(err)
	}
	fromFile, err := runPoolCLI(t, "judge-eval", "--judged", scores, "--labels", labelsPath, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var rep judge.Report
	noTestErr(t, json.Unmarshal([]byte(fromRun), &rep))
	if fromRun != fromFile {
		t.Errorf("judge-eval RUN and --judged of judge's scores differ:\n%s\n%s", fromRun, fromFile)
	}
	if rep.Overall.N != scored || scored < 5 || !slices.Equal(rep.OnlyLabels, []string{"nobody#1"}) {
		t.Errorf("n %d, want %d scored turns of %d; only in labels %v", rep.Overall.N, scored, len(want), rep.OnlyLabels)
	}
	if _, err := runPoolCLI(t, "judge-eval", judged, "--judged", scores, "--labels", labelsPath); err == nil || !strings.Contains(err.Error(), "once") {
		t.Errorf("RUN and --judged together: %v", err)
	}
}
