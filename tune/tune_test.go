package tune

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"dialogfarm/analyst"
	"dialogfarm/capture"
	"dialogfarm/dialog"
	"dialogfarm/dialog/vocab"
	"dialogfarm/internal/llmtest"
	"dialogfarm/judge"
	"dialogfarm/pipeline"
	"dialogfarm/pool"
	"dialogfarm/profiles"
	"dialogfarm/respond"
	"dialogfarm/sft"
)

// cellModel is a fake model whose answers the judge keeps at rates that
// depend on the cell, through the judge's own rules: a code block in
// 45% of answers (the judge deducts missing_code_block from the other
// answers of code intents: generate, fix, tests, docs, optimize,
// refactor). It answers in the query's script. The choice hashes the
// request, so the same request always gets the same answer.
func cellModel(r llmtest.Request) llmtest.Reply {
	q := r.LastUser()
	sum := sha256.Sum256(r.Body)
	x := binary.BigEndian.Uint32(sum[:4])
	text := "Here is what it does: it reads its input, checks each value and returns the result."
	switch loc, _ := vocab.DetectLocale(q); {
	case loc == "ja":
		text = "この関数は入力を読み取り、それぞれの値を確認してから結果を返します。"
	case vocab.Script(q) == vocab.ScriptHan:
		text = "这个函数读取输入，逐个检查每一个值，然后返回计算的结果。"
	case vocab.Script(q) == vocab.ScriptCyrillic:
		text = "Эта функция читает входные данные, проверяет каждое значение и возвращает результат."
	}
	if x%100 < 45 {
		text += "\n\n```\nresult = value + 1\n```\n"
	}
	return llmtest.Reply{Text: text, PromptTokens: 200, CompletionTokens: 100}
}

// standIn is the editor's stand-in for tests: before a drive node runs,
// it drives each config's turns through the run's real responder (the
// pool asking the fake model, the judge's rules) as the plugin's
// requests would, and records the dialogues, so the drive node finds
// every config recorded and starts no editor.
type standIn struct {
	responder *respond.Responder
	mu        sync.Mutex
	configs   map[string]dialog.ChatConfig
}

func newStandIn(tb testing.TB, model *llmtest.Server) *standIn {
	tb.Helper()
	cfg := pool.DefaultConfig()
	cfg.CacheDir, cfg.Retry.MaxAttempts = "", 1
	m := pool.DefaultMemberConfig()
	m.Name, m.BaseURL, m.Model, m.Stream, m.Timeout = "coder", model.URL, "coder", false, 10*time.Second
	m.InputPrice, m.OutputPrice = 1, 2 // USD per million tokens: 0.0004 a turn
	cfg.Members = []pool.MemberConfig{m}
	p, err := pool.New(cfg, zap.NewNop())
	if err != nil {
		tb.Fatal(err)
	}
	j, err := judge.New(judge.DefaultConfig(), nil, zap.NewNop())
	if err != nil {
		tb.Fatal(err)
	}
	s := &standIn{configs: map[string]dialog.ChatConfig{}}
	s.responder = respond.New(p, j, zap.NewNop())
	s.responder.Lookup = func(session string) (dialog.ChatConfig, bool) {
		s.mu.Lock()
		defer s.mu.Unlock()
		c, ok := s.configs[session]
		return c, ok
	}
	return s
}

func (s *standIn) beforeNode(ctx context.Context) func(n *pipeline.Node, in, out map[string]pipeline.Value) error {
	return func(n *pipeline.Node, in, out map[string]pipeline.Value) error {
		if n.Op != "drive" {
			return nil
		}
		data, err := os.ReadFile(in["configs"].Path)
		if err != nil {
			return err
		}
		configs, err := dialog.ReadConfigs(bytesReader(data), in["configs"].Path)
		if err != nil {
			return err
		}
		if _, err := os.Stat(out["dialogues"].Path); err == nil {
			return nil // recorded by an earlier run of the folder
		}
		f, err := os.Create(out["dialogues"].Path)
		if err != nil {
			return err
		}
		defer f.Close()
		enc := json.NewEncoder(f)
		for _, c := range configs {
			d, err := s.drive(ctx, c)
			if err != nil {
				return err
			}
			if err := enc.Encode(d); err != nil {
				return err
			}
		}
		return nil
	}
}

