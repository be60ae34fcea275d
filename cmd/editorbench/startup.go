package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"dialogfarm/adapter"
	"dialogfarm/capture"
	"dialogfarm/dialog"
	"dialogfarm/driver"
)

// variant is a setting of the editor and browser that -startup compares
// with the defaults: read from the -startup-alt file, JSON.
type variant struct {
	Name string `json:"name"`
	// Settings are user settings given over the editor's defaults.
	Settings map[string]any `json:"settings,omitempty"`
	// Chromium is the browser binary: a wrapper script that adds
	// switches before exec'ing /usr/bin/chromium tries a switch without
	// a build.
	Chromium string `json:"chromium,omitempty"`
	// CodeServer is code-server's launcher: a wrapper script that sets
	// an environment variable before exec'ing tools/code-server.sh tries
	// one without a build.
	CodeServer string `json:"code_server,omitempty"`
	// RendererProcesses, when set, is the renderer processes the windows
	// share (0: one per window).
	RendererProcesses *int `json:"renderer_processes,omitempty"`
}

// apply sets the variant on a run's config.
func (v variant) apply(rc *driver.RunConfig) {
	if len(v.Settings) > 0 {
		s := maps.Clone(rc.Editor.Settings)
		if s == nil {
			s = map[string]any{}
		}
		maps.Copy(s, v.Settings)
		rc.Editor.Settings = s
	}
	if v.Chromium != "" {
		rc.Browser.Bin = v.Chromium
	}
	if v.CodeServer != "" {
		rc.Editor.Bin = v.CodeServer
	}
	if v.RendererProcesses != nil {
		rc.Browser.RendererProcesses, rc.Browser.WindowsPerRenderer = *v.RendererProcesses, 0
	}
}

// readVariant reads a -startup-alt file.
func readVariant(path string) (variant, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return variant{}, fmt.Errorf("-startup-alt: %w", err)
	}
	var v variant
	if err := json.Unmarshal(data, &v); err != nil {
		return variant{}, fmt.Errorf("-startup-alt %s: %w", path, err)
	}
	if v.Name == "" {
		v.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	return v, nil
}

// warmDialogues is how many dialogues each window drives after its first
// (the one that loads it): a warm dialogue's CPU is taken off the first
// one's to leave what loading the window cost.
const warmDialogues = 2

// idlePhase is the span at the end of a start-up run with -startup-settle
// in which every window only waits, as long as a settle.
const idlePhase = "all windows idle"

// settle waits d (the windows are left alone), or until ctx ends.
func settle(ctx context.Context, d time.Duration) error {
	wait, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	<-wait.Done()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("leave the windows to settle: %w", err)
	}
	return nil
}

// startupPhase is what one span of a start-up run cost.
type startupPhase struct {
	Name    string             `json:"name"`
	Wall    float64            `json:"wall_seconds"`
	CPU     float64            `json:"cpu_seconds"` // code-server + Chromium
	Self    float64            `json:"cpu_seconds_this_process"`
	ByClass map[string]float64 `json:"cpu_seconds_by_process"`
}

// startupRun is one fresh start measured: code-server and Chromium
// starting, then each window in turn loading with its first dialogue and
// driving warm ones.
type startupRun struct {
	Variant string         `json:"variant"`
	Phases  []startupPhase `json:"phases"`
	// Children is the CPU seconds of every child process this one
	// reaped, from before the start to after the stop (getrusage): the
	// sampler's total cross-checked, short-lived processes included.
	Children float64 `json:"cpu_seconds_children_rusage"`
	Load     string  `json:"load_average_after"`
	OK       bool    `json:"ok"`
}

// startupFigures are -startup's results: every run, and medians by
// variant, phase and process class.
type startupFigures struct {
	Windows int           `json:"windows"`
	Settle  time.Duration `json:"settle_ns"` // -startup-settle
	Runs    []startupRun  `json:"runs"`
}

