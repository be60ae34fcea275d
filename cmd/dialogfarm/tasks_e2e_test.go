package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"dialogfarm/dialog"
	"dialogfarm/internal/llmtest"
)

// TestTasksExecutionJudgeThroughEditor makes tasks from the Python fixture
// (trace, plan, build), checks them (tasks check), drives one task-derived config in the real editor
// with two models — one answers correctly, one with code that reads as
// well but is wrong — with the execution judge live (drive --tasks: the
// editor is shown the passing answer), and re-judges the recorded
// dialogue with it (judge --tasks): the correct answer keeps 5, the wrong
// one gets tests_fail and the failing test's output in its verdict.
func TestTasksExecutionJudgeThroughEditor(t *testing.T) {
	root := editorRoot(t)
	// a short folder: Chromium's singleton socket path under run/browser
	// must stay below the Unix socket limit (t.TempDir's is too long)
	tmp := shortTempDir(t, "df-tasks-")
	bin := buildBinary(t, tmp)
	repo, work := filepath.Join(tmp, "pyfix"), filepath.Join(tmp, "tasks")
	if err := os.CopyFS(repo, os.DirFS(filepath.Join(root, "tasks", "testdata", "pyfix"))); err != nil {
		t.Fatal(err)
	}
	dfl := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("dialogfarm %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	dfl("tasks", "trace", "--repo", repo, "--out", work)
	dfl("tasks", "plan", "--out", work)
	t.Log(dfl("tasks", "build", "--out", work))
	// every generate config asks for what its step needs: the reference
	// code of what it asks for passes the step's tests and scores 5
	check := dfl("tasks", "check", "--out", work)
	t.Log(check)
	m := regexp.MustCompile(`(\d+) generate/fix configs: the reference answer passes the step's tests in (\d+), scores 5 in (\d+)`).FindStringSubmatch(check)
	if m == nil || m[1] == "0" || m[2] != m[1] || m[3] != m[1] {
		t.Errorf("tasks check: %v", m)
	}

	var cfg dialog.ChatConfig
	cfgs, err := readConfigs(filepath.Join(work, "configs.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cfgs {
		if c.Symbol == "scale" && c.Intent == "generate" {
			cfg = c
		}
	}
	if cfg.ID == "" {
		t.Fatal("no generate config for scale in configs.jsonl")
	}
	one := filepath.Join(tmp, "one.jsonl")
	b, _ := json.Marshal(cfg)
	if err := os.WriteFile(one, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	const correct = "Here is `scale`: it multiplies `x` by the factor `k`.\n\n```python\ndef scale(x, k):\n    \"\"\"Multiply x by k.\"\"\"\n    return x * k\n```\n"
	const wrong = "Here is `scale`: it scales `x` by the factor `k`.\n\n```python\ndef scale(x, k):\n    \"\"\"Multiply x by k.\"\"\"\n    return x + k\n```\n"
	model := llmtest.New(t, func(r llmtest.Request) llmtest.Reply {
		if r.Model == "coder-wrong" {
			return llmtest.Reply{Text: wrong}
		}
		return llmtest.Reply{Text: correct}
	})
	poolCfg := filepath.Join(tmp, "pool.yaml")
	// coder-wrong is listed first: on a tie (both read well) the judge
	// shows the first member's answer, so only the execution judge makes
	// the editor show coder-right's
	yaml := "pool:\n  members:\n" +
		"    - {name: coder-wrong, base_url: " + model.URL + ", model: coder-wrong}\n" +
		"    - {name: coder-right, base_url: " + model.URL + ", model: coder-right}\n"
	if err := os.WriteFile(poolCfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(tmp, "run")
	dfl("drive", "--root", root, "--config", poolCfg, "--configs", one, "--out", run, "--tasks", work)
	// live: the execution judge ran while driving, so the editor was shown
	// the answer whose tests pass
	live, _, err := readDialogues(filepath.Join(run, "dialogues.jsonl"))
	if err != nil || len(live) != 1 || len(live[0].Turns) == 0 {
		t.Fatalf("recorded dialogues: %d, err %v", len(live), err)
	}
	if got := live[0].Turns[0].Answer; got != correct {
		t.Errorf("the editor was shown %q, want the correct answer", got)
	}
	for _, v := range live[0].Turns[0].Verdicts {
		m := live[0].Turns[0].Candidates[v.Candidate].Member
		t.Logf("live verdict of %s: score %v, deductions %v", m, v.Score, v.Deductions)
		if m == "coder-wrong" && (v.Score == 5 || v.Execution == nil || v.Execution.Passed) {
			t.Errorf("live verdict of the wrong answer: score %v, execution %+v", v.Score, v.Execution)
		}
	}
	judged := filepath.Join(tmp, "judged.jsonl")
	t.Log(dfl("judge", "--config", poolCfg, "--in", filepath.Join(run, "dialogues.jsonl"), "--out", judged, "--rules-only", "--tasks", work))

	ds, torn, err := readDialogues(judged)
	if err != nil || torn || len(ds) != 1 || len(ds[0].Turns) == 0 {
		t.Fatalf("judged dialogues: %d, torn %v, err %v", len(ds), torn, err)
	}
	turn := ds[0].Turns[0]
	for _, v := range turn.Verdicts {
		c := turn.Candidates[v.Candidate]
		var rules []string
		for _, d := range v.Deductions {
			rules = append(rules, d.Rule)
		}
		if v.Execution == nil {
			t.Fatalf("%s: verdict has no execution record", c.Member)
		}
		switch c.Member {
		case "coder-right":
			if v.Score != 5 || len(rules) != 0 || !v.Execution.Passed {
				t.Errorf("correct answer: score %v, deductions %v, execution %+v", v.Score, v.Deductions, v.Execution)
			}
		case "coder-wrong":
			if v.Score == 5 || !slices.Contains(rules, "tests_fail") || !strings.Contains(v.Execution.Output, "assert 5 == 6") {
				t.Errorf("wrong answer: score %v, deductions %v, execution %+v", v.Score, v.Deductions, v.Execution)
			}
		}
	}
}
