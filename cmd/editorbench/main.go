// Command editorbench measures how fast dialogfarm's driver works the real
// editor: code-server from `make setup`, headless Chromium, and the
// reference Q&A plugin, with the plugin's model requests answered by the
// capture endpoint's OpenAI responder in front of a fake model
// (internal/llmtest). `make bench` and `make bench-farm` run it.
//
// In one invocation it measures:
//
//   - unless -latency=false, over -runs runs, each a fresh Runner and run
//     folder: cold start (Runner.Start plus the first window's
//     open_workspace step), the driver's step timings per dialogue (reset,
//     open_file, cursor, select, trigger_<trigger>, turnN_query/answer/
//     capture) and whole 2-turn dialogues with a model that answers at
//     once, and peak RSS of code-server's process group and Chromium's
//     process tree (sampled every 200 ms from /proc);
//   - the throughput levels (-sessions, default 1,2,4) with a model that
//     takes -model-delay per answer: a level with n simulators is
//     `dialogfarm drive --sessions n` as a user runs it (pipeline.Drive:
//     capture endpoint, embedded farm queue, a fresh code-server and
//     Chromium with exactly n windows) on n x -per-session configs. Each
//     is measured over the whole run (from the drive call to the last
//     record: window start-up included) and steady (once every window has
//     finished its first dialogue), with CPU seconds per dialogue by
//     process and peak RSS/PSS. -rounds rounds run every level once, in an
//     order rotated per round, so other load on the machine falls on all
//     levels alike;
//   - with -queue-bench, the farm queue's own cost per job, read from the
//     output of `go test -bench BenchmarkJobOverhead ./farm`;
//
// and prints the figures with issue 9's targets, each MET or NOT MET. With
// -browser rod,chromedp it measures each browser backend in turn and then
// prints their figures side by side. The configs are generated over a copy
// of examples/sample-repo (or the -repo given, such as one the farm is to
// run on) in the work folder, which is removed unless -keep.
// With -summary a.json,b.json it measures nothing and prints the levels of
// earlier -json reports (a 2 s and a 10 s model run) as one table, with all
// their targets.
//
//	go run ./cmd/editorbench -runs 5 -sessions 1,2,4 -json bench.json
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"dialogfarm/adapter"
	"dialogfarm/dialog"
	"dialogfarm/driver/browser"
	"dialogfarm/driver/editor"
	"dialogfarm/driver/workbench"
	"dialogfarm/internal/llmtest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "editorbench:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	Runs       int
	Rounds     int
	Out        string
	Keep       bool
	Sessions   []int
	PerSession int
	ModelDelay time.Duration
	JSON       string
	Root       string
	Repo       string
	Repos      int
	Browsers   []browser.Backend
	// Isolation is what a simulator is in the throughput levels: window
	// (a window of one code-server) or editor (a code-server each).
	Isolation string
	// Renderers is the renderer processes the windows share in the
	// throughput levels (-1: the driver's default).
	Renderers int
	// JSFlags are more V8 switches for the renderers in the throughput
	// levels (as dialogfarm's --browser-js-flags).
	JSFlags []string
	// StartSpacing, when not negative, is the driver's StartSpacing in
	// the throughput levels.
	StartSpacing time.Duration
	// Standing measures each throughput level on a standing worker:
	// its windows opened and each warmed by one dialogue before the
	// measured configs are given (see runLevel).
	Standing   bool
	Latency    bool
	QueueBench string
	Summary    []string
	// Startup is how many start-up runs to measure (0: none); with it,
	// nothing else is measured. StartupWindows is the windows each run
	// opens one after the other, StartupAlt a variant file the runs
	// alternate with the defaults. StartupSettle, when positive, is how
	// long each window is left after its first dialogue before its warm
	// ones, so that the work the workbench defers until after it is
	// ready (its last start-up phases, run in idle time) counts in its
	// start.
	Startup        int
	StartupWindows int
	StartupAlt     string
	StartupSettle  time.Duration
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("editorbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&o.Runs, "runs", 5, "latency runs (each a fresh code-server and Chromium)")
	fs.IntVar(&o.Rounds, "rounds", 0, "rounds of the throughput levels, each running every level once as a fresh drive stage (0: as -runs)")
	fs.BoolVar(&o.Latency, "latency", true, "measure the latency runs (cold start, steps, per-turn overhead) before the throughput levels")
	fs.StringVar(&o.QueueBench, "queue-bench", "", "output of `go test -bench BenchmarkJobOverhead ./farm`: print the queue's cost per job with the targets")
	fs.StringVar(&o.Out, "out", "", "folder for the work folder (default: the system temp folder)")
	fs.BoolVar(&o.Keep, "keep", false, "keep the work folder (run folders, records, editor and browser logs)")
	sessions := fs.String("sessions", "1,2,4", "concurrent simulators per throughput level, comma-separated")
	fs.IntVar(&o.PerSession, "per-session", 4, "configs per simulator in each throughput round (level n drives n x this many)")
	fs.DurationVar(&o.ModelDelay, "model-delay", 2*time.Second, "fake model time per answer in the throughput levels")
	fs.StringVar(&o.JSON, "json", "", "also write the figures as JSON to this file")
	fs.StringVar(&o.Isolation, "isolation", adapter.IsolationWindow, "what a simulator is in the throughput levels: window (a window of one code-server every simulator shares) or editor (a window of a code-server of its own, as drive --isolation editor)")
	fs.IntVar(&o.Renderers, "renderers", -1, "Chromium renderer processes the windows share in the throughput levels (0: one per window; -1: the driver's default, one per two cores and at least one per 8 windows)")
	fs.DurationVar(&o.StartSpacing, "start-spacing", -1, "least time between two dialogues' starts in the throughput levels (0: none; negative: the driver's default, a second over the cores)")
	fs.BoolVar(&o.Standing, "standing", false, "measure each throughput level on a standing worker, as a farm worker between runs: its windows opened and warmed by one dialogue each before the measured configs are given, so that window start-up is out of the measured span")
	fs.StringVar(&o.Root, "root", ".", "the dialogfarm checkout (tools/ from `make setup`, plugin/, examples/)")
	fs.IntVar(&o.Repos, "repos", 1, "copies of the repository the throughput levels' configs go to in turn, as configgen interleaves a plan's repositories: each copy is a workspace of its own, which a window moves to by reloading")
	fs.StringVar(&o.Repo, "repo", "", "the repository the configs are written on (a copy is driven; its Python, Go, JavaScript and TypeScript files with top-level functions, at least 2; default: ROOT/examples/sample-repo)")
	summary := fs.String("summary", "", "print only the farm summary of earlier -json reports (comma-separated files): one table of their levels and all their targets")
	fs.IntVar(&o.Startup, "startup", 0, "measure only where a window's start-up CPU goes, over this many fresh starts (code-server, Chromium, each window's first dialogue and warm ones, CPU by process from /proc)")
	fs.IntVar(&o.StartupWindows, "startup-windows", 2, "windows each -startup run opens, one after the other")
	fs.DurationVar(&o.StartupSettle, "startup-settle", 0, "with -startup: leave each window this long after its first dialogue, counted in its start (the workbench's deferred start-up work), and then all windows as long again at the end, to take their idle cost off")
	fs.StringVar(&o.StartupAlt, "startup-alt", "", "a variant for -startup to alternate with the defaults: JSON {name, settings (user settings over the defaults), chromium (browser binary), code_server (its launcher), renderer_processes}")
	browsers := fs.String("browser", string(browser.BackendRod), "browser backends to measure, comma-separated: rod, chromedp")
	jsFlags := fs.String("browser-js-flags", "", "more V8 switches for Chromium's renderers in the throughput levels, as dialogfarm's --browser-js-flags")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *summary != "" {
		o.Summary = strings.Split(*summary, ",")
	}
	var err error
	if o.JSFlags, err = browser.ParseJSFlags(*jsFlags); err != nil {
		return o, fmt.Errorf("-browser-js-flags: %w", err)
	}
	for _, f := range strings.Split(*sessions, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return o, fmt.Errorf("-sessions: %q is not a positive number", f)
		}
		o.Sessions = append(o.Sessions, n)
	}
	for _, f := range strings.Split(*browsers, ",") {
		b, err := browser.ParseBackend(strings.TrimSpace(f))
		if err != nil {
			return o, fmt.Errorf("-browser: %w", err)
		}
		if slices.Contains(o.Browsers, b) {
			return o, fmt.Errorf("-browser: %s twice", b)
		}
		o.Browsers = append(o.Browsers, b)
	}
	if o.Startup < 0 || o.StartupWindows < 1 || o.StartupSettle < 0 {
		return o, errors.New("-startup must be at least 0, -startup-windows at least 1, -startup-settle not negative")
	}
	if o.Runs < 1 || o.PerSession < 1 || o.Rounds < 0 {
		return o, errors.New("-runs and -per-session must be at least 1, -rounds at least 0")
	}
	// A turn's answer must arrive within the driver's answer timeout;
	// half of it leaves the turn room for the rest of the dialogue.
	if o.Isolation != adapter.IsolationWindow && o.Isolation != adapter.IsolationEditor {
		return o, fmt.Errorf("-isolation %q: give window or editor", o.Isolation)
	}
	if answer := workbench.DefaultTimeouts().Answer; o.ModelDelay < 0 || o.ModelDelay > answer/2 {
		return o, fmt.Errorf("-model-delay %v: give 0 to %v (the driver waits at most %v for an answer)", o.ModelDelay, answer/2, answer)
	}
	if o.Rounds == 0 {
		o.Rounds = o.Runs
	}
	return o, nil
}