// measureStartup runs opts.Startup start-up runs, alternating the
// defaults and the -startup-alt variant when one is given.
func (b *bench) measureStartup(ctx context.Context) (*startupFigures, error) {
	vs := []variant{{Name: "default"}}
	if b.opts.StartupAlt != "" {
		alt, err := readVariant(b.opts.StartupAlt)
		if err != nil {
			return nil, err
		}
		vs = append(vs, alt)
	}
	fig := &startupFigures{Windows: b.opts.StartupWindows, Settle: b.opts.StartupSettle}
	for i := range b.opts.Startup {
		for _, v := range vs {
			t0 := time.Now()
			r, err := b.startupRun(ctx, i+1, v)
			if err != nil {
				return fig, err
			}
			fig.Runs = append(fig.Runs, r)
			b.progress("start-up run %d (%s): %s; took %.0f s, load %s", i+1, v.Name, r.brief(), time.Since(t0).Seconds(), r.Load)
		}
	}
	return fig, nil
}

// brief is a run's figures in one line.
func (r startupRun) brief() string {
	var parts []string
	for _, p := range r.Phases {
		parts = append(parts, fmt.Sprintf("%s %.2f CPU-s/%.1f s", p.Name, p.CPU, p.Wall))
	}
	return strings.Join(parts, ", ") + fmt.Sprintf("; children (rusage) %.2f CPU-s", r.Children)
}

func childrenCPU() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// startupRun starts code-server and Chromium in a fresh run folder,
// opens opts.StartupWindows windows one after the other, each driving a
// first dialogue and warmDialogues more with a model that answers at
// once, and stops them; the CPU of every process is sampled from its
// birth every 100 ms.
func (b *bench) startupRun(ctx context.Context, i int, v variant) (res startupRun, err error) {
	res.Variant = v.Name
	out := filepath.Join(b.work, "startup", fmt.Sprintf("%s-%d", v.Name, i))
	resp, err := oneModel(b.instant.URL, "bench-model", 1, 0, b.log)
	if err != nil {
		return res, fmt.Errorf("responder for the fake model: %w", err)
	}
	rc := driver.DefaultRunConfig(b.root, out)
	resp.Reader = adapter.Set(rc.Adapters)
	rc.Sessions, rc.PluginVersion, rc.Browser.Backend = b.opts.StartupWindows, b.plugin, b.backend
	rc.Assignments = driver.NewAssignments()
	v.apply(&rc)
	srv, err := capture.Listen(ctx, capture.DefaultConfig(), resp, nil, b.log)
	if err != nil {
		return res, err
	}
	defer shutdown(ctx, srv)
	children := childrenCPU()
	rss := startSampler(ctx, runFolderPIDs(out), 100*time.Millisecond, true)
	r := driver.NewRunner(rc, srv, nil, b.log)
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			r.Stop()
			rss.Stop()
		}
	}
	defer stop()
	phase := func(name string, t0, t1 time.Time) {
		c := rss.cpuBetween(t0, t1)
		res.Phases = append(res.Phases, startupPhase{Name: name, Wall: t1.Sub(t0).Seconds(), CPU: c.editor + c.browser, Self: c.self, ByClass: c.classes})
	}
	// A sample before the start is the zero every phase is measured
	// from: the sampler's own first one may come late under load.
	rss.sample(runFolderPIDs(out)())
	t0 := time.Now()
	if err := r.Start(ctx); err != nil {
		return res, fmt.Errorf("start-up run %d (%s): start editor and browser in %s: %w", i, v.Name, out, err)
	}
	t1 := time.Now()
	rss.sample(runFolderPIDs(out)())
	phase("start", t0, t1)
	mix := b.set.throughputMix()
	res.OK = true
	for w := 1; w <= b.opts.StartupWindows; w++ {
		tw := time.Now()
		if err := r.OpenSessions(ctx, w); err != nil {
			return res, fmt.Errorf("start-up run %d (%s): open window %d: %w", i, v.Name, w, err)
		}
		spans := []time.Time{tw}
		for k := 0; k <= warmDialogues; k++ {
			c := mix[(w+k)%len(mix)]
			c.ID = fmt.Sprintf("%s-w%d-%d", c.ID, w, k)
			d, _, err := r.DriveSlot(ctx, w-1, c)
			if err != nil {
				return res, fmt.Errorf("start-up run %d (%s): window %d: %w", i, v.Name, w, err)
			}
			if d.Status != dialog.StatusOK {
				res.OK = false
				b.progress("%s", describeFailure(fmt.Sprintf("start-up run %d (%s), window %d", i, v.Name, w), d))
			}
			if k == 0 {
				if err := settle(ctx, b.opts.StartupSettle); err != nil {
					return res, err
				}
			}
			rss.sample(runFolderPIDs(out)())
			spans = append(spans, time.Now())
		}
		phase(fmt.Sprintf("window %d first", w), spans[0], spans[1])
		phase(fmt.Sprintf("window %d warm", w), spans[1], spans[len(spans)-1])
	}
	if b.opts.StartupSettle > 0 {
		t := time.Now()
		if err := settle(ctx, b.opts.StartupSettle); err != nil {
			return res, err
		}
		rss.sample(runFolderPIDs(out)())
		phase(idlePhase, t, time.Now())
	}
	stop()
	res.Children = childrenCPU() - children
	res.Load = loadAverage()
	return res, nil
}