// drive asks each turn of c through the responder.
func (s *standIn) drive(ctx context.Context, c dialog.ChatConfig) (dialog.Dialogue, error) {
	s.mu.Lock()
	s.configs[c.ID] = c
	s.mu.Unlock()
	d := dialog.Dialogue{ConfigID: c.ID, Status: dialog.StatusOK, Config: c, Session: c.ID, StartedAt: time.Unix(0, 0).UTC()}
	msgs := []capture.Message{{Role: "system", Content: "You are Ask."}}
	for i := range c.TotalTurns() {
		q := c.Turns[0].Query
		if i > 0 {
			q = fmt.Sprintf("%s (follow-up %d)", c.Turns[0].Query, i)
		}
		msgs = append(msgs, capture.Message{Role: "user", Content: q})
		body, _ := json.Marshal(map[string]any{"model": "ask", "messages": msgs})
		ans, err := s.responder.Respond(ctx, capture.Request{Session: c.ID, Seq: i + 1, Body: body, Model: "ask", Messages: msgs, N: 1})
		if err != nil {
			return d, err
		}
		d.Turns = append(d.Turns, dialog.Turn{Query: q, Shown: ans.Text, Exchange: dialog.Exchange{Session: c.ID, Seq: i + 1,
			Request: body, Answer: ans.Text, Responder: ans.Responder, Model: ans.Model, Candidates: ans.Candidates, Verdicts: ans.Verdicts}})
		msgs = append(msgs, capture.Message{Role: "assistant", Content: ans.Text})
	}
	return d, nil
}

// keptJSD is, per dimension, the JSD (bits) of the kept dialogues of the
// run folders from the profile's target.
func keptJSD(tb testing.TB, p *profiles.Profile, dirs ...string) map[string]float64 {
	tb.Helper()
	var configs []dialog.ChatConfig
	var ds []dialog.Dialogue
	for _, dir := range dirs {
		c, d, err := analyst.ReadRun(filepath.Join(dir, pipeline.ConfigsFile), filepath.Join(dir, pipeline.DialoguesFile))
		if err != nil {
			tb.Fatal(err)
		}
		configs, ds = append(configs, c...), append(ds, d...)
	}
	cfg := analyst.DefaultReportConfig()
	cfg.KeptTurns = func(d dialog.Dialogue) int { return sft.KeptTurns(d, sft.DefaultOptions()) }
	r := analyst.BuildReport(p, configs, ds, cfg)
	out := map[string]float64{}
	for _, d := range r.Dimensions {
		if d.JSDKept == nil {
			tb.Fatalf("nothing kept in %v", dirs)
		}
		out[d.Dim] = *d.JSDKept
	}
	return out
}