// run measures everything, prints the report to stdout and progress to
// stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	opts, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	if len(opts.Summary) > 0 {
		reps, starts, err := readReports(opts.Summary)
		if err != nil {
			return err
		}
		return printSummary(stdout, reps, starts)
	}
	enc := zap.NewDevelopmentEncoderConfig()
	enc.TimeKey = ""
	log := zap.New(zapcore.NewCore(zapcore.NewConsoleEncoder(enc), zapcore.AddSync(stderr), zapcore.WarnLevel))
	defer func() { _ = log.Sync() }()

	b, cleanup, err := newBench(opts, log, stderr)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, cleanup()) }()

	if opts.Startup > 0 {
		b.backend = opts.Browsers[0]
		fig, err := b.measureStartup(ctx)
		if fig != nil {
			var sb strings.Builder
			fig.print(&sb)
			fmt.Fprint(stdout, sb.String())
			if opts.JSON != "" {
				err = errors.Join(err, writeStartupJSON(opts.JSON, fig))
			}
		}
		return err
	}
	var reps []*report
	for _, backend := range opts.Browsers {
		b.backend, b.versions = backend, dialog.Versions{}
		rep, err := b.measure(ctx)
		if err != nil {
			return fmt.Errorf("browser backend %s: %w", backend, err)
		}
		if len(opts.Browsers) > 1 {
			fmt.Fprintf(stdout, "=== browser backend: %s ===\n", backend)
		}
		if err := rep.print(stdout); err != nil {
			return fmt.Errorf("print report: %w", err)
		}
		reps = append(reps, rep)
	}
	if len(reps) > 1 {
		if err := printSideBySide(stdout, reps); err != nil {
			return fmt.Errorf("print comparison: %w", err)
		}
	}
	if opts.JSON != "" {
		return writeJSON(opts.JSON, reps)
	}
	return nil
}

