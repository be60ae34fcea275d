package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
	"go.uber.org/zap/zaptest"

	"dialogfarm/analyst"
	"dialogfarm/configgen"
	"dialogfarm/dataset"
	"dialogfarm/dialog"
	"dialogfarm/farm"
	"dialogfarm/pipeline"
	"dialogfarm/profiles"
)

// offlineRun makes a run folder as `run --responder offline` leaves it:
// the sft fixture's dialogues, every one answered by the offline stand-in,
// their configs, and a run.json saying whether the run exported them.
func offlineRun(tb testing.TB, allowOffline bool) string {
	tb.Helper()
	run := filepath.Dir(fixtureDialogues(tb))
	ds := readTestDialogues(tb, filepath.Join(run, "dialogues.jsonl"))
	var dl, cl bytes.Buffer
	for _, d := range ds {
		d.Offline = true
		noTestErr(tb, writeLine(&dl, d))
		noTestErr(tb, writeLine(&cl, d.Config))
	}
	noTestErr(tb, os.WriteFile(filepath.Join(run, "dialogues.jsonl"), dl.Bytes(), 0o600))
	noTestErr(tb, os.WriteFile(filepath.Join(run, "configs.jsonl"), cl.Bytes(), 0o600))
	five := 5.0
	m, _ := json.Marshal(pipeline.Manifest{Profile: "default", N: len(ds), Seed: 42, Format: "openai", Meta: "sidecar",
		MinScore: &five, AllowOffline: allowOffline})
	noTestErr(tb, os.WriteFile(filepath.Join(run, "run.json"), m, 0o600))
	return run
}

