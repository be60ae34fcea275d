package dashboard

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dialogfarm/dialog"
	"dialogfarm/sft"
)

func TestBuildAndWrite(t *testing.T) {
	dir := t.TempDir()
	art := filepath.Join(dir, "failures", "c3")
	if err := os.MkdirAll(art, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(art, "screenshot.png"), []byte("png"), 0o644)
	turn := func(score, cost float64) dialog.Turn {
		return dialog.Turn{Exchange: dialog.Exchange{Request: json.RawMessage(`{"messages":[{"role":"user","content":"q"}]}`), Answer: "a",
			Candidates: []dialog.Candidate{{Text: "a", CostUSD: cost}}, Verdicts: []dialog.Verdict{{Candidate: 0, Score: score, Rank: 1}}}}
	}
	ds := []dialog.Dialogue{
		{ConfigID: "c1", Status: "ok", Config: dialog.ChatConfig{Intent: "fix", Language: "go"}, Turns: []dialog.Turn{turn(5, 0.01)}},
		{ConfigID: "c2", Status: "ok", Config: dialog.ChatConfig{Intent: "fix", Language: "python"}, Turns: []dialog.Turn{turn(3, 0.01)}},
		{ConfigID: "c3", Status: "failed", FailedStep: "wait_answer", Error: "timeout", Artifacts: art},
	}
	var lines []string
	for _, d := range ds {
		b, _ := json.Marshal(d)
		lines = append(lines, string(b))
	}
	path := filepath.Join(dir, "dialogues.jsonl")
	os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	kept := 0.02
	os.WriteFile(filepath.Join(dir, "report.json"), []byte(`{"dimensions":[{"dim":"intent","jsd_produced":0.01,"jsd_kept":0.05}]}`), 0o644)
	d, err := Build(Sources{Dir: dir, Dialogues: path, Report: filepath.Join(dir, "report.json"), Export: sft.DefaultOptions()})
	if err != nil {
		t.Fatal(err)
	}
	if d.Dialogues != 3 || d.Progress.OK != 2 || d.Progress.Failed != 1 || d.KeepRate.KeptTurns != 1 || d.KeepRate.Turns != 2 ||
		d.KeepRate.Dialogues != 3 || d.KeepRate.KeptDialogues != 1 || d.Banner != "" {
		t.Fatalf("counts: %+v", d)
	}
	if d.CostPerKeptTurn == nil || *d.CostPerKeptTurn != kept {
		t.Fatalf("cost per kept turn %v, want %v (two turns' cost over one kept)", d.CostPerKeptTurn, kept)
	}
	if len(d.Scores) != 1 || d.Scores[0].Counts[5] != 1 || d.Scores[0].Counts[3] != 1 {
		t.Fatalf("scores: %+v", d.Scores)
	}
	if len(d.Keep) != 2 || d.Keep[0].Rate != 1 || d.Keep[1].Rate != 0 {
		t.Fatalf("keep: %+v", d.Keep)
	}
	if len(d.Failures) != 1 || d.Failures[0].Failures[0].Screenshot != "failures/c3/screenshot.png" || d.Failures[0].Failures[0].DOM != "" {
		t.Fatalf("failures: %+v", d.Failures)
	}
	if err := WriteFile(dir, d); err != nil {
		t.Fatal(err)
	}
	page, _ := os.ReadFile(filepath.Join(dir, File))
	for _, want := range []string{`data-plot="scores-fix"`, `data-plot="keep"`, `data-plot="jsd"`, `data-plot="failures"`, `href="failures/c3/screenshot.png"`, "$0.0200"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("dashboard.html lacks %s", want)
		}
	}
	// The kept JSD is over target: drawn as bad.
	if !strings.Contains(string(page), "#e15759") {
		t.Error("JSD over 0.02 not marked")
	}
}

// TestOfflineBanner: when a kept dialogue holds the offline stand-in's
// answers (the run exported them with allow_offline), the page says so
// above everything else; when they were not kept, it does not.
func TestOfflineBanner(t *testing.T) {
	dir := t.TempDir()
	d := dialog.Dialogue{ConfigID: "c1", Status: "ok", Offline: true, Config: dialog.ChatConfig{Intent: "fix", Language: "go", QuerySource: "template"},
		Turns: []dialog.Turn{{Exchange: dialog.Exchange{Request: json.RawMessage(`{"messages":[{"role":"user","content":"q"}]}`),
			Answer: "[offline placeholder] a", Offline: true, Model: "offline",
			Candidates: []dialog.Candidate{{Member: "offline", Model: "offline", Text: "[offline placeholder] a", Offline: true}},
			Verdicts:   []dialog.Verdict{{Candidate: 0, Score: 5, Rank: 1, RulesOnly: true}}}}}}
	b, _ := json.Marshal(d)
	path := filepath.Join(dir, "dialogues.jsonl")
	os.WriteFile(path, append(b, '\n'), 0o644)
	banner := `<p class="banner" role="alert" data-offline="1">Not training data: 1 of 1 kept dialogues (1 of 1 turns) hold placeholder answers from the offline stand-in.</p>`
	for _, allow := range []bool{true, false} {
		opt := sft.DefaultOptions()
		opt.AllowOffline = allow
		data, err := Build(Sources{Dir: dir, Dialogues: path, Export: opt})
		if err != nil {
			t.Fatal(err)
		}
		var page strings.Builder
		if err := WritePage(&page, data); err != nil {
			t.Fatal(err)
		}
		i := strings.Index(page.String(), banner)
		if allow && (i < 0 || i > strings.Index(page.String(), `class="tiles"`)) {
			t.Errorf("allow_offline: the page does not open with the banner:\n%s", page.String())
		}
		if !allow && i >= 0 {
			t.Errorf("no offline answer was kept, yet the page shows the banner")
		}
		if !strings.Contains(page.String(), "<th>judge mode</th><td>rules_only 1;") {
			t.Errorf("the page lacks the judge mode:\n%s", page.String())
		}
	}
}