// newBench makes the work folder, copies the repository into it,
// writes the configs and starts the two fake models. cleanup undoes it.
func newBench(opts options, log *zap.Logger, stderr io.Writer) (*bench, func() error, error) {
	root, err := filepath.Abs(opts.Root)
	if err != nil {
		return nil, nil, fmt.Errorf("root %s: %w", opts.Root, err)
	}
	if _, err := os.Stat(filepath.Join(root, "tools", "code-server.sh")); err != nil {
		return nil, nil, fmt.Errorf("no code-server under %s (run from the checkout after `make setup`): %w", root, err)
	}
	manifest, err := editor.ReadPluginManifest(filepath.Join(root, "plugin"))
	if err != nil {
		return nil, nil, err
	}
	if opts.Out != "" {
		if err := os.MkdirAll(opts.Out, 0o755); err != nil {
			return nil, nil, fmt.Errorf("create %s: %w", opts.Out, err)
		}
	}
	work, err := os.MkdirTemp(opts.Out, "editorbench-")
	if err != nil {
		return nil, nil, fmt.Errorf("create the work folder: %w", err)
	}
	work, err = filepath.Abs(work)
	if err != nil {
		return nil, nil, fmt.Errorf("work folder: %w", err)
	}
	b := &bench{
		opts: opts, root: root, work: work, log: log,
		plugin: manifest.ID() + "@" + manifest.Version,
		progress: func(format string, args ...any) {
			fmt.Fprintf(stderr, "editorbench: "+format+"\n", args...)
		},
	}
	cleanup := func() error {
		if b.instant != nil {
			b.instant.Close()
		}
		if b.slow != nil {
			b.slow.Close()
		}
		if opts.Keep {
			b.progress("work folder kept: %s", work)
			return nil
		}
		if err := os.RemoveAll(work); err != nil {
			return fmt.Errorf("remove the work folder: %w", err)
		}
		return nil
	}
	src := opts.Repo
	if src == "" {
		src = filepath.Join(root, "examples", "sample-repo")
	}
	repo := filepath.Join(work, "repo")
	if err := copyRepo(src, repo); err != nil {
		return nil, nil, errors.Join(fmt.Errorf("copy the repository %s: %w", src, err), cleanup())
	}
	if b.set, err = makeConfigs(repo); err != nil {
		return nil, nil, errors.Join(err, cleanup())
	}
	if b.mix, err = repoMix(b.set, repo, opts.Repos); err != nil {
		return nil, nil, errors.Join(err, cleanup())
	}
	var files []string
	for _, c := range b.set.throughputMix() {
		files = append(files, fmt.Sprintf("%s (%d lines)", c.File, lineCount(filepath.Join(repo, c.File))))
	}
	b.progress("configs on %s; the throughput mix opens %s", src, strings.Join(files, ", "))
	b.instant = llmtest.Start(llmtest.Fixed(answer))
	delay := opts.ModelDelay
	b.slow = llmtest.Start(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: answer, Delay: delay} })
	return b, cleanup, nil
}

