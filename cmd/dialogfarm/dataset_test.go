package main

import (
	"bytes"
	"context"
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
	for _, want := range []string{"read 11 dialogues; wrote 5 records (6 turns) to " + out + ": 4 train, 1 validation", "tokens per record (o200k_base)", "skipped 1: offline"} {
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

// TestExportWarnsAndRefusesEmpty: what a consumer must know goes to
// stderr (and the card); an export that keeps nothing is an error that
// says why, unless --allow-empty; the license flags reach the card.
func TestExportWarnsAndRefusesEmpty(t *testing.T) {
	in := fixtureDialogues(t)
	out := filepath.Join(filepath.Dir(in), "ds")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"export", "--in", in, "--out", out, "--split", "1", "--dataset-license", "other",
		"--dataset-license-name", "acme-data-1.0", "--dataset-license-link", "https://acme.example/license"}, &stdout, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"warning: dataset: train has 5 records: OpenAI fine-tuning needs at least 10",
		"warning: dataset: 2 of 6 assistant turns were not scored by a judge model"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	card := string(readTestFile(t, filepath.Join(out, "README.md")))
	for _, want := range []string{"license: other\nlicense_name: acme-data-1.0\nlicense_link: https://acme.example/license\n",
		"- train has 5 records: OpenAI fine-tuning needs at least 10"} {
		if !strings.Contains(card, want) {
			t.Errorf("card lacks %q:\n%s", want, card)
		}
	}
	if _, err := runPoolCLI(t, "export", "--in", in, "--out", out, "--dataset-license", "other"); err == nil || !strings.Contains(err.Error(), "--dataset-license-name") {
		t.Errorf("license other without a name: %v", err)
	}
	empty := filepath.Join(filepath.Dir(in), "empty")
	for _, target := range []string{empty, empty + ".jsonl"} {
		_, err := runPoolCLI(t, "export", "--in", in, "--out", target, "--min-score", "5", "--format", "openai", "--split", "1", "--max-tokens", "10")
		if err == nil || !strings.Contains(err.Error(), "no record to write") || !strings.Contains(err.Error(), "too_long 5") {
			t.Errorf("%s: an export of nothing: %v", target, err)
		}
		if _, serr := os.Stat(target); !os.IsNotExist(serr) {
			t.Errorf("%s: a refused empty export wrote it", target)
		}
	}
	if _, err := runPoolCLI(t, "export", "--in", in, "--out", empty, "--max-tokens", "10", "--allow-empty"); err != nil {
		t.Fatal(err)
	}
	if card := string(readTestFile(t, filepath.Join(empty, "README.md"))); strings.Contains(card, "data_files") || !strings.Contains(card, "This folder holds no record") {
		t.Errorf("empty folder's card:\n%s", card)
	}
}
