package configgen

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"dialogfarm/analyst"
	"dialogfarm/analyst/realism"
	"dialogfarm/dialog"
	"dialogfarm/dialog/vocab"
	"dialogfarm/internal/llmtest"
)

const referenceLogs = "../analyst/testdata/reference/logs.jsonl"

// splitReference writes the reference logs' odd sessions to a file (the
// held-out set realism is measured against) and returns the even ones
// as exemplars.
func splitReference(tb testing.TB) (heldOut string, ex []Exemplar) {
	tb.Helper()
	f, err := os.Open(referenceLogs)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	recs, _, err := analyst.ReadLogs(f, analyst.Mapping{})
	if err != nil {
		tb.Fatal(err)
	}
	odd := map[string]bool{}
	for i, s := range analyst.GroupSessions(recs) {
		if i%2 == 1 {
			odd[s.ID] = true
			continue
		}
		o := analyst.Observe(s)
		ex = append(ex, Exemplar{Query: s.First.Query, Intent: vocab.IntentOf(s.First.Query), Locale: o.Locale, Style: o.QueryStyle})
	}
	heldOut = filepath.Join(tb.TempDir(), "held-out.jsonl")
	out, err := os.Create(heldOut)
	if err != nil {
		tb.Fatal(err)
	}
	data, _ := os.ReadFile(referenceLogs)
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	id := regexp.MustCompile(`"session_id":"([^"]+)"`)
	for sc.Scan() {
		if m := id.FindStringSubmatch(sc.Text()); m != nil && odd[m[1]] {
			out.WriteString(sc.Text() + "\n")
		}
	}
	if err := out.Close(); err != nil {
		tb.Fatal(err)
	}
	return heldOut, ex
}

var example = regexp.MustCompile(`(?s)<example>\n(.*?)\n</example>`)

// TestExemplarConditionedQueries: the query model's prompt shows
// redacted exemplars of the config's cell. The fake model here answers
// with the prompt's first exemplar, as a model that imitates them
// perfectly would; what it shows is that the exemplars reach the prompt
// and how the realism measures respond, not how close a real model gets.
// It logs the realism of canonical templates (one wording, no typos: the
// templates before the paraphrase banks), of the banks and of the
// exemplar-conditioned queries against the held-out half of the
// reference logs.
func TestExemplarConditionedQueries(t *testing.T) {
	heldOut, ex := splitReference(t)
	ex = append(ex, Exemplar{Query: "why does login fail with password = \"hunter2-Secret-99\"", Intent: "fix", Locale: "en", Style: "normal"})
	fit, err := analyst.Analyze(t.Context(), analyst.AnalyzeConfig{LogsPath: referenceLogs, Classifier: analyst.KeywordClassifier{}, Name: "ref", Seed: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := analyst.MakePlan(fit.Profile, analyst.PlanConfig{N: 400, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.New(t, func(r llmtest.Request) llmtest.Reply {
		if m := example.FindStringSubmatch(r.LastUser()); m != nil {
			return llmtest.Reply{Text: m[1]}
		}
		return llmtest.Reply{Text: "what does this do"}
	})
	cfg := DefaultConfig()
	cfg.Repos = coherenceRepos
	templ := generate(t, pl, cfg)
	canonical := make([]dialog.ChatConfig, len(templ.Configs))
	copy(canonical, templ.Configs)
	ct := newTemplater()
	ct.canonical = true
	cfg.Model, cfg.Exemplars = modelConfig(srv.URL), ex
	cond := generate(t, pl, cfg)
	for _, r := range srv.Requests() {
		user := r.LastUser()
		if strings.Contains(user, "hunter2-Secret-99") {
			t.Errorf("an exemplar's secret reached the prompt:\n%s", user)
		}
		if !strings.Contains(user, "<example>") {
			t.Errorf("a prompt without exemplars:\n%s", user)
		}
	}
	// The canonical templates: each config's first wording, as before the banks.
	idx := 0
	for i := range canonical {
		c := &canonical[i]
		if c.Instruction == dialog.InstructionCommand {
			continue
		}
		idx++
		s := querySpec{Intent: c.Intent, Locale: c.Locale, Difficulty: c.Difficulty, Style: c.QueryStyle, Instruction: c.Instruction,
			Reference: c.Reference, Language: c.Language, File: c.File, Symbol: c.Symbol, OpenFiles: c.OpenFiles}
		c.Turns = []dialog.TurnSpec{{Query: ct.query(s, queryRNG(1, idx))}}
	}
	for _, run := range []struct {
		name    string
		configs []dialog.ChatConfig
	}{{"canonical templates", canonical}, {"paraphrase banks", templ.Configs}, {"exemplar-conditioned (fake)", cond.Configs}} {
		r, err := analyst.Realism(run.configs, heldOut, analyst.Mapping{}, realism.DefaultThresholds())
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s:\n%s", run.name, r.Summary())
	}
	t.Logf("exemplar-conditioned: %d model queries kept, %d replaced by templates as incoherent", cond.Stats.QuerySources["llm"], cond.Stats.ModelIncoherent)
	if cond.Stats.QuerySources["llm"] == 0 {
		t.Error("no exemplar-conditioned query was kept")
	}
}
