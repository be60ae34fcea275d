package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"dialogfarm/adapter"
	"dialogfarm/capture"
	"dialogfarm/dialog"
	"dialogfarm/driver"
	"dialogfarm/driver/workbench"
	"dialogfarm/pipeline"
)

// levelRun is one run of one throughput level: `dialogfarm drive
// --sessions n` on a run folder of its own, measured from calling the
// drive stage to its last record.
type levelRun struct {
	configs              int
	ok, failed, retried  int
	wall                 time.Duration // from the drive call to the last record
	warm                 time.Duration // from the drive call until every window finished its first dialogue; 0 if never
	steady               time.Duration // from warm to the last record
	steadyDialogues      float64       // ok dialogues in the steady span, each counted by its share inside it
	whole, steadyCPU     cpuSnapshot
	peakEditor, peakBrow int64
	peakPSS              int64
	loads                int               // workspace loads (see level.Loads)
	warmWindows          []dialog.Dialogue // ok dialogues that were not their window's first
	failures             []string
}

// runLevel drives cfgs on n simulators exactly as `dialogfarm drive
// --sessions n` does (pipeline.Drive: the capture endpoint, the embedded
// farm queue, one code-server and Chromium with n windows, a farm worker),
// in the run folder out, sampling CPU and memory from before the editor
// starts until the drive stage returns. The run folder is removed
// afterwards unless -keep.
func (b *bench) runLevel(ctx context.Context, out string, n int, cfgs []dialog.ChatConfig) (res levelRun, err error) {
	resp, err := oneModel(b.slow.URL, "bench-model", n, b.opts.ModelDelay, b.log)
	if err != nil {
		return res, fmt.Errorf("responder for the fake model: %w", err)
	}
	rc := driver.DefaultRunConfig(b.root, out)
	resp.Reader = adapter.Set(rc.Adapters)
	rc.Sessions, rc.PluginVersion, rc.Browser.Backend, rc.Isolation = n, b.plugin, b.backend, b.opts.Isolation
	rc.Browser.JSFlags = b.opts.JSFlags
	if b.opts.Renderers >= 0 {
		rc.Browser.RendererProcesses, rc.Browser.WindowsPerRenderer = b.opts.Renderers, 0
	}
	if b.opts.StartSpacing >= 0 {
		rc.StartSpacing = b.opts.StartSpacing
	}
	cc := capture.DefaultConfig()
	cc.Classify = adapter.Classify(rc.Adapters)
	var (
		mu   sync.Mutex
		last time.Time
	)
	rc.Progress = func(driver.Progress) {
		mu.Lock()
		last = time.Now()
		mu.Unlock()
	}
	dc := pipeline.DriveConfig{Capture: cc, Run: rc, Farm: pipeline.DefaultFarmConfig()}
	rss := startSampler(ctx, runFolderPIDs(out), 200*time.Millisecond, true)
	t0 := time.Now()
	var sum driver.Summary
	var loads atomic.Int64
	log := countLoads(b.log, &loads)
	if b.opts.Standing {
		sum, t0, err = b.driveStanding(ctx, dc, resp, cfgs, log, &loads)
	} else {
		sum, err = pipeline.Drive(ctx, dc, cfgs, resp, nil, log)
	}
	res.loads = int(loads.Load())
	res.peakEditor, res.peakBrow = rss.Stop()
	pe, pb := rss.PeakPSS()
	res.peakPSS = pe + pb
	if err != nil {
		return res, fmt.Errorf("drive %d configs on %d simulators in %s: %w", len(cfgs), n, out, err)
	}
	if res.peakEditor == 0 || res.peakBrow == 0 {
		return res, fmt.Errorf("drive on %d simulators: never found code-server and Chromium through %s", n, filepath.Join(out, "processes.json"))
	}
	if !b.opts.Keep {
		defer func() { err = errors.Join(err, os.RemoveAll(out)) }()
	}
	records, err := readRecords(sum.Records)
	if err != nil {
		return res, err
	}
	attempts, err := readRecords(filepath.Join(out, pipeline.AttemptsFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return res, err
	}
	if b.opts.Standing {
		records, attempts = measuredOnly(records, cfgs), measuredOnly(attempts, cfgs)
	}
	if b.versions == (dialog.Versions{}) && len(records) > 0 {
		b.versions = records[0].Versions
	}
	mu.Lock()
	end := last
	mu.Unlock()
	if end.IsZero() {
		end = time.Now()
	}
	res.configs, res.ok, res.failed, res.retried = len(cfgs), sum.OK, sum.Failed, len(attempts)
	res.wall = end.Sub(t0)
	res.whole = rss.cpuBetween(t0, end)
	for _, d := range attempts {
		res.failures = append(res.failures, describeFailure(fmt.Sprintf("%d sims, attempt retried", n), d))
	}
	for _, d := range records {
		if d.Status != dialog.StatusOK {
			res.failures = append(res.failures, describeFailure(fmt.Sprintf("%d sims", n), d))
		}
	}
	if b.opts.Standing {
		// Every window was warm when the measured configs were given:
		// the whole span is steady, and no dialogue is a window's first.
		res.steady, res.steadyDialogues, res.steadyCPU = res.wall, float64(res.ok), res.whole
		for _, d := range records {
			if d.Status == dialog.StatusOK {
				res.warmWindows = append(res.warmWindows, d)
			}
		}
		return res, nil
	}
	// The steady span needs at least one dialogue's worth per simulator
	// in it: a shorter one (few configs per simulator) says nothing.
	warmAt, firsts := windowsWarm(append(attempts, records...))
	windows := min(n, len(cfgs))
	if got := shareIn(records, warmAt, end); !warmAt.IsZero() && len(firsts) == windows && got >= float64(windows) {
		res.warm, res.steady, res.steadyDialogues = warmAt.Sub(t0), end.Sub(warmAt), got
		res.steadyCPU = rss.cpuBetween(warmAt, end)
	}
	for _, d := range records {
		if d.Status == dialog.StatusOK && !firsts[firstKey(d)] {
			res.warmWindows = append(res.warmWindows, d)
		}
	}
	return res, nil
}

// driveStanding drives cfgs as a standing farm worker does between runs:
// it starts the editor and browser, opens one window per simulator and
// warms each with one dialogue (a config of the mix per window, given
// together so that every window takes one), then drives cfgs on the same
// windows through the farm's queue (pipeline.DriveOnRunner, as `drive`
// does). measured is when cfgs were given.
func (b *bench) driveStanding(ctx context.Context, dc pipeline.DriveConfig, resp capture.Responder, cfgs []dialog.ChatConfig, log *zap.Logger, loads *atomic.Int64) (sum driver.Summary, measured time.Time, err error) {
	srv, err := capture.Listen(ctx, dc.Capture, resp, nil, b.log)
	if err != nil {
		return sum, measured, err
	}
	defer shutdown(ctx, srv)
	r := driver.NewRunner(dc.Run, srv, nil, log)
	if err := r.Start(ctx); err != nil {
		return sum, measured, fmt.Errorf("start editor and browser in %s: %w", dc.Run.Out, err)
	}
	defer r.Stop()
	warm := cycle(b.mix, dc.Run.Sessions, "warm")
	ws, err := pipeline.DriveOnRunner(ctx, r, dc, warm, b.log)
	if err != nil {
		return sum, measured, fmt.Errorf("warm the %d windows: %w", dc.Run.Sessions, err)
	}
	if ws.OK < len(warm) {
		return sum, measured, fmt.Errorf("warm the %d windows: %d of %d warm-up dialogues failed (records: %s)", dc.Run.Sessions, len(warm)-ws.OK, len(warm), ws.Records)
	}
	measured = time.Now()
	loads.Store(0) // the measured configs' loads only
	sum, err = pipeline.DriveOnRunner(ctx, r, dc, cfgs, b.log)
	return sum, measured, err
}

// measuredOnly keeps the dialogues of cfgs (a standing worker's run folder
// also holds its warm-up dialogues).
func measuredOnly(ds []dialog.Dialogue, cfgs []dialog.ChatConfig) []dialog.Dialogue {
	ids := map[string]bool{}
	for _, c := range cfgs {
		ids[c.ID] = true
	}
	var out []dialog.Dialogue
	for _, d := range ds {
		if ids[d.ConfigID] {
			out = append(out, d)
		}
	}
	return out
}

// runFolderPIDs reads the code-servers' process groups (one the
// simulators share, or one each) and Chromium's main process from the run
// folder's processes.json, which the driver writes when it has started
// them (and removes when it stops them): none before and after.
func runFolderPIDs(out string) func() (editors []int, browser int) {
	return func() ([]int, int) {
		data, err := os.ReadFile(filepath.Join(out, "processes.json"))
		if err != nil {
			return nil, 0
		}
		var p struct {
			Editors []int `json:"code_server_pgids"`
			Browser int   `json:"chromium_pgid"`
		}
		if json.Unmarshal(data, &p) != nil {
			return nil, 0
		}
		return p.Editors, p.Browser
	}
}

// windowsWarm finds each window's first dialogue (its window load is in
// it) among ds, records and failed attempts alike, and returns when the
// last of them ended and the first ones, one per window, by firstKey.
func windowsWarm(ds []dialog.Dialogue) (time.Time, map[string]bool) {
	first := map[string]dialog.Dialogue{}
	for _, d := range ds {
		if f, ok := first[d.Session]; !ok || d.StartedAt.Before(f.StartedAt) {
			first[d.Session] = d
		}
	}
	var at time.Time
	ids := map[string]bool{}
	for _, d := range first {
		ids[firstKey(d)] = true
		if e := end(d); e.After(at) {
			at = e
		}
	}
	return at, ids
}

// firstKey names a dialogue among a run's records and attempts.
func firstKey(d dialog.Dialogue) string { return d.Session + "|" + d.StartedAt.String() }

func end(d dialog.Dialogue) time.Time {
	return d.StartedAt.Add(time.Duration(d.Seconds * float64(time.Second)))
}

// shareIn counts the ok dialogues done from t0 to t1, each by the share of
// its time inside that span: a dialogue half inside counts one half.
func shareIn(ds []dialog.Dialogue, t0, t1 time.Time) float64 {
	var n float64
	for _, d := range ds {
		if d.Status != dialog.StatusOK || d.Seconds <= 0 {
			continue
		}
		s, e := d.StartedAt, end(d)
		if s.Before(t0) {
			s = t0
		}
		if e.After(t1) {
			e = t1
		}
		if e.After(s) {
			n += e.Sub(s).Seconds() / d.Seconds
		}
	}
	return n
}

// throughput runs every level -rounds times (appending the 1-minute load
// average after each run to loads), each run a fresh drive stage
// with exactly as many simulators as the level has. The levels' runs
// interleave: round r runs every level once, in an order rotated by r, so a
// load that other processes put on the machine meanwhile falls on all
// levels alike.
func (b *bench) throughput(ctx context.Context, loads *[]float64) ([]level, []string, error) {
	accs := make([]levelAcc, len(b.opts.Sessions))
	for i, n := range b.opts.Sessions {
		accs[i].lv = level{Sessions: n, Rounds: b.opts.Rounds, ConfigsPerRound: n * b.opts.PerSession}
	}
	var failures []string
	for r := 1; r <= b.opts.Rounds; r++ {
		for k := range accs {
			a := &accs[(k+r-1)%len(accs)]
			n := a.lv.Sessions
			cfgs := cycle(b.mix, a.lv.ConfigsPerRound, fmt.Sprintf("n%d-r%d", n, r))
			out := filepath.Join(b.work, string(b.backend), "throughput", fmt.Sprintf("n%d-r%d", n, r))
			t0 := time.Now()
			res, err := b.runLevel(ctx, out, n, cfgs)
			if err != nil {
				return nil, failures, fmt.Errorf("throughput with %d simulators, round %d: %w", n, r, err)
			}
			failures = append(failures, res.failures...)
			*loads = append(*loads, load1())
			a.add(res)
			steady := "no steady span"
			if res.steady > 0 {
				steady = fmt.Sprintf("steady %.1f/min after %.0f s", 60*res.steadyDialogues/res.steady.Seconds(), res.warm.Seconds())
			}
			b.progress("throughput round %d, %d sims: %d/%d ok (%d attempts retried), whole run %.0f s = %.1f dialogues/min, %s; took %.0f s, load %s",
				r, n, res.ok, res.configs, res.retried, res.wall.Seconds(), 60*float64(res.ok)/res.wall.Seconds(), steady,
				time.Since(t0).Seconds(), loadAverage())
		}
	}
	levels := make([]level, len(accs))
	for i, a := range accs {
		levels[i] = a.level()
	}
	return levels, failures, nil
}

// levelAcc gathers one level's runs.
type levelAcc struct {
	lv                                   level
	perMin, steadyPerMin, startup, walls []float64
	turn, model, overhead, dialogue      []float64
	peakEditor, peakBrowser, peakPSS     []float64
	wall, steadyWall                     time.Duration
	steadyN                              float64
	whole, steady                        cpuSnapshot
}

func (a *levelAcc) add(r levelRun) {
	a.lv.OK, a.lv.Failed, a.lv.Retried = a.lv.OK+r.ok, a.lv.Failed+r.failed, a.lv.Retried+r.retried
	a.lv.Loads += r.loads
	a.perMin = append(a.perMin, float64(r.ok)/r.wall.Minutes())
	a.walls = append(a.walls, r.wall.Seconds())
	a.wall += r.wall
	a.whole = a.whole.plus(r.whole)
	if r.steady > 0 {
		a.steadyPerMin = append(a.steadyPerMin, r.steadyDialogues/r.steady.Minutes())
		a.startup = append(a.startup, r.warm.Seconds())
		a.steadyWall += r.steady
		a.steadyN += r.steadyDialogues
		a.steady = a.steady.plus(r.steadyCPU)
	}
	for _, d := range r.warmWindows {
		a.dialogue = append(a.dialogue, d.Seconds)
		for _, t := range turnsOf(d) {
			a.turn, a.model = append(a.turn, t.total()), append(a.model, t.model)
			a.overhead = append(a.overhead, t.total()-t.model)
		}
	}
	a.peakEditor = append(a.peakEditor, float64(r.peakEditor)/(1<<20))
	a.peakBrowser = append(a.peakBrowser, float64(r.peakBrow)/(1<<20))
	a.peakPSS = append(a.peakPSS, float64(r.peakPSS)/(1<<20))
}

// plus adds the CPU of b to s.
func (s cpuSnapshot) plus(b cpuSnapshot) cpuSnapshot {
	out := cpuSnapshot{editor: s.editor + b.editor, browser: s.browser + b.browser, self: s.self + b.self, classes: map[string]float64{}}
	for k, v := range s.classes {
		out.classes[k] += v
	}
	for k, v := range b.classes {
		out.classes[k] += v
	}
	return out
}

func (a *levelAcc) level() level {
	lv := a.lv
	lv.PerMinute, lv.SteadyPerMinute = summarize(a.perMin), summarize(a.steadyPerMin)
	lv.StartupSeconds, lv.WallSeconds = summarize(a.startup), summarize(a.walls)
	lv.TurnSeconds, lv.ModelSeconds = summarize(a.turn), summarize(a.model)
	lv.TurnOverhead, lv.DialogueSeconds = summarize(a.overhead), summarize(a.dialogue)
	lv.PeakRSSEditorMiB, lv.PeakRSSBrowserMiB = summarize(a.peakEditor).Median, summarize(a.peakBrowser).Median
	lv.PeakPSSMiB = summarize(a.peakPSS).Median
	if w := a.wall.Seconds(); w > 0 {
		lv.CPUEditor, lv.CPUBrowser, lv.CPUSelf = a.whole.editor/w, a.whole.browser/w, a.whole.self/w
	}
	if lv.OK > 0 {
		lv.Whole = perDialogue(a.whole, float64(lv.OK))
	}
	if a.steadyN > 0 {
		lv.Steady = perDialogue(a.steady, a.steadyN)
	}
	return lv
}

// perDialogue divides CPU seconds by a number of dialogues.
func perDialogue(c cpuSnapshot, n float64) cpuPerDialogue {
	out := cpuPerDialogue{Total: (c.editor + c.browser) / n, Self: c.self / n, ByClass: map[string]float64{}}
	for k, v := range c.classes {
		out.ByClass[k] = v / n
	}
	return out
}

// countLoads is log, counting in n the windows' workspace loads (the
// driver logs each at info, below log's own level).
func countLoads(log *zap.Logger, n *atomic.Int64) *zap.Logger {
	return log.WithOptions(zap.WrapCore(func(c zapcore.Core) zapcore.Core {
		return zapcore.NewTee(c, loadCounter{LevelEnabler: zapcore.InfoLevel, n: n})
	}))
}

// loadCounter is a zapcore.Core that counts "loading the workspace".
type loadCounter struct {
	zapcore.LevelEnabler
	n *atomic.Int64
}

func (c loadCounter) With([]zapcore.Field) zapcore.Core { return c }

func (c loadCounter) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if e.Message == workbench.LoadingMessage {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c loadCounter) Write(zapcore.Entry, []zapcore.Field) error {
	c.n.Add(1)
	return nil
}

func (loadCounter) Sync() error { return nil }