// TestTuneBeatsRun is issue 42's closing check on the offline path: with
// a fake model whose keep rate depends on the cell (through the judge's
// rules), `run` of M dialogues and `tune` (a pilot of P, then run of its
// tuned plan of M-P: the same number of dialogues) are compared by the
// JSD of their kept dialogues from the profile, per dimension, averaged
// over several seeds: one pilot of 60 is one draw, and a lucky one (the
// profile's own seed drew code blocks for 65% of the pilot's code
// answers, against the model's 45%) can hide a real gain or fake one.
// The tuned runs' intent JSD (the dimension the judge deducts by) must at
// least halve, stay under the 0.02, and the mean over the
// dimensions must drop by a quarter. Under the race detector it is
// skipped: `make test` runs it without (11 s against 100 s here), while
// TestTuneReportsWhatTheJudgeNeverKeeps (tune.Run: pilot and tuned plan)
// and pipeline's tests (a run of a --plan file) keep its code paths under
// the detector.
func TestTuneBeatsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("drives 4 x 600 dialogues through the pool and judge")
	}
	if raceEnabled {
		t.Skip("a statistic over 2,400 dialogues: `make test` runs it without the race detector")
	}
	ctx := context.Background()
	const m, pilotN, seeds = 300, 60, 4
	model := llmtest.New(t, cellModel)
	s := newStandIn(t, model)
	repo, err := filepath.Abs("../examples/sample-repo")
	if err != nil {
		t.Fatal(err)
	}
	prof := jaProfile(t)
	p, err := profiles.Load(prof)
	if err != nil {
		t.Fatal(err)
	}
	runRound := func(ctx context.Context, o pipeline.DefaultOptions, out string) error {
		_, err := pipeline.RunDefault(ctx, o, pipeline.RunEnv{Out: out, Log: zap.NewNop(), BeforeNode: s.beforeNode(ctx)})
		return err
	}
	runJSD, tuneJSD := map[string]float64{}, map[string]float64{}
	for seed := int64(1); seed <= seeds; seed++ {
		root := t.TempDir()
		base := pipeline.DefaultOptions{Profile: prof, Repos: []string{repo}, Export: sft.DefaultOptions(), Seed: &seed}

		// run: M dialogues of the fitted plan.
		plain := base
		plain.N = m
		runDir := filepath.Join(root, "run")
		if err := runRound(ctx, plain, runDir); err != nil {
			t.Fatal(err)
		}

		// tune: a pilot, then run --plan of the tuned plan.
		cfg := DefaultConfig()
		cfg.Out, cfg.Run, cfg.Pilot, cfg.MaxDialogues = filepath.Join(root, "tune"), base, pilotN, m
		rep, err := Run(ctx, cfg, runRound, zap.NewNop())
		if err != nil {
			t.Fatal(err)
		}
		if seed == 1 {
			var table strings.Builder
			if err := rep.WriteTable(&table); err != nil {
				t.Fatal(err)
			}
			t.Log("\n" + table.String())
		}
		if rep.Plan.N != m-pilotN || rep.Dialogues != pilotN {
			t.Fatalf("tuned plan of %d dialogues after %d driven, want %d (the budget less the pilot)", rep.Plan.N, rep.Dialogues, m-pilotN)
		}
		tuned := base
		tuned.N, tuned.PlanFile = rep.Plan.N, filepath.Join(cfg.Out, PlanFile)
		tunedDir := filepath.Join(root, "tuned")
		if err := runRound(ctx, tuned, tunedDir); err != nil {
			t.Fatal(err)
		}
		r, tu := keptJSD(t, p, runDir), keptJSD(t, p, filepath.Join(cfg.Out, PilotDir), tunedDir)
		t.Logf("seed %d: intent run %.4f, tune %.4f; low keep: %v", seed, r[vocab.DimIntent], tu[vocab.DimIntent], lowKeepNames(rep))
		for _, dim := range vocab.Dimensions() {
			runJSD[dim] += r[dim] / seeds
			tuneJSD[dim] += tu[dim] / seeds
		}
	}
	meanRun, meanTune := 0.0, 0.0
	for _, dim := range vocab.Dimensions() {
		t.Logf("%-12s mean over %d seeds: run %.4f  tune (pilot+tuned) %.4f", dim, seeds, runJSD[dim], tuneJSD[dim])
		meanRun += runJSD[dim] / 10
		meanTune += tuneJSD[dim] / 10
	}
	t.Logf("mean over dimensions: run %.4f, tune %.4f", meanRun, meanTune)
	if ti := tuneJSD[vocab.DimIntent]; ti > runJSD[vocab.DimIntent]/2 || ti > 0.02 || meanTune > 0.75*meanRun {
		t.Errorf("tune's kept JSD (intent %.4f, mean %.4f) does not beat run's (intent %.4f, mean %.4f)",
			ti, meanTune, runJSD[vocab.DimIntent], meanRun)
	}
}

