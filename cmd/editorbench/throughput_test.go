package main

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"dialogfarm/adapter"
	"dialogfarm/dialog"
	"dialogfarm/driver/workbench"
)

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// dlg is a dialogue of a session from t0+start for secs seconds, with
// two turns of 1 s each, 0.75 s of it the model's.
func dlg(session string, start, secs float64, ok bool) dialog.Dialogue {
	d := dialog.Dialogue{ConfigID: session + "-" + time.Duration(start*float64(time.Second)).String(), Session: session,
		StartedAt: t0.Add(time.Duration(start * float64(time.Second))), Seconds: secs, Status: dialog.StatusOK}
	if !ok {
		d.Status = dialog.StatusFailed
	}
	for n := 1; n <= 2; n++ {
		tn := dialog.Turn{Steps: []dialog.StepTiming{
			{Step: "turn" + string(rune('0'+n)) + "_query", Seconds: 0.1},
			{Step: "turn" + string(rune('0'+n)) + "_answer", Seconds: 0.9},
		}}
		tn.Exchange.Seconds = 0.75
		d.Turns = append(d.Turns, tn)
	}
	return d
}

func TestWindowsWarmAndSteadyShare(t *testing.T) {
	// s1 loads in its first dialogue (0-30 s), then drives two more;
	// s2's first attempt fails (5-40 s) and the farm retries it (40-46 s).
	s1a, s1b, s1c := dlg("s1", 0, 30, true), dlg("s1", 30, 6, true), dlg("s1", 36, 6, true)
	s2fail, s2ok := dlg("s2", 5, 35, false), dlg("s2", 40, 6, true)
	at, firsts := windowsWarm([]dialog.Dialogue{s2fail, s1a, s1b, s1c, s2ok})
	if want := t0.Add(40 * time.Second); !at.Equal(want) {
		t.Errorf("warm at %v, want %v (the end of s2's first attempt)", at.Sub(t0), want.Sub(t0))
	}
	if len(firsts) != 2 || !firsts[firstKey(s1a)] || !firsts[firstKey(s2fail)] {
		t.Errorf("first dialogues = %v, want s1's at 0 s and s2's failed attempt at 5 s", firsts)
	}
	// From 40 to 46 s: s1c is inside for 2 of its 6 s, s2ok wholly; the
	// failed attempt and the earlier dialogues count nothing.
	got := shareIn([]dialog.Dialogue{s1a, s1b, s1c, s2ok, s2fail}, at, t0.Add(46*time.Second))
	if math.Abs(got-(1+2.0/6)) > 1e-9 {
		t.Errorf("steady share = %.4f, want %.4f", got, 1+2.0/6)
	}
}