// TestReportRUN: report RUN takes the profile and the offline setting from
// run.json (the demo's `report out/demo` counts what the run exported);
// without --allow-offline on a run that did not export them, the offline
// turns are reported as not counted instead of a silent 0 kept.
func TestReportRUN(t *testing.T) {
	run := offlineRun(t, true)
	out := runFront(t, "report", run)
	if !strings.Contains(out, "10 dialogues") || strings.Contains(out, "not counted as kept") {
		t.Errorf("report on a run made with --allow-offline:\n%s", out)
	}
	var r analyst.Report
	noTestErr(t, json.Unmarshal(readTestFile(t, filepath.Join(run, "report.json")), &r))
	if r.Keep.KeptTurns == 0 || r.Kept.OfflineDialogues == 0 || !strings.Contains(out, "WARNING: ") {
		t.Errorf("report RUN kept no turn of a run that exported its offline answers")
	}

	run = offlineRun(t, false)
	out = runFront(t, "report", run)
	if !strings.Contains(out, "not counted as kept: 6 turns of 5 dialogues answered by the offline stand-in") {
		t.Errorf("report on an offline run without --allow-offline does not say why nothing is kept:\n%s", out)
	}
	if out := runFront(t, "report", run, "--allow-offline"); strings.Contains(out, "not counted as kept") {
		t.Errorf("--allow-offline still leaves turns uncounted:\n%s", out)
	}

	// The older --run still names the run, noted on stderr.
	var stdout, stderr bytes.Buffer
	err := run2(t, []string{"report", "--run", run, "--format", "markdown"}, &stdout, &stderr)
	if err != nil || !strings.HasPrefix(stdout.String(), "## Fidelity report: profile default") || !strings.Contains(stderr.String(), "--run is deprecated") {
		t.Errorf("report --run: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	if _, err := runPoolCLI(t, "report", run, "--run", t.TempDir()); err == nil || !strings.Contains(err.Error(), "name two runs") {
		t.Errorf("RUN and another --run: err = %v", err)
	}
	if _, err := runPoolCLI(t, "report"); err == nil || !strings.Contains(err.Error(), "dialogfarm report RUN") {
		t.Errorf("report without a run: err = %v", err)
	}
	noTestErr(t, os.Remove(filepath.Join(run, "run.json")))
	if _, err := runPoolCLI(t, "report", run); err == nil || !strings.Contains(err.Error(), "give --profile") {
		t.Errorf("report on a folder without run.json nor --profile: err = %v", err)
	}
}

func run2(tb testing.TB, args []string, stdout, stderr *bytes.Buffer) error {
	tb.Helper()
	return run(context.Background(), args, stdout, stderr)
}

// TestExportAndJudgeRUN: export RUN writes RUN/dataset with the run's
// settings (its offline setting and its seed for the split); judge RUN
// writes RUN/judged.jsonl; a dialogues file still works as RUN.
func TestExportAndJudgeRUN(t *testing.T) {
	run := offlineRun(t, true)
	out, err := runPoolCLI(t, "export", run)
	if err != nil {
		t.Fatalf("export RUN: %v\n%s", err, out)
	}
	var st dataset.Stats
	noTestErr(t, json.Unmarshal(readTestFile(t, filepath.Join(run, "dataset", "stats.json")), &st))
	if st.Seed != 42 || st.Records == 0 || !strings.Contains(out, filepath.Join(run, "dataset")) {
		t.Errorf("export RUN: seed %d, %d records (want the run's seed 42 and its offline records)\n%s", st.Seed, st.Records, out)
	}
	out, err = runPoolCLI(t, "export", run, "--allow-offline=false", "--seed", "3", "--out", filepath.Join(t.TempDir(), "ds"))
	if err == nil || !strings.Contains(err.Error(), "no record to write") || !strings.Contains(err.Error(), "offline 9") {
		t.Errorf("flags over the run's settings: %v\n%s", err, out)
	}
	out, err = runPoolCLI(t, "export", run, "--allow-offline=false", "--allow-empty", "--out", filepath.Join(t.TempDir(), "ds"))
	if err != nil || !strings.Contains(out, "wrote 0 records") {
		t.Errorf("--allow-empty: %v\n%s", err, out)
	}

	out, err = runPoolCLI(t, "judge", run, "--rules-only")
	if err != nil {
		t.Fatalf("judge RUN: %v\n%s", err, out)
	}
	judged := filepath.Join(run, "judged.jsonl")
	if n := len(readTestDialogues(t, judged)); n != 11 || !strings.Contains(out, judged) {
		t.Errorf("judge RUN wrote %d dialogues to %s\n%s", n, judged, out)
	}
	// A dialogues file as RUN: judge writes NAME.judged.jsonl next to it;
	// export needs --out.
	if out, err := runPoolCLI(t, "judge", judged, "--rules-only"); err != nil || !strings.Contains(out, filepath.Join(run, "judged.judged.jsonl")) {
		t.Errorf("judge FILE: %v\n%s", err, out)
	}
	if _, err := runPoolCLI(t, "export", judged); err == nil || !strings.Contains(err.Error(), "--out is required") {
		t.Errorf("export FILE without --out: err = %v", err)
	}
	if _, err := runPoolCLI(t, "export", filepath.Join(run, "nothing-here")); err == nil || !strings.Contains(err.Error(), "nothing-here") {
		t.Errorf("export of a missing RUN: err = %v", err)
	}
}

// TestFlagUsagesReadCleanly: pflag takes a backquoted word of a usage as
// the flag's value name, so "a `tasks build` folder" read as "--tasks
// tasks build"; no usage backquotes anything but a value name in capitals.
func TestFlagUsagesReadCleanly(t *testing.T) {
	a := &app{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, v: viper.New()}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, fs := range []*pflag.FlagSet{c.LocalFlags(), c.PersistentFlags()} {
			fs.VisitAll(func(f *pflag.Flag) {
				name, _ := pflag.UnquoteUsage(f)
				if strings.Contains(f.Usage, "`") && strings.ToUpper(name) != name {
					t.Errorf("%s --%s reads as \"--%s %s\": %q", c.CommandPath(), f.Name, f.Name, name, f.Usage)
				}
			})
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRoot(a))
}

// TestRunEndsWithWhereToLook: run, on a folder whose configs are all
// recorded (so no editor starts), ends by printing where the HTML report,
// the dashboard and the dataset folder are, and run.json holds the run's
// profile, seed and offline setting for report, export and judge.
func TestRunEndsWithWhereToLook(t *testing.T) {
	ctx := context.Background()
	repo, err := filepath.Abs(filepath.Join("..", "..", "examples", "sample-repo"))
	noTestErr(t, err)
	out := filepath.Join(t.TempDir(), "run")
	noTestErr(t, os.MkdirAll(out, 0o700))
	prof, err := profiles.Load("default")
	noTestErr(t, err)
	pl, err := analyst.MakePlan(prof, analyst.PlanConfig{N: 4, Seed: 7})
	noTestErr(t, err)
	cc := configgen.DefaultConfig()
	cc.Repos, cc.Seed = []string{repo}, 7
	gen, err := configgen.Generate(ctx, pl, cc, zaptest.NewLogger(t))
	noTestErr(t, err)
	noTestErr(t, configgen.WriteConfigs(filepath.Join(out, "configs.jsonl"), gen.Configs))
	var dl bytes.Buffer
	for _, c := range gen.Configs {
		body, _ := json.Marshal(map[string]any{"model": "ask", "messages": []dialog.Message{{Role: "user", Content: c.Turns[0].Query}}})
		answer := "[offline placeholder] an answer"
		noTestErr(t, writeLine(&dl, dialog.Dialogue{ConfigID: c.ID, Status: dialog.StatusOK, Config: c, Offline: true,
			Turns: []dialog.Turn{{Query: c.Turns[0].Query, Shown: answer, Exchange: dialog.Exchange{Request: body, Answer: answer, Offline: true,
				Candidates: []dialog.Candidate{{Text: answer}}, Verdicts: []dialog.Verdict{{Score: 5, Rank: 1}}}}}}))
	}
	noTestErr(t, os.WriteFile(filepath.Join(out, "dialogues.jsonl"), dl.Bytes(), 0o600))

	stdout, err := runPoolCLI(t, "run", "--root", filepath.Join("..", ".."), "--repos", repo, "--n", "4", "--seed", "7",
		"--out", out, "--responder", "offline", "--allow-offline")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stdout)
	}
	want := "report: " + filepath.Join(out, "report.html") + "\ndataset: " + filepath.Join(out, "dataset") +
		"\ndashboard: " + filepath.Join(out, "dashboard.html") + "\n"
	if !strings.HasSuffix(stdout, want) || !strings.Contains(stdout, "0 ok, 0 failed, 4 already recorded") {
		t.Errorf("run's output does not end with where to look (%q):\n%s", want, stdout)
	}
	for _, f := range []string{"report.html", "dashboard.html", filepath.Join("dataset", "README.md")} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("run printed a path it did not write: %v", err)
		}
	}
	m, ok, err := pipeline.ReadManifest(out)
	if err != nil || !ok || m.Profile != "default" || m.Seed != 7 || !m.AllowOffline || m.MinScore == nil || *m.MinScore != 5 {
		t.Errorf("run.json %+v ok %v err %v", m, ok, err)
	}
	// report RUN counts the offline answers the run exported.
	if rep := runFront(t, "report", out); !strings.Contains(rep, "4 kept") {
		t.Errorf("report RUN after run --allow-offline:\n%s", rep)
	}
}

