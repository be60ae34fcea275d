package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"dialogfarm/dialog"
	"dialogfarm/internal/llmtest"
)

// TestRunKilledAndResumed runs the whole pipeline as a user would — the
// built binary, the real editor and browser, a pool of two models and a
// judge model on a fake OpenAI-compatible server — kills it with SIGKILL in
// the middle of driving, starts it again with the same arguments, and
// checks that every config ends up recorded exactly once, that the killed
// run's editor and browser died with it, and that the SFT export holds
// exactly the 5-point dialogues.
func TestRunKilledAndResumed(t *testing.T) {
	root := editorRoot(t)
	tmp := shortTempDir(t, "dialogfarm-run-")
	bin := buildBinary(t, tmp)
	model := llmtest.New(t, runAnswer)
	cfgPath := filepath.Join(tmp, "dialogfarm.yaml")
	yaml := "pool:\n  cache_dir: cache\n  members:\n" +
		"    - {name: coder-a, base_url: " + model.URL + ", model: coder-a, max_concurrency: 2}\n" +
		"    - {name: coder-b, base_url: " + model.URL + ", model: coder-b, max_concurrency: 2}\n" +
		"judge:\n  endpoint: {base_url: " + model.URL + ", model: judge}\n"
	if err := os.WriteFile(cfgPath, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "run")
	const n = 5
	args := []string{"run", "--root", root, "--config", cfgPath, "--profile", "default",
		"--repos", filepath.Join(root, "examples", "sample-repo"), "--n", strconv.Itoa(n), "--seed", "7", "--out", out}
	records := filepath.Join(out, "dialogues.jsonl")

	// First run: killed as soon as the first dialogue is recorded.
	first := exec.Command(bin, args...)
	var firstLog bytes.Buffer
	first.Stdout, first.Stderr = &firstLog, &firstLog
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- first.Wait() }()
	if !waitForLines(t, records, 1, exited, 8*time.Minute) {
		t.Fatalf("the first run ended before recording a dialogue:\n%s", firstLog.String())
	}
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	// Its editor and browser die with it, with their helpers.
	for deadline := time.Now().Add(30 * time.Second); len(processesUsing(out)) > 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the killed run's processes still run 30 s after it: %v", processesUsing(out))
		}
	}
	before := countLines(t, records)

	// Second run: same arguments, runs to the end.
	second := exec.Command(bin, args...)
	secondOut, err := second.CombinedOutput()
	if err != nil {
		t.Fatalf("resumed run: %v\n%s", err, secondOut)
	}
	if left := processesUsing(out); len(left) != 0 {
		t.Errorf("processes of the run still alive after it ended: %v", left)
	}
	if !strings.Contains(string(secondOut), strconv.Itoa(before)+" already recorded") {
		t.Errorf("resumed run did not skip the %d recorded dialogues:\n%s", before, secondOut)
	}

	var configs []dialog.ChatConfig
	readJSONL(t, filepath.Join(out, "configs.jsonl"), &configs)
	var dialogues []dialog.Dialogue
	readJSONL(t, records, &dialogues)
	if len(configs) != n || len(dialogues) != n {
		t.Fatalf("%d configs and %d dialogue records, want %d each", len(configs), len(dialogues), n)
	}
	seen := map[string]bool{}
	kept := 0
	for _, d := range dialogues {
		if seen[d.ConfigID] {
			t.Errorf("config %s recorded twice", d.ConfigID)
		}
		seen[d.ConfigID] = true
		if d.Status != dialog.StatusOK {
			t.Errorf("config %s: %s at %s: %s", d.ConfigID, d.Status, d.FailedStep, d.Error)
			continue
		}
		for i, turn := range d.Turns {
			if len(turn.Candidates) != 2 || len(turn.Verdicts) != 2 {
				t.Errorf("%s turn %d: %d candidates, %d verdicts", d.ConfigID, i+1, len(turn.Candidates), len(turn.Verdicts))
			}
			if turn.Shown != turn.Answer {
				t.Errorf("%s turn %d: the plugin showed another answer than the one sent", d.ConfigID, i+1)
			}
			for _, v := range turn.Verdicts {
				if v.Rank == 1 && turn.Candidates[v.Candidate].Text != turn.Answer {
					t.Errorf("%s turn %d: the answer sent is not the top-ranked candidate", d.ConfigID, i+1)
				}
			}
			if turn.Offline || turn.Responder != "pool" {
				t.Errorf("%s turn %d: answered by %q (offline %v), want the pool", d.ConfigID, i+1, turn.Responder, turn.Offline)
			}
		}
		if d.Turns[0].Verdicts != nil && shownScore(d.Turns[0]) >= 5 {
			kept++
		}
	}
	var sftLines []map[string]any
	readJSONL(t, filepath.Join(out, "sft.jsonl"), &sftLines)
	if len(sftLines) != kept {
		t.Errorf("sft.jsonl has %d records, %d dialogues have a 5-point first turn", len(sftLines), kept)
	}
	if kept == 0 {
		t.Errorf("no dialogue was kept; the fake model's answers should score 5 in English")
	}
	for _, f := range []string{"report.json", "report.html"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("report: %v", err)
		}
	}
	// The run ends with the dataset folder: the same records, split.
	var train, validation []map[string]any
	readJSONL(t, filepath.Join(out, "dataset", "train.jsonl"), &train)
	if _, err := os.Stat(filepath.Join(out, "dataset", "validation.jsonl")); err == nil {
		readJSONL(t, filepath.Join(out, "dataset", "validation.jsonl"), &validation)
	}
	for _, f := range []string{"README.md", "dataset_info.json", "stats.json"} {
		if _, err := os.Stat(filepath.Join(out, "dataset", f)); err != nil {
			t.Errorf("dataset folder: %v", err)
		}
	}
	if n := len(train) + len(validation); n == 0 || n > len(sftLines) {
		t.Errorf("dataset folder holds %d records (%d train), sft.jsonl %d", n, len(train), len(sftLines))
	}

	// A third run changes nothing.
	sft1, _ := os.ReadFile(filepath.Join(out, "sft.jsonl"))
	if third, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("third run: %v\n%s", err, third)
	}
	sft2, _ := os.ReadFile(filepath.Join(out, "sft.jsonl"))
	if !bytes.Equal(sft1, sft2) || countLines(t, records) != n {
		t.Errorf("a third run changed the records or the export")
	}
}