func TestLevelAccounting(t *testing.T) {
	a := levelAcc{lv: level{Sessions: 2, Rounds: 2, ConfigsPerRound: 6}}
	cpu := func(editor, browser, self float64) cpuSnapshot {
		return cpuSnapshot{editor: editor, browser: browser, self: self,
			classes: map[string]float64{"code-server main": editor, "Chromium renderers": browser}}
	}
	// Round 1: 6 ok in 60 s, every window warm after 20 s, 3.5 dialogues
	// in the 40 s after; round 2: 5 ok, 1 failed after 2 retried
	// attempts, in 120 s, no steady span.
	a.add(levelRun{configs: 6, ok: 6, wall: time.Minute, warm: 20 * time.Second, steady: 40 * time.Second, steadyDialogues: 3.5,
		whole: cpu(6, 18, 1.2), steadyCPU: cpu(2, 5, 0.35), peakEditor: 600 << 20, peakBrow: 1400 << 20, peakPSS: 1500 << 20,
		warmWindows: []dialog.Dialogue{dlg("s1", 20, 5, true), dlg("s2", 21, 7, true)}})
	a.add(levelRun{configs: 6, ok: 5, failed: 1, retried: 2, wall: 2 * time.Minute,
		whole: cpu(9, 27, 1.8), peakEditor: 700 << 20, peakBrow: 1600 << 20, peakPSS: 1700 << 20})
	l := a.level()
	if l.OK != 11 || l.Failed != 1 || l.Retried != 2 {
		t.Errorf("ok/failed/retried = %d/%d/%d, want 11/1/2", l.OK, l.Failed, l.Retried)
	}
	if l.PerMinute != (stats{N: 2, Median: 4.25, Min: 2.5, Max: 6}) {
		t.Errorf("whole-run dialogues/min = %+v, want 6 and 2.5", l.PerMinute)
	}
	if l.SteadyPerMinute != (stats{N: 1, Median: 5.25, Min: 5.25, Max: 5.25}) || l.StartupSeconds.Median != 20 {
		t.Errorf("steady = %+v after %+v s, want 5.25/min (3.5 in 40 s) after 20 s", l.SteadyPerMinute, l.StartupSeconds)
	}
	near := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %.4f, want %.4f", name, got, want)
		}
	}
	near("CPU cores code-server", l.CPUEditor, 15.0/180)
	near("CPU cores Chromium", l.CPUBrowser, 45.0/180)
	near("CPU cores this process", l.CPUSelf, 3.0/180)
	near("whole-run CPU s per dialogue", l.Whole.Total, 60.0/11)
	near("whole-run Chromium renderers per dialogue", l.Whole.ByClass["Chromium renderers"], 45.0/11)
	near("steady CPU s per dialogue", l.Steady.Total, 7/3.5)
	near("steady this process per dialogue", l.Steady.Self, 0.35/3.5)
	near("peak RSS code-server (median of rounds)", l.PeakRSSEditorMiB, 650)
	if l.DialogueSeconds.N != 2 || l.TurnSeconds.N != 4 || l.TurnOverhead.Median != 0.25 || l.ModelSeconds.Median != 0.75 {
		t.Errorf("warm-window figures: dialogues %+v, turns %+v, overhead %+v, model %+v; want 2 dialogues, 4 turns of 1 s, 0.75 s model",
			l.DialogueSeconds, l.TurnSeconds, l.TurnOverhead, l.ModelSeconds)
	}
}

func TestTargetsAgainstOneSimulator(t *testing.T) {
	rep := &report{Throughput: []level{
		{Sessions: 1, PerMinute: stats{N: 2, Median: 10}, SteadyPerMinute: stats{N: 2, Median: 12}, Steady: cpuPerDialogue{Total: 4},
			Whole: cpuPerDialogue{Total: 9}, PeakRSSEditorMiB: 500, PeakRSSBrowserMiB: 1000, PeakPSSMiB: 1100},
		{Sessions: 4, PerMinute: stats{N: 2, Median: 33}, SteadyPerMinute: stats{N: 2, Median: 30}, Steady: cpuPerDialogue{Total: 3},
			Whole: cpuPerDialogue{Total: 5}, PeakRSSEditorMiB: 1500, PeakRSSBrowserMiB: 2500, PeakPSSMiB: 2600},
	}, Queue: &queueFigures{CPUMicros: stats{N: 5, Median: 2300}}}
	ts := targets(rep, 2*time.Second)
	if rep.Throughput[1].Ratio != 3.3 || rep.Throughput[1].SteadyRatio != 2.5 {
		t.Errorf("4-sim ratios = %.2f whole, %.2f steady; want 3.30 and 2.50", rep.Throughput[1].Ratio, rep.Throughput[1].SteadyRatio)
	}
	want := map[string]struct {
		value float64
		met   bool
	}{
		"4 simulators vs 1: dialogues/min, 2 s model, whole run incl. window start-up (0.8x linear)": {3.3, true},
		"  the same, steady (every window warm)":                                                     {2.5, false},
		"CPU seconds per dialogue beyond model time (code-server + Chromium), steady, worst level":   {4, false},
		"  the same over the whole run (window start-up included), worst level":                      {9, false},
		"RSS per extra simulator (code-server + Chromium)":                                           {2500.0 / 3, false},
		"  diagnostic: the same as PSS (shared pages counted once)":                                  {500, true},
		"queue CPU per job (BenchmarkJobOverhead; bar: 1% of the 1.5 s per dialogue)":                {2.3, true},
	}
	for _, tg := range ts {
		if strings.HasPrefix(tg.Name, "per-turn") {
			t.Errorf("target %q without latency runs", tg.Name)
		}
		w, ok := want[tg.Name]
		if !ok {
			continue
		}
		delete(want, tg.Name)
		if math.Abs(tg.Value-w.value) > 1e-9 || tg.Met != w.met || !tg.Known {
			t.Errorf("%s: %.4f met %v known %v; want %.4f met %v", tg.Name, tg.Value, tg.Met, tg.Known, w.value, w.met)
		}
	}
	for name := range want {
		t.Errorf("no target %q", name)
	}
	var b strings.Builder
	rep.CPUs, rep.Runs, rep.PerSession = 2, 2, 12
	rep.Throughput[0].Rounds, rep.Throughput[0].ConfigsPerRound = 2, 12
	rep.Throughput[1].Rounds, rep.Throughput[1].ConfigsPerRound, rep.Throughput[1].SteadyPerMinute = 2, 48, stats{}
	if err := rep.print(&b); err != nil {
		t.Fatal(err)
	}
	for _, re := range []string{`(?m)^4\s+2 x 48\s+33\.0 \(0\.0-0\.0\)\s+3\.30x\s+-\s+-`, `memory per extra simulator, isolation window \(peak at 4 sims minus peak at 1, over 3\): RSS 833 MiB, PSS 500 MiB`,
		`CPU time per job\s+2300 µs`, `total\s+4\.00 s\s+100%\s+9\.00 s\s+-\s+5\.00 s`, `4 sims: - CPU seconds per dialogue steady, 5\.00 over the whole run`, `\(- : no steady span`} {
		if !regexp.MustCompile(re).MatchString(b.String()) {
			t.Errorf("report does not match %q:\n%s", re, b.String())
		}
	}
}

