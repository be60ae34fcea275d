package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
)

// TestProgressPlainLines: when stderr is not a terminal, progress is plain
// lines (no escape codes), at most one per plainEvery, with rate and time
// left, and a last line with the time taken.
func TestProgressPlainLines(t *testing.T) {
	var stderr bytes.Buffer
	a := &app{stderr: &stderr, logFormat: logConsole}
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := a.newProgress("judge", 100)
	p.now = func() time.Time { return clock }
	p.start, p.printed = clock, clock
	for range 10 {
		p.Add(1) // within the first interval: no line
	}
	if stderr.Len() != 0 {
		t.Fatalf("printed before %s: %q", plainEvery, stderr.String())
	}
	clock = clock.Add(plainEvery)
	p.Add(10) // 20 done in 10s: 2.0/s, 80 left → 40s
	p.Set(15) // counts never go back
	clock = clock.Add(30 * time.Second)
	p.Set(100)
	p.Finish()
	want := "judge: 20/100 dialogues (20%), 2.0/s, 40s left\njudge: 100/100 dialogues (100%), 2.5/s, took 40s\n"
	if stderr.String() != want {
		t.Errorf("got\n%s\nwant\n%s", stderr.String(), want)
	}
	if strings.Contains(stderr.String(), "\x1b") || strings.Contains(stderr.String(), "\r") {
		t.Error("plain lines hold terminal control characters")
	}
}

// TestProgressStoppedEarly: a run stopped by an error still ends with a
// line saying how far it got.
func TestProgressStoppedEarly(t *testing.T) {
	var stderr bytes.Buffer
	a := &app{stderr: &stderr, logFormat: logConsole}
	p := a.newProgress("drive", 8)
	p.Set(3)
	p.Finish()
	if !strings.HasPrefix(stderr.String(), "drive: 3/8 configs (37%)") {
		t.Errorf("got %q", stderr.String())
	}
}

// TestLogFormatJSON runs a command with --log-format json: every stderr
// line is a JSON object with a time and a level, progress included.
func TestLogFormatJSON(t *testing.T) {
	in := fixtureDialogues(t)
	cfg := writePoolYAML(t, "judge:\n  endpoint: {base_url: \"http://127.0.0.1:1/v1\", model: never-called}\n")
	var out, errOut bytes.Buffer
	args := []string{"judge", "--log-format", "json", "--config", cfg, "--rules-only", "--in", in, "--out", filepath.Join(t.TempDir(), "j.jsonl")}
	if err := run(context.Background(), args, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(errOut.String()), "\n")
	progress := 0
	for _, line := range lines {
		var e map[string]any
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("stderr line is not JSON: %q", line)
		}
		if e["ts"] == nil || e["level"] == nil {
			t.Errorf("entry lacks ts or level: %s", line)
		}
		if e["msg"] == "progress" && e["task"] == "judge" && e["done"] == e["total"] {
			progress++
		}
	}
	if progress != 1 {
		t.Errorf("%d final progress entries, want 1:\n%s", progress, errOut.String())
	}
	if _, err := newLogger("yaml", &out, zapcore.InfoLevel); err == nil || !strings.Contains(err.Error(), "--log-format") {
		t.Errorf("bad format: %v", err)
	}
}

// TestJudgeEvalOnePair: with a single judged-and-labelled item, kappa and
// its interval are n/a, not 0.000 [0.000, 0.000].
func TestJudgeEvalOnePair(t *testing.T) {
	dir := t.TempDir()
	judged, labels := filepath.Join(dir, "judged.jsonl"), filepath.Join(dir, "labels.jsonl")
	noTestErr(t, os.WriteFile(judged, []byte(`{"id":"a","score":5,"intent":"explain","language":"go","locale":"en"}`+"\n"), 0o644))
	noTestErr(t, os.WriteFile(labels, []byte(`{"id":"a","score":4}`+"\n"), 0o644))
	out, err := runPoolCLI(t, "judge-eval", "--judged", judged, "--labels", labels)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "overall") {
			if strings.Contains(line, "0.000 [") || strings.Count(line, "n/a") < 2 {
				t.Errorf("kappa of one item: %q, want n/a n/a", line)
			}
			return
		}
	}
	t.Errorf("no overall line:\n%s", out)
}