// runAnswer is the fake model: the judge model scores 5; pool members
// answer in English with a fenced block in the request's language that
// quotes a line of the code they were shown.
func runAnswer(r llmtest.Request) llmtest.Reply {
	if r.Model == "judge" {
		return llmtest.Reply{Text: `{"score": 5, "reason": "correct and complete"}`}
	}
	user := r.LastUser()
	lang := "text"
	if m := regexp.MustCompile(`(?m)^Language: (\S+)`).FindStringSubmatch(user); m != nil {
		lang = m[1]
	}
	line := "x"
	if m := regexp.MustCompile("(?s)```[a-z]*\n(.*?)\n```").FindStringSubmatch(user); m != nil {
		for _, l := range strings.Split(m[1], "\n") {
			if strings.TrimSpace(l) != "" {
				line = l
				break
			}
		}
	}
	return llmtest.Reply{Text: "Here is what this code does, and the line that matters (" + r.Model + "):\n\n```" + lang + "\n" + line + "\n```\n"}
}

func shownScore(t dialog.Turn) float64 {
	for _, v := range t.Verdicts {
		if t.Candidates[v.Candidate].Text == t.Answer {
			return v.Score
		}
	}
	return 0
}

// waitForLines waits until path has at least n lines, the process exits,
// or the time is up.
func waitForLines(t *testing.T, path string, n int, exited <-chan error, limit time.Duration) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if data, err := os.ReadFile(path); err == nil && bytes.Count(data, []byte("\n")) >= n {
			return true
		}
		select {
		case <-exited:
			return false
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
}

// processesUsing lists the pids whose command line names a path inside dir.
func processesUsing(dir string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmdline, []byte(dir+"/")) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func countLines(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Count(data, []byte("\n"))
}

func readJSONL[T any](t *testing.T, path string, out *[]T) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		*out = append(*out, v)
	}
}