func dimOf(r *Report, dim string) DimTuning {
	for _, d := range r.Dimensions {
		if d.Dim == dim {
			return d
		}
	}
	return DimTuning{}
}

func lowKeepNames(r *Report) []string {
	var out []string
	for _, v := range r.LowKeep {
		out = append(out, v.Dim+"="+v.Value)
	}
	return out
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

// jaProfile is the default profile with more Japanese (0.15, from
// English), so that a pilot sees enough Japanese dialogues to tell that
// the judge keeps none.
func jaProfile(tb testing.TB) string {
	tb.Helper()
	data, err := os.ReadFile("../profiles/default.yaml")
	if err != nil {
		tb.Fatal(err)
	}
	s := strings.Replace(string(data), "en: 0.70   #", "en: 0.59   #", 1)
	s = strings.Replace(s, "ja: 0.04   #", "ja: 0.15   #", 1)
	if s == string(data) {
		tb.Fatal("profiles/default.yaml changed: the edit did not apply")
	}
	path := filepath.Join(tb.TempDir(), "ja.yaml")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// TestTuneResumes: a tuning stopped in its second round and started
// again with the same arguments finishes without driving a pilot
// dialogue twice and with the round's plan as first written; other
// arguments on the folder are refused.
func TestTuneResumes(t *testing.T) {
	ctx := context.Background()
	model := llmtest.New(t, cellModel)
	s := newStandIn(t, model)
	repo, err := filepath.Abs("../examples/sample-repo")
	if err != nil {
		t.Fatal(err)
	}
	driven := map[string]int{}
	var mu sync.Mutex
	counting := func(fail bool) RoundRunner {
		return func(ctx context.Context, o pipeline.DefaultOptions, out string) error {
			if fail && filepath.Base(out) == "round-2" {
				return context.Canceled // killed as round 2 starts
			}
			before := s.beforeNode(ctx)
			env := pipeline.RunEnv{Out: out, Log: zap.NewNop(), BeforeNode: func(n *pipeline.Node, in, outs map[string]pipeline.Value) error {
				if n.Op == "drive" {
					if _, err := os.Stat(outs["dialogues"].Path); err != nil {
						mu.Lock()
						driven[filepath.Base(out)]++
						mu.Unlock()
					}
				}
				return before(n, in, outs)
			}}
			_, err := pipeline.RunDefault(ctx, o, env)
			return err
		}
	}
	cfg := DefaultConfig()
	cfg.Out, cfg.Pilot, cfg.MaxDialogues, cfg.Rounds = t.TempDir(), 12, 60, 2
	cfg.Run = pipeline.DefaultOptions{Profile: "default", Repos: []string{repo}, Export: sft.DefaultOptions()}
	if _, err := Run(ctx, cfg, counting(true), zap.NewNop()); err == nil {
		t.Fatal("the stopped tuning returned no error")
	}
	tranche, err := os.ReadFile(filepath.Join(cfg.Out, "round-2", "tranche-plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(ctx, cfg, counting(false), zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	if driven[PilotDir] != 1 || driven["round-2"] != 1 {
		t.Errorf("drive nodes that drove: %v; want the pilot and round 2 once each", driven)
	}
	again, _ := os.ReadFile(filepath.Join(cfg.Out, "round-2", "tranche-plan.json"))
	if string(again) != string(tranche) {
		t.Error("the resumed tuning wrote round 2's plan again")
	}
	if rep.Dialogues != 24 || rep.Plan.N != 36 {
		t.Errorf("driven %d, tuned plan %d; want 24 and 36", rep.Dialogues, rep.Plan.N)
	}
	ds, err := os.ReadFile(filepath.Join(cfg.Out, PilotDir, pipeline.DialoguesFile))
	if err != nil || strings.Count(string(ds), "\n") != 12 {
		t.Errorf("pilot dialogues file: %d lines (err %v), want 12", strings.Count(string(ds), "\n"), err)
	}
	cfg.MaxFactor = 3
	if _, err := Run(ctx, cfg, counting(false), zap.NewNop()); err == nil || !strings.Contains(err.Error(), "other arguments") {
		t.Errorf("other arguments on the folder: err %v", err)
	}
}

// englishModel answers every query in English with a code block: the
// judge keeps its answers to English, German, Spanish and French queries
// and deducts locale_mismatch from the rest (zh, ja, ru).
func englishModel(llmtest.Request) llmtest.Reply {
	return llmtest.Reply{Text: "Here is what it does: it reads its input, checks each value and returns the result.\n\n```\nresult = value + 1\n```\n",
		PromptTokens: 200, CompletionTokens: 100}
}

// TestTuneReportsWhatTheJudgeNeverKeeps: a locale the judge keeps none
// of (the model answers Japanese and Chinese queries in English) is not
// oversampled: the tuned plan holds it at its fitted share, and the
// report lists it with its pilot counts and locale_mismatch as the rule
// that deducted most, in tune-report.json and the printed table.
func TestTuneReportsWhatTheJudgeNeverKeeps(t *testing.T) {
	ctx := context.Background()
	s := newStandIn(t, llmtest.New(t, englishModel))
	repo, err := filepath.Abs("../examples/sample-repo")
	if err != nil {
		t.Fatal(err)
	}
	runRound := func(ctx context.Context, o pipeline.DefaultOptions, out string) error {
		_, err := pipeline.RunDefault(ctx, o, pipeline.RunEnv{Out: out, Log: zap.NewNop(), BeforeNode: s.beforeNode(ctx)})
		return err
	}
	cfg := DefaultConfig()
	cfg.Out, cfg.Pilot, cfg.MaxDialogues = t.TempDir(), 60, 160
	cfg.Run = pipeline.DefaultOptions{Profile: jaProfile(t), Repos: []string{repo}, Export: sft.DefaultOptions()}
	rep, err := Run(ctx, cfg, runRound, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + table.String())
	low := map[string]ValueStats{}
	for _, v := range rep.LowKeep {
		low[v.Dim+"="+v.Value] = v
	}
	for _, loc := range []string{"ja", "zh"} {
		v, ok := low["locale="+loc]
		if !ok {
			t.Errorf("locale=%s not reported as kept too little; low keep: %v", loc, lowKeepNames(rep))
			continue
		}
		if v.Dialogues == 0 || v.Kept != 0 || len(v.Deductions) == 0 || v.Deductions[0].Rule != judge.RuleLocaleMismatch {
			t.Errorf("locale=%s: %d dialogues, %d kept, deductions %v; want some, none kept, locale_mismatch first", loc, v.Dialogues, v.Kept, v.Deductions)
		}
		for _, val := range dimOf(rep, vocab.DimLocale).Values {
			if val.Value == loc && (val.Planned > val.Fitted+1.5/float64(rep.Plan.N)) {
				t.Errorf("locale=%s oversampled: planned %.3f, fitted share %.3f", loc, val.Planned, val.Fitted)
			}
		}
	}
	if !strings.Contains(table.String(), "locale_mismatch") {
		t.Error("the printed report does not name the rule that deducted most")
	}
	data, err := os.ReadFile(filepath.Join(cfg.Out, ReportFile))
	if err != nil || !strings.Contains(string(data), `"low_keep"`) || !strings.Contains(string(data), judge.RuleLocaleMismatch) {
		t.Errorf("%s: low_keep with the deductions missing (err %v)", ReportFile, err)
	}
}
