package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExportFolderCommand exports a dataset folder through the CLI: the
// run folder's manifest and redaction counts reach the card, a second
// export is byte-identical, and bad flags are errors that name them.
func TestExportFolderCommand(t *testing.T) {
	in := fixtureDialogues(t)
	run := filepath.Dir(in)
	if err := os.WriteFile(filepath.Join(run, "run.json"), []byte(`{"profile":"team-go","profile_hash":"sha256:feedfacecafe"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(run, "report.json"), []byte(`{"profile":"team-go","redactions":{"github-pat":3}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(run, "ds")
	args := []string{"export", "--in", in, "--out", out, "--meta", "inline", "--seed", "3", "--split", "0.5"}
	text, err := runPoolCLI(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"read 11 dialogues; wrote 5 records (6 turns) to " + out + ": 3 train, 2 validation", "tokens per record (o200k_base)", "skipped 1: offline"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "map[") {
		t.Errorf("output shows Go syntax:\n%s", text)
	}
	card := string(readTestFile(t, filepath.Join(out, "README.md")))
	for _, want := range []string{"profile: team-go", "profile_hash: sha256:feedfacecafe", "github-pat: 3", "judge_rubric_version: sha256:"} {
		if !strings.Contains(card, want) {
			t.Errorf("card lacks %q", want)
		}
	}
	var before [][]byte
	for _, f := range []string{"train.jsonl", "validation.jsonl", "README.md", "stats.json", "dataset_info.json"} {
		before = append(before, readTestFile(t, filepath.Join(out, f)))
	}
	if _, err := runPoolCLI(t, args...); err != nil {
		t.Fatal(err)
	}
	for i, f := range []string{"train.jsonl", "validation.jsonl", "README.md", "stats.json", "dataset_info.json"} {
		if !bytes.Equal(before[i], readTestFile(t, filepath.Join(out, f))) {
			t.Errorf("a second export changed %s", f)
		}
	}
	for flag, value := range map[string]string{"--split": "1.5", "--tokenizer": "gpt2", "--dedup-near": "2", "--max-tokens": "-1"} {
		if _, err := runPoolCLI(t, "export", "--in", in, "--out", out, flag, value); err == nil {
			t.Errorf("%s %s was accepted", flag, value)
		}
	}
}
