package analyst

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dialogfarm/dialog"
	"dialogfarm/dialog/vocab"
)

func cfgFor(id, intent, lang string) dialog.ChatConfig {
	return dialog.ChatConfig{ID: id, Intent: intent, Language: lang, Instruction: "free_text", Trigger: "panel",
		CursorBehaviour: "inside_function", Reference: "enclosing_function", Locale: "en", Difficulty: "easy",
		QueryStyle: "terse", Turns: []dialog.TurnSpec{{Query: "q"}}}
}

func turn(score float64, cost float64) dialog.Turn {
	return dialog.Turn{Exchange: dialog.Exchange{
		Answer:     "shown",
		Candidates: []dialog.Candidate{{Text: "other", CostUSD: cost / 2}, {Text: "shown", CostUSD: cost / 2}},
		Verdicts:   []dialog.Verdict{{Candidate: 0, Score: 5, Rank: 1}, {Candidate: 1, Score: score, Rank: 2}},
	}}
}

// sampleReport is the report of a small run: five dialogues, seven turns.
func sampleReport(tb testing.TB) *Report {
	tb.Helper()
	p := loadProfile(tb, "testdata/linked.yaml")
	configs := []dialog.ChatConfig{cfgFor("a", "explain", "go"), cfgFor("b", "explain", "go"), cfgFor("c", "fix", "python"), cfgFor("d", "fix", "python")}
	offline := turn(5, 0)
	offline.Offline = true
	dialogues := []dialog.Dialogue{
		// kept: the first turn only (the second scored 4; a 5 after it would not count)
		{ConfigID: "a", Status: "ok", Config: configs[0], Turns: []dialog.Turn{turn(5, 0.01), turn(4, 0.01), turn(5, 0.02)}},
		{ConfigID: "b", Status: "ok", Config: configs[1], Turns: []dialog.Turn{turn(3, 0.02)}},
		// superseded by the next record of c (driven again): not counted
		{ConfigID: "c", Status: "failed", Config: configs[2], Turns: []dialog.Turn{turn(2, 0.05)}},
		{ConfigID: "c", Status: "ok", Config: configs[2], Turns: []dialog.Turn{turn(5, 0.03)}},
		{ConfigID: "d", Status: "ok", Config: configs[3], Turns: []dialog.Turn{offline}},
		{ConfigID: "e", Status: "failed", Config: configs[3], Turns: []dialog.Turn{turn(5, 0)}},
	}
	cfg := DefaultReportConfig()
	// The fixture's turns carry no captured request, so the export's rule
	// (sft.KeptTurns) would keep none; the report only sums what it is told.
	cfg.KeptTurns = leadingFives
	return BuildReport(p, configs, dialogues, cfg)
}

func TestBuildReport(t *testing.T) {
	p := loadProfile(t, "testdata/linked.yaml")
	r := sampleReport(t)
	// The latest record of each of the 5 config ids, 7 turns.
	if want := (dialog.KeepRate{Turns: 7, KeptTurns: 2, TurnRate: 0.2857, Dialogues: 5, KeptDialogues: 2, DialogueRate: 0.4}); r.Keep != want || r.Dialogues != 5 {
		t.Errorf("keep %+v (dialogues %d), want %+v", r.Keep, r.Dialogues, want)
	}
	if r.Provenance.OfflineDialogues != 1 || r.Kept.OfflineDialogues != 0 || r.OfflineBanner() != "" {
		t.Errorf("offline: run %d, kept %d, banner %q", r.Provenance.OfflineDialogues, r.Kept.OfflineDialogues, r.OfflineBanner())
	}
	var intent DimReport
	for _, d := range r.Dimensions {
		if d.Dim == vocab.DimIntent {
			intent = d
		}
	}
	// target intent: explain 3, fix 3, tests 2, docs 1, optimize 1, generate 1 (of 11);
	// produced: explain 2, fix 2 → JSD by hand from the same formula.
	want := JSD(p.Target(vocab.DimIntent), map[string]float64{"explain": 2, "fix": 2})
	if math.Abs(intent.JSDProduced-want) > 1e-12 || intent.JSDKept == nil {
		t.Errorf("intent JSD %v (want %v), kept %v", intent.JSDProduced, want, intent.JSDKept)
	}
	// kept dialogues: a (explain) and c (fix): kept shares 50/50.
	for _, s := range intent.Values {
		if (s.Value == "explain" || s.Value == "fix") && (s.KeptCount != 1 || s.Kept != 0.5) {
			t.Errorf("kept share %+v", s)
		}
	}
	if len(r.Cells) != 2 || r.Cells[0].Cell != "explain/go" || r.Cells[0].KeptTurns != 1 ||
		math.Abs(*r.Cells[0].CostPerKeptTurn-0.06) > 1e-12 || r.Cells[1].Cell != "fix/python" || r.Cells[1].Dialogues != 3 {
		t.Errorf("cells %+v", r.Cells)
	}
	var buf bytes.Buffer
	if err := r.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"keep rate: turns 2 of 7 kept (28.6%), dialogues 2 of 5 with a kept turn (40.0%)", "explain/go", "JSD produced"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, buf.String())
		}
	}
}

