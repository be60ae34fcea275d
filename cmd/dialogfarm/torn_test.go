package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tornFixture is the recorded-dialogue fixture with a torn last line
// appended: the first half of a record, as a run killed mid-write leaves
// it. It also writes the configs of the run for report.
func tornFixture(tb testing.TB) (dir, dialogues string) {
	tb.Helper()
	dialogues = fixtureDialogues(tb)
	data := readTestFile(tb, dialogues)
	lines := strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")
	last := lines[len(lines)-1]
	torn := append(data, last[:len(last)/2]...)
	if err := os.WriteFile(dialogues, torn, 0o644); err != nil {
		tb.Fatal(err)
	}
	dir = filepath.Dir(dialogues)
	var configs bytes.Buffer
	for _, d := range readTestDialogues(tb, dialogues) {
		noTestErr(tb, writeLine(&configs, d.Config))
	}
	noTestErr(tb, os.WriteFile(filepath.Join(dir, "configs.jsonl"), configs.Bytes(), 0o644))
	return dir, dialogues
}

// TestTornLastLine: export, report and judge read a dialogues file whose
// last line was torn by a kill the way drive does: the partial record is
// skipped (and said so), every whole one is used.
func TestTornLastLine(t *testing.T) {
	dir, in := tornFixture(t)

	out, err := runPoolCLI(t, "export", "--in", in, "--out", filepath.Join(dir, "sft.jsonl"))
	if err != nil || !strings.Contains(out, "read 11 dialogues; wrote 5 records") || !strings.Contains(out, "skipped 1: torn_last_line") {
		t.Errorf("export: %v\n%s", err, out)
	}

	out, err = runPoolCLI(t, "report", "--profile", "default", "--run", dir)
	// 11 whole records, one config (d06-dup) recorded twice: the report
	// counts each config's latest record.
	if err != nil || !strings.Contains(out, "11 configs, 10 dialogues") {
		t.Errorf("report: %v\n%s", err, out)
	}

	judged := filepath.Join(dir, "judged.jsonl")
	var stdout, stderr bytes.Buffer
	err = run(context.Background(), []string{"judge", "--rules-only", "--in", in, "--out", judged}, &stdout, &stderr)
	if err != nil || !strings.Contains(stdout.String(), "of 11 dialogues") || !strings.Contains(stderr.String(), "torn last line") {
		t.Errorf("judge: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	if n := len(readTestDialogues(t, judged)); n != 11 {
		t.Errorf("judged %d dialogues, want 11", n)
	}

	// A bad line that is not the last one is still an error naming it.
	data := readTestFile(t, in)
	bad := append([]byte("{\"config_id\":\n"), data...)
	noTestErr(t, os.WriteFile(in, bad, 0o644))
	for _, args := range [][]string{
		{"export", "--in", in, "--out", filepath.Join(dir, "sft2.jsonl")},
		{"judge", "--rules-only", "--in", in, "--out", judged},
		{"report", "--profile", "default", "--run", dir},
	} {
		if _, err := runPoolCLI(t, args...); err == nil || !strings.Contains(err.Error(), "dialogues.jsonl:1: ") {
			t.Errorf("%s with a bad first line: %v", args[0], err)
		}
	}
}

// TestJudgeOutAtomic: a judge run stopped before it finished leaves --out
// as it was, and no temporary file behind.
func TestJudgeOutAtomic(t *testing.T) {
	in := fixtureDialogues(t)
	dir := filepath.Dir(in)
	judged := filepath.Join(dir, "judged.jsonl")
	noTestErr(t, os.WriteFile(judged, []byte("earlier judged dialogues\n"), 0o644))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := run(ctx, []string{"judge", "--rules-only", "--in", in, "--out", judged}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil {
		t.Fatal("judge with a cancelled context succeeded")
	}
	if got := string(readTestFile(t, judged)); got != "earlier judged dialogues\n" {
		t.Errorf("--out changed: %q", got)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), "tmp") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
	// Run to the end, the same --out is replaced whole.
	if _, err := runPoolCLI(t, "judge", "--rules-only", "--in", in, "--out", judged); err != nil {
		t.Fatal(err)
	}
	if n := len(readTestDialogues(t, judged)); n != 11 {
		t.Errorf("judged %d dialogues, want 11", n)
	}
}