// TestStatusNATSReadsRUN: status --nats URL RUN counts the run named in
// RUN/farm.json (what --run NAME said), and says so when RUN has none.
func TestStatusNATSReadsRUN(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := farm.StartServer(ctx, farm.ServerConfig{StoreDir: t.TempDir(), Listen: "127.0.0.1:0", InsecureAnonymous: true})
	noTestErr(t, err)
	defer srv.Shutdown()
	nc, err := srv.Connect()
	noTestErr(t, err)
	defer nc.Close()
	js, err := farm.JetStream(nc)
	noTestErr(t, err)
	q, err := farm.Setup(ctx, js, farm.DefaultQueueConfig())
	noTestErr(t, err)
	// Two jobs of this run, one of another: only this run's count.
	_, err = q.Enqueue(ctx, "host-abc", []dialog.ChatConfig{{ID: "a"}, {ID: "b"}}, 3, nil)
	noTestErr(t, err)
	_, err = q.Enqueue(ctx, "other", []dialog.ChatConfig{{ID: "c"}}, 3, nil)
	noTestErr(t, err)
	run := t.TempDir()
	if _, err := runPoolCLI(t, "status", "--nats", srv.ClientURL(), run); err == nil || !strings.Contains(err.Error(), "farm.json") {
		t.Errorf("status --nats on a run folder without farm.json: err = %v", err)
	}
	noTestErr(t, os.WriteFile(filepath.Join(run, pipeline.FarmRunFile), []byte(`{"run":"host-abc"}`+"\n"), 0o600))
	out, err := runPoolCLI(t, "status", "--nats", srv.ClientURL(), run)
	if err != nil {
		t.Fatalf("status --nats URL RUN: %v\n%s", err, out)
	}
	byName, err := runPoolCLI(t, "status", "--nats", srv.ClientURL(), "--run", "host-abc")
	if err != nil || byName != out {
		t.Errorf("RUN and --run NAME differ: %v\n%s\n---\n%s", err, out, byName)
	}
	all, err := runPoolCLI(t, "status", "--nats", srv.ClientURL())
	if err != nil || all == out {
		t.Errorf("the whole farm reads as the run: %v\n%s", err, all)
	}
	t.Logf("run:\n%s\nfarm:\n%s", out, all)
}