// answer is what the fake models say: a few sentences and a code block,
// streamed to the plugin in about 20 chunks.
const answer = "It walks the input once and keeps a running value, so it is linear in the size of the input.\n\n" +
	"```\nresult = process(values)\n```\n\nAn empty input is the edge case to check first."

// measure runs the latency runs, then the throughput levels.
func (b *bench) measure(ctx context.Context) (*report, error) {
	rep := &report{Backend: b.backend, Isolation: b.opts.Isolation, Standing: b.opts.Standing, Runs: b.opts.Runs, Rounds: b.opts.Rounds, CPUs: runtime.NumCPU(), LoadBefore: loadAverage(), ModelDelay: b.opts.ModelDelay.Seconds(),
		PerSession: b.opts.PerSession, Repos: max(b.opts.Repos, 1)}
	b.progress("browser backend %s; work folder %s; load average %s", b.backend, b.work, rep.LoadBefore)
	if b.opts.QueueBench != "" {
		q, err := readQueueBench(b.opts.QueueBench)
		if err != nil {
			return nil, err
		}
		rep.Queue = q
	}
	var loads []float64 // 1-min load average after each latency run and the throughput phase
	if b.opts.Latency {
		var runs []latencyRun
		for i := 1; i <= b.opts.Runs; i++ {
			t0 := time.Now()
			r, err := b.latencyRun(ctx, i)
			if err != nil {
				return nil, err
			}
			runs = append(runs, r)
			loads = append(loads, load1())
			rep.Failures = append(rep.Failures, r.failures...)
			b.progress("latency run %d/%d: %d/%d measured dialogues ok, cold start %.1f s, took %.0f s, load %s",
				i, b.opts.Runs, countOK(r.measured), len(b.set.Measured), r.start+r.open, time.Since(t0).Seconds(), loadAverage())
		}
		rep.Latency, rep.RSS = latencyRows(runs)
	}
	t0 := time.Now()
	levels, failures, err := b.throughput(ctx, &loads)
	rep.Failures = append(rep.Failures, failures...)
	if err != nil {
		return nil, err
	}
	rep.Throughput = levels
	b.progress("throughput: took %.0f s", time.Since(t0).Seconds())
	rep.Targets = targets(rep, b.opts.ModelDelay)
	rep.Versions = b.versions
	rep.LoadAfter, rep.LoadSeen = loadAverage(), summarize(loads)
	return rep, nil
}

