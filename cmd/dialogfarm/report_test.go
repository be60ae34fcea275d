package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dialogfarm/analyst"
	"dialogfarm/dataset"
	"dialogfarm/dialog"
	"dialogfarm/internal/jsonl"
)

// TestReportOnRecordedRun reports on the sft package's recorded dialogues,
// their configs written out as the run's configs.jsonl.
func TestReportOnRecordedRun(t *testing.T) {
	run := t.TempDir()
	src := fixtureDialogues(t)
	dialogues, err := jsonl.Read[dialog.Dialogue](src)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, d := range dialogues {
		line, _ := json.Marshal(d.Config)
		b.Write(append(line, '\n'))
	}
	os.WriteFile(filepath.Join(run, "configs.jsonl"), []byte(b.String()), 0o644)
	data, _ := os.ReadFile(src)
	os.WriteFile(filepath.Join(run, "dialogues.jsonl"), data, 0o644)

	os.WriteFile(filepath.Join(run, "redactions.json"), []byte(`{"total":{"secrets":3,"occurrences":4,"per_rule":{"jwt":2,"high-entropy":1}}}`), 0o600)

	out := runFront(t, "report", "--profile", "default", "--run", run)
	if !strings.Contains(out, "10 dialogues") || !strings.Contains(out, "cost/kept turn") {
		t.Errorf("report output:\n%s", out)
	}
	if !strings.Contains(out, "secrets redacted: 3 (high-entropy 1, jwt 2)") || !strings.Contains(out, "secret net: 0") {
		t.Errorf("report does not print the secret counts:\n%s", out)
	}
	var r analyst.Report
	raw, err := os.ReadFile(filepath.Join(run, "report.json"))
	if err != nil || json.Unmarshal(raw, &r) != nil {
		t.Fatalf("report.json: %v", err)
	}
	if r.Secrets == nil || r.Secrets.Redacted != 3 || r.Secrets.RedactedPerRule["jwt"] != 2 {
		t.Errorf("report.json secrets %+v", r.Secrets)
	}
	if r.Dialogues != 10 || r.Keep.KeptTurns == 0 || len(r.Dimensions) != 10 || len(r.Cells) == 0 {
		t.Errorf("report %+v", r)
	}
	page, err := os.ReadFile(filepath.Join(run, "report.html"))
	if err != nil || !strings.Contains(string(page), "<svg") || !strings.Contains(out, "HTML: "+filepath.Join(run, "report.html")) {
		t.Errorf("report.html: %v\n%s", err, out)
	}
	// The keep rate is one definition: the dataset card's and stats.json's
	// are the report's (they were 87.5% of records per dialogue in the
	// card and 73.3% of turns in the report for the same run).
	ds := filepath.Join(run, "dataset")
	runFront(t, "export", "--in", filepath.Join(run, "dialogues.jsonl"), "--out", ds)
	var st dataset.Stats
	raw, err = os.ReadFile(filepath.Join(ds, dataset.StatsFile))
	if err != nil || json.Unmarshal(raw, &st) != nil {
		t.Fatalf("stats.json: %v", err)
	}
	if st.Keep != r.Keep || r.Keep.Turns != 13 || r.Keep.KeptTurns != 6 || r.Keep.Dialogues != 10 || r.Keep.KeptDialogues != 5 {
		t.Errorf("keep rate: report %+v, stats.json %+v; want the same, 6 of 13 turns and 5 of 10 dialogues", r.Keep, st.Keep)
	}
	card, _ := os.ReadFile(filepath.Join(ds, dataset.CardFile))
	if want := "Keep rate (score at least 5, before the quality gates): " + r.Keep.String(); !strings.Contains(string(card), want) || !strings.Contains(out, "keep rate: "+r.Keep.String()) {
		t.Errorf("card and report must say %q:\n%s\n%s", r.Keep.String(), card, out)
	}
	md := runFront(t, "report", "--profile", "default", "--run", run, "--format", "markdown")
	if !strings.HasPrefix(md, "## Fidelity report: profile default") || !strings.Contains(md, "| intent |") || strings.Contains(md, "JSON:") {
		t.Errorf("markdown report:\n%s", md)
	}
}