func TestCPUBetween(t *testing.T) {
	s := &rssSampler{}
	for i, v := range []float64{0, 1, 3, 6} {
		s.history = append(s.history, cpuSnapshot{at: t0.Add(time.Duration(i) * time.Second), editor: v, browser: 2 * v, self: v / 10,
			classes: map[string]float64{"extension host": v}})
	}
	// From 0.5 s to 2.5 s: the last sample at or before 0.5 s (0) to the
	// first at or after 2.5 s (6), so the span is covered whole.
	d := s.cpuBetween(t0.Add(500*time.Millisecond), t0.Add(2500*time.Millisecond))
	if d.editor != 6 || d.browser != 12 || d.self != 0.6 || d.classes["extension host"] != 6 {
		t.Errorf("cpuBetween(0.5 s, 2.5 s) = %+v, want 6, 12, 0.6", d)
	}
	if d := s.cpuBetween(t0.Add(time.Second), t0.Add(2*time.Second)); d.editor != 2 {
		t.Errorf("cpuBetween(1 s, 2 s) = %+v, want editor 2", d)
	}
}

func TestReadQueueBench(t *testing.T) {
	path := filepath.Join(t.TempDir(), "farm-bench.txt")
	out := "goos: linux\npkg: dialogfarm/farm\n" +
		"BenchmarkJobOverhead-2   \t     500\t   3313110 ns/op\t      2552 cpu-µs/job\t      3312 µs/job\n" +
		"BenchmarkJobOverhead-2   \t     500\t 122601197 ns/op\t      3629 cpu-µs/job\t    122601 µs/job\n" +
		"BenchmarkJobOverhead-2   \t     500\t   2925352 ns/op\t      2264 cpu-µs/job\t      2924 µs/job\nPASS\n"
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	q, err := readQueueBench(path)
	if err != nil {
		t.Fatal(err)
	}
	if q.WallMicros != (stats{N: 3, Median: 3312, Min: 2924, Max: 122601}) || q.CPUMicros != (stats{N: 3, Median: 2552, Min: 2264, Max: 3629}) {
		t.Errorf("queue figures = %+v", q)
	}
	if err := os.WriteFile(path, []byte("PASS\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readQueueBench(path); err == nil {
		t.Error("a file without BenchmarkJobOverhead lines was read")
	}
}

func TestSummaryOfTwoReports(t *testing.T) {
	dir := t.TempDir()
	two := &report{ModelDelay: 2, LoadSeen: stats{Min: 0.5, Max: 1.5}, Throughput: []level{
		{Sessions: 1, Rounds: 2, ConfigsPerRound: 12, PerMinute: stats{N: 2, Median: 8}, Ratio: 1, SteadyPerMinute: stats{N: 2, Median: 10}, SteadyRatio: 1,
			Steady: cpuPerDialogue{Total: 3.5}, Whole: cpuPerDialogue{Total: 6}, OK: 24, PeakRSSEditorMiB: 600, PeakRSSBrowserMiB: 1100},
		{Sessions: 4, Rounds: 2, ConfigsPerRound: 48, PerMinute: stats{N: 2, Median: 26}, Ratio: 3.25, Whole: cpuPerDialogue{Total: 4}, OK: 95},
	}, Queue: &queueFigures{WallMicros: stats{N: 5, Median: 3100}, CPUMicros: stats{N: 5, Median: 2400}},
		Targets: []target{newTarget("4 simulators vs 1", 3.25, true, ">=", 3.2, "x")}}
	ten := &report{ModelDelay: 10, Throughput: []level{{Sessions: 8, Rounds: 1, ConfigsPerRound: 40, PerMinute: stats{N: 1, Median: 15}, OK: 40}},
		Targets: []target{newTarget("8 simulators vs 1", 5.1, true, ">=", 6.4, "x")}}
	// One simulator on the 4-simulator level's 48 configs.
	equal := &report{ModelDelay: 2, Throughput: []level{{Sessions: 1, Rounds: 1, ConfigsPerRound: 48, PerMinute: stats{N: 1, Median: 10.4},
		SteadyPerMinute: stats{N: 1, Median: 11}, OK: 48}},
		Targets: []target{newTarget("1 simulators vs 1", 0, false, ">=", 0.8, "x"), newTarget("UI time per dialogue", 0.7, true, "<=", 0.66, " s")}}
	// A standing worker's 16 warm windows on the same model: no
	// equal-work ratio against the fresh 1 x 48.
	standing := &report{ModelDelay: 2, Standing: true, Throughput: []level{
		{Sessions: 1, Rounds: 1, ConfigsPerRound: 4, PerMinute: stats{N: 1, Median: 2.9}, Ratio: 1, OK: 4},
		{Sessions: 16, Rounds: 1, ConfigsPerRound: 48, PerMinute: stats{N: 1, Median: 34.1}, Ratio: 11.76, OK: 48},
	}, Targets: []target{newTarget("issue 43: 16 simulators vs 1: dialogues/min, standing worker (windows warm) (0.75x linear)", 11.76, true, ">=", 12, "x")}}
	// 8 windows on 4 repositories' configs: no equal-work ratio against
	// the 1 x 48 on one.
	fourRepos := &report{ModelDelay: 2, Repos: 4, Throughput: []level{{Sessions: 8, Rounds: 1, ConfigsPerRound: 48, PerMinute: stats{N: 1, Median: 20}, OK: 48}}}
	// 3 simulators each with a code-server of its own on 48 configs: no
	// equal-work ratio against the window simulator's 1 x 48.
	isolated := &report{ModelDelay: 2, Isolation: "editor", Throughput: []level{{Sessions: 3, Rounds: 1, ConfigsPerRound: 48, PerMinute: stats{N: 1, Median: 25}, OK: 48}}}
	var paths []string
	for i, r := range []*report{two, ten, equal, standing, fourRepos, isolated} {
		p := filepath.Join(dir, string(rune('a'+i))+".json")
		if err := writeJSON(p, []*report{r}); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	// A -startup report: window 1 12 CPU-s, window 2 2.5.
	start := &startupFigures{Windows: 2}
	for range 3 {
		start.Runs = append(start.Runs, startupRun{Variant: "default", OK: true, Phases: []startupPhase{
			{Name: "start", CPU: 3}, {Name: "window 1 first", CPU: 10}, {Name: "window 1 warm", CPU: 2},
			{Name: "window 2 first", CPU: 3.5}, {Name: "window 2 warm", CPU: 2}}})
	}
	startPath := filepath.Join(dir, "startup.json")
	if err := writeStartupJSON(startPath, start); err != nil {
		t.Fatal(err)
	}
	reps, starts, err := readReports(append(paths, startPath))
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) != len(paths) || len(starts) != 1 {
		t.Fatalf("read %d throughput and %d start-up reports, want %d and 1", len(reps), len(starts), len(paths))
	}
	var b strings.Builder
	if err := printSummary(&b, reps, starts); err != nil {
		t.Fatal(err)
	}
	for _, re := range []string{
		`(?m)^2 s\s+fresh\s+1\s+2 x 12\s+1\s+8\.0\s+1\.00x\s+10\.0\s+1\.00x\s+0\.00\s+3\.50 \(6\.00\)\s+1700 MiB\s+24/24`,
		`(?m)^2 s\s+fresh\s+4\s+2 x 48\s+1\s+26\.0\s+3\.25x\s+-\s+-\s+0\.00\s+- \(4\.00\)\s+0 MiB\s+95/96`,
		`(?m)^10 s\s+fresh\s+8\s+1 x 40\s+1\s+15\.0`,
		`queue per job: 3100 µs wall, 2400 µs CPU \(medians of 5 runs\)`,
		`2 s model run \(fresh worker\): 4 simulators vs 1\s+3\.25x >= 3\.20x\s+MET`,
		`10 s model run \(fresh worker\): 8 simulators vs 1\s+5\.10x >= 6\.40x\s+NOT MET`,
		`(?m)^2 s\s+fresh\s+1\s+1 x 48\s+1\s+10\.4`,
		`2 s model run \(fresh worker\): UI time per dialogue\s+0\.70 s <= 0\.66 s\s+NOT MET`,
		`2 s model: 4 simulators vs 1 on the same 48 configs, whole run incl\. window start-up \(0\.8x linear\)\s+2\.50x >= 3\.20x\s+NOT MET`,
		`  the same, steady \(every window warm\)\s+- >= 3\.20x\s+NOT MEASURED`,
		`(?m)^2 s\s+standing\s+16\s+1 x 48\s+1\s+34\.1\s+11\.76x`,
		`(?m)^2 s\s+fresh\s+8\s+1 x 48\s+4\s+20\.0`,
		`2 s model run \(standing worker\): issue 43: 16 simulators vs 1: dialogues/min, standing worker \(windows warm\) \(0\.75x linear\)\s+11\.76x >= 12\.00x\s+NOT MET`,
		`start-up runs \(2 windows each\): issue 43: the first window's start with code-server's and Chromium's, CPU-s \(median of 3 runs\)\s+12\.00 s <= 3\.00 s\s+NOT MET`,
		`start-up runs \(2 windows each\): issue 43: window 2's start, CPU-s \(median of 3 runs\)\s+2\.50 s <= 3\.00 s\s+MET`,
	} {
		if !regexp.MustCompile(re).MatchString(b.String()) {
			t.Errorf("summary does not match %q:\n%s", re, b.String())
		}
	}
	if strings.Contains(b.String(), "8 simulators vs 1 on the same") {
		t.Errorf("a level on 4 repositories was compared with a run of 1 simulator on one:\n%s", b.String())
	}
	if strings.Contains(b.String(), "3 simulators vs 1 on the same") {
		t.Errorf("isolated simulators were compared with a run of 1 window simulator:\n%s", b.String())
	}
	if strings.Contains(b.String(), "16 simulators vs 1 on the same") {
		t.Errorf("a standing worker's level was compared with a fresh run of 1 simulator:\n%s", b.String())
	}
	if strings.Contains(b.String(), "1 simulators vs 1") {
		t.Errorf("the summary shows the not-measured ratio of a run of 1 simulator alone:\n%s", b.String())
	}
	if _, _, err := readReports([]string{filepath.Join(dir, "missing.json")}); err == nil {
		t.Error("a missing report was read")
	}
}

// TestIsolatedSimulatorTarget: a simulator with a code-server of its own
// is held to 700 MiB more per extra simulator, not 600.
func TestIsolatedSimulatorTarget(t *testing.T) {
	rep := &report{Isolation: adapter.IsolationEditor, Throughput: []level{
		{Sessions: 1, PerMinute: stats{N: 1, Median: 10}, PeakRSSEditorMiB: 500, PeakRSSBrowserMiB: 1000, PeakPSSMiB: 1100},
		{Sessions: 2, PerMinute: stats{N: 1, Median: 19}, PeakRSSEditorMiB: 1000, PeakRSSBrowserMiB: 1150, PeakPSSMiB: 1700},
	}}
	for _, tg := range targets(rep, 2*time.Second) {
		if strings.HasPrefix(tg.Name, "RSS per extra") {
			if tg.Name != "RSS per extra isolated simulator (its own code-server + a Chromium window)" || tg.Limit != 700 || tg.Value != 650 || !tg.Met {
				t.Errorf("target %+v", tg)
			}
			return
		}
	}
	t.Error("no memory target")
}

func TestScaleTargets(t *testing.T) {
	rep := &report{Throughput: []level{
		{Sessions: 1, PerMinute: stats{N: 1, Median: 4}, Steady: cpuPerDialogue{Total: 1}, Whole: cpuPerDialogue{Total: 2},
			PeakRSSEditorMiB: 500, PeakRSSBrowserMiB: 1000},
		{Sessions: 16, PerMinute: stats{N: 1, Median: 50}, Steady: cpuPerDialogue{Total: 1.3}, Whole: cpuPerDialogue{Total: 2.2},
			PeakRSSEditorMiB: 2000, PeakRSSBrowserMiB: 3500},
	}}
	got := map[string]target{}
	for _, tg := range targets(rep, 10*time.Second) {
		got[tg.Name] = tg
	}
	for name, w := range map[string]struct {
		value float64
		met   bool
	}{
		"issue 43: 16 simulators vs 1: dialogues/min, whole run (0.75x linear)": {12.5, true},
		"issue 43: CPU s per dialogue at 16 simulators vs 1, whole run":         {1.1, true},
		"  the same, steady": {1.3, false},
		"issue 43: RSS per extra window simulator (code-server + Chromium)": {4000.0 / 15, true},
	} {
		tg, ok := got[name]
		if !ok {
			t.Errorf("no target %q", name)
			continue
		}
		if math.Abs(tg.Value-w.value) > 1e-9 || tg.Met != w.met {
			t.Errorf("%s: %.4f met %v, want %.4f met %v", name, tg.Value, tg.Met, w.value, w.met)
		}
	}
	rep.Throughput = rep.Throughput[:1]
	for _, tg := range targets(rep, 10*time.Second) {
		if strings.HasPrefix(tg.Name, "issue 43") {
			t.Errorf("target %q with one level", tg.Name)
		}
	}
}

// One fresh simulator over 12 configs is held to 1.0 CPU-s per dialogue
// over the whole run; other levels, and a standing worker, are not.
func TestWindowTarget(t *testing.T) {
	rep := &report{Throughput: []level{{Sessions: 1, Rounds: 1, ConfigsPerRound: 12, PerMinute: stats{N: 1, Median: 9},
		Whole: cpuPerDialogue{Total: 1.35}}}}
	var found []target
	for _, tg := range targets(rep, 2*time.Second) {
		if strings.Contains(tg.Name, "12-dialogue window") {
			found = append(found, tg)
		}
	}
	if len(found) != 1 || found[0].Value != 1.35 || found[0].Met || found[0].Limit != 1 {
		t.Errorf("the 12-dialogue window's targets: %+v", found)
	}
	for _, r := range []*report{
		{Throughput: []level{{Sessions: 1, Rounds: 1, ConfigsPerRound: 48, Whole: cpuPerDialogue{Total: 0.8}}}},
		{Standing: true, Throughput: []level{{Sessions: 1, Rounds: 1, ConfigsPerRound: 12, Whole: cpuPerDialogue{Total: 0.8}}}},
	} {
		for _, tg := range targets(r, 2*time.Second) {
			if strings.Contains(tg.Name, "12-dialogue window") {
				t.Errorf("target %q for %+v", tg.Name, r.Throughput[0])
			}
		}
	}
}

// TestCountLoads: the windows' workspace loads are counted from the
// driver's info line, through a logger that shows warnings only, and the
// line itself stays out of that logger's output.
func TestCountLoads(t *testing.T) {
	var out strings.Builder
	base := zap.New(zapcore.NewCore(zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig()), zapcore.AddSync(&out), zapcore.WarnLevel))
	var n atomic.Int64
	log := countLoads(base, &n).With(zap.String("session", "s1"))
	log.Info(workbench.LoadingMessage, zap.String("repo", "/r/a"))
	log.Info("something else")
	log.Warn(workbench.LoadingMessage)
	log.Debug(workbench.LoadingMessage)
	if n.Load() != 2 {
		t.Errorf("%d loads counted, want 2 (the info and the warning)", n.Load())
	}
	if strings.Count(out.String(), workbench.LoadingMessage) != 1 {
		t.Errorf("the warn-level log shows:\n%s", out.String())
	}
}