// targets fills each level's ratios to the 1-simulator level and holds the
// figures to issue 9's targets.
func targets(rep *report, delay time.Duration) []target {
	var base, baseSteady float64
	top := -1
	for i, l := range rep.Throughput {
		if l.Sessions == 1 {
			base, baseSteady = l.PerMinute.Median, l.SteadyPerMinute.Median
		}
		if top < 0 || l.Sessions >= rep.Throughput[top].Sessions { // the largest level is measured against linear scaling
			top = i
		}
	}
	var worstSteady, worstWhole float64
	for i := range rep.Throughput {
		l := &rep.Throughput[i]
		l.Ratio, l.SteadyRatio = ratio(l.PerMinute.Median, base), ratio(l.SteadyPerMinute.Median, baseSteady)
		worstSteady, worstWhole = max(worstSteady, l.Steady.Total), max(worstWhole, l.Whole.Total)
	}
	var ts []target
	if len(rep.Latency) > 0 {
		turn := findRow(rep.Latency, "ONE TURN: query+answer+capture (all turns)")
		ts = append(ts, newTarget("per-turn UI overhead: median turn (query+answer+capture), instant model", turn.Median, turn.N > 0, "<=", 0.5, " s"))
	}
	if top >= 0 {
		t := rep.Throughput[top]
		scaled := t.Sessions > 1 && base > 0
		span := "whole run incl. window start-up"
		if rep.Standing {
			span = "standing worker (windows warm)"
		}
		ts = append(ts,
			newTarget(fmt.Sprintf("%d simulators vs 1: dialogues/min, %.0f s model, %s (0.8x linear)", t.Sessions, delay.Seconds(), span),
				t.Ratio, scaled && t.PerMinute.N > 0, ">=", 0.8*float64(t.Sessions), "x"),
			newTarget("  the same, steady (every window warm)", t.SteadyRatio, scaled && baseSteady > 0 && t.SteadyPerMinute.N > 0, ">=", 0.8*float64(t.Sessions), "x"))
	}
	ts = append(ts,
		newTarget("CPU seconds per dialogue beyond model time (code-server + Chromium), steady, worst level", worstSteady, worstSteady > 0, "<=", 1.5, " s"),
		newTarget("  the same over the whole run (window start-up included), worst level", worstWhole, worstWhole > 0, "<=", 1.5, " s"),
		newTarget("UI time per dialogue (wall minus model), 1 simulator, warm window", uiPerDialogue(rep.Throughput), uiPerDialogue(rep.Throughput) > 0, "<=", 0.66, " s"))
	_, _, two := rep.extremeLevels()
	// A simulator with a code-server of its own costs that editor too.
	what, limit := "RSS per extra simulator (code-server + Chromium)", 600.0
	if rep.Isolation == adapter.IsolationEditor {
		what, limit = "RSS per extra isolated simulator (its own code-server + a Chromium window)", 700
	}
	ts = append(ts,
		newTarget(what, extraRSS(rep), two, "<=", limit, " MiB"),
		newTarget("  diagnostic: the same as PSS (shared pages counted once)", extraPSS(rep), two, "<=", limit, " MiB"))
	ts = append(ts, scaleTargets(rep)...)
	ts = append(ts, windowTargets(rep)...)
	if q := rep.Queue; q != nil {
		ts = append(ts, newTarget("queue CPU per job (BenchmarkJobOverhead; bar: 1% of the 1.5 s per dialogue)", q.CPUMicros.Median/1e3, q.CPUMicros.N > 0, "<=", queueCPUBudget*1e3, " ms"))
	}
	return ts
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func countOK(ds []dialog.Dialogue) int {
	n := 0
	for _, d := range ds {
		if d.Status == dialog.StatusOK {
			n++
		}
	}
	return n
}

// uiPerDialogue is the median dialogue wall time minus its model time at
// the 1-simulator level: what the editor and driver add to a dialogue.
func uiPerDialogue(levels []level) float64 {
	for _, l := range levels {
		if l.Sessions == 1 && l.DialogueSeconds.N > 0 && l.TurnSeconds.N > 0 {
			turns := float64(l.TurnSeconds.N) / float64(l.DialogueSeconds.N)
			return max(l.DialogueSeconds.Median-turns*l.ModelSeconds.Median, 0)
		}
	}
	return 0
}