// TestReportOfflineBanner: when a kept dialogue holds the offline
// stand-in's answers (export --allow-offline), every form of the report
// says so first.
func TestReportOfflineBanner(t *testing.T) {
	p := loadProfile(t, "testdata/linked.yaml")
	c := cfgFor("a", "explain", "go")
	c.QuerySource = dialog.QuerySourceTemplate
	offline := turn(5, 0)
	offline.Offline, offline.Model = true, "offline"
	ds := []dialog.Dialogue{{ConfigID: "a", Status: "ok", Offline: true, Config: c, Turns: []dialog.Turn{offline}}}
	cfg := DefaultReportConfig()
	cfg.KeptTurns = func(d dialog.Dialogue) int { return len(d.Turns) } // as export --allow-offline keeps them
	r := BuildReport(p, []dialog.ChatConfig{c}, ds, cfg)
	want := "1 of 1 kept dialogues (1 of 1 turns) hold placeholder answers from the offline stand-in, not training data"
	if r.OfflineBanner() != want {
		t.Errorf("banner %q, want %q", r.OfflineBanner(), want)
	}
	var table, md, html bytes.Buffer
	if err := r.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(table.String(), "WARNING: "+want) {
		t.Errorf("table does not open with the banner:\n%s", table.String())
	}
	headline := "Not training data: 1 of 1 kept dialogues (1 of 1 turns) hold placeholder answers from the offline stand-in."
	if !strings.Contains(md.String(), "> **"+headline+"**") {
		t.Errorf("markdown lacks the banner:\n%s", md.String())
	}
	page := html.String()
	if i := strings.Index(page, `<p class="banner" role="alert" data-offline="1">`+headline+`</p>`); i < 0 || i > strings.Index(page, "<h1>") {
		t.Errorf("HTML lacks the banner before its title:\n%s", page)
	}
	for _, line := range []string{"judge mode (turns): llm 1", "first query written by (dialogues): template 1"} {
		if !strings.Contains(table.String(), line) {
			t.Errorf("table lacks %q:\n%s", line, table.String())
		}
	}
}

func TestReadRunWithoutDialogues(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for _, c := range []dialog.ChatConfig{cfgFor("a", "explain", "go"), cfgFor("b", "fix", "go")} {
		line, _ := json.Marshal(c)
		b.Write(append(line, '\n'))
	}
	os.WriteFile(filepath.Join(dir, "configs.jsonl"), []byte(b.String()+"\n"), 0o644)
	configs, dialogues, err := ReadRun(filepath.Join(dir, "configs.jsonl"), filepath.Join(dir, "dialogues.jsonl"))
	if err != nil || len(configs) != 2 || dialogues != nil {
		t.Fatalf("ReadRun = %d, %v, %v", len(configs), dialogues, err)
	}
	os.WriteFile(filepath.Join(dir, "bad.jsonl"), []byte("{}\n{oops\n"), 0o644)
	if _, _, err := ReadRun(filepath.Join(dir, "bad.jsonl"), filepath.Join(dir, "dialogues.jsonl")); err == nil || !strings.Contains(err.Error(), "bad.jsonl:2: ") {
		t.Errorf("bad line error = %v", err)
	}
}

// leadingFives keeps the leading turns of an ok, online dialogue whose shown
// answer (the candidate with the answer's text) scored 5.
func leadingFives(d dialog.Dialogue) int {
	if d.Status != dialog.StatusOK {
		return 0
	}
	n := 0
	for _, t := range d.Turns {
		score := 0.0
		for _, v := range t.Verdicts {
			if t.Candidates[v.Candidate].Text == t.Answer {
				score = v.Score
			}
		}
		if t.Offline || score < 5 {
			break
		}
		n++
	}
	return n
}