// startupRows are the medians by variant: per phase, its wall time and
// CPU by process class, and a window's start cost (its first dialogue's
// CPU less a warm dialogue's).
func (f *startupFigures) print(w *strings.Builder) {
	var variants []string
	for _, r := range f.Runs {
		if !slices.Contains(variants, r.Variant) {
			variants = append(variants, r.Variant)
		}
	}
	for _, v := range variants {
		var runs []startupRun
		for _, r := range f.Runs {
			if r.Variant == v {
				runs = append(runs, r)
			}
		}
		fmt.Fprintf(w, "\nSTART-UP, variant %s: %d runs, %d windows each; medians of CPU seconds (wall seconds in the header)\n", v, len(runs), f.Windows)
		phases := []string{}
		classes := map[string]bool{}
		for _, r := range runs {
			for _, p := range r.Phases {
				if !slices.Contains(phases, p.Name) {
					phases = append(phases, p.Name)
				}
				for c := range p.ByClass {
					classes[c] = true
				}
			}
		}
		med := func(get func(startupRun) (float64, bool)) float64 {
			var xs []float64
			for _, r := range runs {
				if x, ok := get(r); ok {
					xs = append(xs, x)
				}
			}
			return summarize(xs).Median
		}

		fmt.Fprintf(w, "%-40s", "process")
		for _, p := range phases {
			fmt.Fprintf(w, " %17s", p)
		}
		fmt.Fprintf(w, "\n%-40s", "  (wall s)")
		for _, p := range phases {
			fmt.Fprintf(w, " %17.2f", med(func(r startupRun) (float64, bool) { x, ok := r.phase(p); return x.Wall, ok }))
		}
		fmt.Fprintln(w)
		names := slices.Sorted(maps.Keys(classes))
		for _, c := range names {
			fmt.Fprintf(w, "%-40s", c)
			for _, p := range phases {
				fmt.Fprintf(w, " %17.2f", med(func(r startupRun) (float64, bool) { x, ok := r.phase(p); return x.ByClass[c], ok }))
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%-40s", "TOTAL code-server + Chromium")
		for _, p := range phases {
			fmt.Fprintf(w, " %17.2f", med(func(r startupRun) (float64, bool) { x, ok := r.phase(p); return x.CPU, ok }))
		}
		fmt.Fprintf(w, "\n%-40s", "this process (driver, capture, sampler)")
		for _, p := range phases {
			fmt.Fprintf(w, " %17.2f", med(func(r startupRun) (float64, bool) { x, ok := r.phase(p); return x.Self, ok }))
		}
		fmt.Fprintln(w)
		for k := 1; k <= f.Windows; k++ {
			counted := "its first dialogue less a warm one"
			if f.Settle > 0 {
				counted = fmt.Sprintf("its first dialogue and %v of settling, less a warm one and the other windows' idle cost", f.Settle)
			}
			what := "an extra window's start (" + counted + ")"
			if k == 1 {
				what = "the first window's start (start + " + counted + ")"
			}
			s := summarize(f.starts(runs, k))
			fmt.Fprintf(w, "window %d: %s: median %.2f CPU-s (min %.2f, max %.2f, n %d)\n", k, what, s.Median, s.Min, s.Max, s.N)
		}
		fmt.Fprintf(w, "warm dialogue: median %.2f CPU-s; children by rusage over the whole run: median %.2f CPU-s; loads after the runs: %s\n",
			med(func(r startupRun) (float64, bool) {
				x, ok := r.phase("window 1 warm")
				return x.CPU / warmDialogues, ok
			}),
			med(func(r startupRun) (float64, bool) { return r.Children, true }),
			strings.Join(collectS(runs, func(r startupRun) string { return r.Load }), " | "))
	}
	if ts := f.targets(); len(ts) > 0 {
		w.WriteString("\nTARGETS\n")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, t := range ts {
			fmt.Fprintf(tw, "%s\t%s\t\n", t.Name, t.verdict())
		}
		_ = tw.Flush()
	}
}

// phase is r's phase of that name.
func (r startupRun) phase(name string) (startupPhase, bool) {
	for _, p := range r.Phases {
		if p.Name == name {
			return p, true
		}
	}
	return startupPhase{}, false
}

// starts is what window k's start cost in each of runs: its first
// dialogue less a warm one (and with a settle, less the idle cost of the
// k-1 windows opened before it over that time), and for the first window
// the start of code-server and Chromium too.
func (f *startupFigures) starts(runs []startupRun, k int) []float64 {
	return collect(runs, func(r startupRun) (float64, bool) {
		first, ok1 := r.phase(fmt.Sprintf("window %d first", k))
		warm, ok2 := r.phase(fmt.Sprintf("window %d warm", k))
		c := first.CPU - warm.CPU/warmDialogues
		if idle, ok := r.phase(idlePhase); ok && f.Windows > 0 {
			c -= idle.CPU * float64(k-1) / float64(f.Windows)
		}
		if k == 1 {
			st, ok := r.phase("start")
			c, ok1 = c+st.CPU, ok1 && ok
		}
		return c, ok1 && ok2
	})
}

// startBudget is issue 43's bound on a window's start, in CPU seconds.
const startBudget = 3.0

// targets are issue 43's bounds on each window's start (the first with
// code-server and Chromium), the medians of the default variant's runs.
func (f *startupFigures) targets() []target {
	var runs []startupRun
	for _, r := range f.Runs {
		if r.Variant == "default" && r.OK {
			runs = append(runs, r)
		}
	}
	settle := ""
	if f.Settle > 0 {
		settle = fmt.Sprintf(", %v settling counted", f.Settle)
	}
	var ts []target
	for k := 1; k <= f.Windows; k++ {
		s := summarize(f.starts(runs, k))
		name := fmt.Sprintf("issue 43: window %d's start, CPU-s (median of %d runs%s)", k, s.N, settle)
		if k == 1 {
			name = fmt.Sprintf("issue 43: the first window's start with code-server's and Chromium's, CPU-s (median of %d runs%s)", s.N, settle)
		}
		ts = append(ts, newTarget(name, s.Median, s.N > 0, "<=", startBudget, " s"))
	}
	return ts
}

func collect(runs []startupRun, get func(startupRun) (float64, bool)) []float64 {
	var xs []float64
	for _, r := range runs {
		if x, ok := get(r); ok {
			xs = append(xs, x)
		}
	}
	return xs
}

func collectS(runs []startupRun, get func(startupRun) string) []string {
	var out []string
	for _, r := range runs {
		out = append(out, get(r))
	}
	return out
}

func writeStartupJSON(path string, f *startupFigures) error {
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
