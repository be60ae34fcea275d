package main

import (
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"dialogfarm/adapter"
)

// printThroughput writes the throughput levels: the farm table (whole run
// and steady dialogues per minute, CPU cores, ok), the per-dialogue
// figures, the CPU per dialogue by process and the memory per simulator.
func (r *report) printThroughput(b *strings.Builder) error {
	if len(r.Throughput) == 0 {
		return nil
	}
	fmt.Fprintf(b, "THROUGHPUT, fake model answering in %.1f s (llmtest Delay -> capture OpenAI responder). Each level with n\n"+
		"simulators is `dialogfarm drive --sessions n` (pipeline.Drive: capture endpoint, embedded farm queue, a fresh\n"+
		"code-server + Chromium with exactly n windows and nothing else open, a farm worker) on its own run folder, driving\n"+
		"n x %d configs cycling the 4-config mix (one per trigger, 2 turns each). %d rounds; each round runs every level once\n"+
		"(order rotated per round, so the machine's changing load falls on all levels alike).\n"+
		"whole run = ok configs over the time from the drive call (before code-server starts) to the last record:\n"+
		"window start-up included. steady = from the moment every window has finished its first dialogue (the one\n"+
		"that loads it) to the last record, each ok dialogue counted by its share of time in that span. Failed\n"+
		"attempts are retried by the farm (up to 3 attempts); their time stays in the run.\n",
		r.ModelDelay, r.PerSession, r.Rounds)
	if r.Repos > 1 {
		fmt.Fprintf(b, "The mix is spread over %d copies of the repository, in turn (as configgen interleaves a plan's\n"+
			"repositories): each copy is a workspace of its own, which a window moves to by reloading its workbench.\n", r.Repos)
	}
	if r.Standing {
		fmt.Fprintf(b, "STANDING WORKER (-standing): each level's editor and browser were started, its n windows opened and\n"+
			"each warmed by one dialogue before the measured configs were given, as a farm worker's windows are between\n"+
			"runs: whole run = steady = from giving the measured configs (pipeline.DriveOnRunner) to the last record.\n")
	}
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "sims\tconfigs\twhole run dial/min med (min-max)\tvs 1\tsteady dial/min med\tvs 1\tuntil all windows warm (s)\tCPU cores busy (of %d)\tok\tfailed (attempts retried)\tworkspace loads\t\n", r.CPUs)
	for _, l := range r.Throughput {
		if l.SteadyPerMinute.N == 0 {
			l.SteadyRatio = 0
		}
		fmt.Fprintf(tw, "%d\t%d x %d\t%.1f (%.1f-%.1f)\t%s\t%s\t%s\t%s\t%.2f\t%d/%d\t%d (%d)\t%d\t\n",
			l.Sessions, l.Rounds, l.ConfigsPerRound, l.PerMinute.Median, l.PerMinute.Min, l.PerMinute.Max, times(l.Ratio),
			numOr(l.SteadyPerMinute.N, l.SteadyPerMinute.Median, "%.1f"), times(l.SteadyRatio),
			numOr(l.StartupSeconds.N, l.StartupSeconds.Median, "%.0f"), l.CPUEditor+l.CPUBrowser+l.CPUSelf,
			l.OK, l.Rounds*l.ConfigsPerRound, l.Failed, l.Retried, l.Loads)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(b, "CPU cores busy = code-server group + Chromium tree + this process (driver, capture endpoint, queue, fake model)\n"+
		"over the whole runs.\n\n")
	tw = tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "sims\tdialogue med, warm window (s)\tturn med (s)\tmodel med (s)\tturn-model med (max) (s)\tcores code-server + Chromium + this\tpeak RSS code-server + Chromium\tpeak PSS\t")
	for _, l := range r.Throughput {
		fmt.Fprintf(tw, "%d\t%.2f\t%.2f\t%.2f\t%.2f (%.2f)\t%.2f + %.2f + %.2f\t%.0f + %.0f MiB\t%.0f MiB\t\n",
			l.Sessions, l.DialogueSeconds.Median, l.TurnSeconds.Median, l.ModelSeconds.Median, l.TurnOverhead.Median,
			l.TurnOverhead.Max, l.CPUEditor, l.CPUBrowser, l.CPUSelf, l.PeakRSSEditorMiB, l.PeakRSSBrowserMiB, l.PeakPSSMiB)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := r.printCPUByProcess(b); err != nil {
		return err
	}
	noSteady := false
	for _, l := range r.Throughput {
		steady, self := "-", "-"
		if l.SteadyPerMinute.N > 0 {
			steady, self = fmt.Sprintf("%.2f", l.Steady.Total), fmt.Sprintf("%.2f", l.Steady.Self)
		} else {
			noSteady = true
		}
		fmt.Fprintf(b, "%d sims: %s CPU seconds per dialogue steady, %.2f over the whole run (code-server + Chromium); this process %s / %.2f\n",
			l.Sessions, steady, l.Whole.Total, self, l.Whole.Self)
	}
	if noSteady {
		fmt.Fprintf(b, "(- : no steady span: some window finished its first dialogue too late for one more dialogue per window after it)\n")
	}
	if lo, hi, ok := r.extremeLevels(); ok {
		fmt.Fprintf(b, "memory per extra simulator, isolation %s (peak at %d sims minus peak at %d, over %d): RSS %.0f MiB, PSS %.0f MiB\n",
			orWindow(r.Isolation), hi.Sessions, lo.Sessions, hi.Sessions-lo.Sessions, extraRSS(r), extraPSS(r))
	}
	return nil
}

// printCPUByProcess writes the CPU seconds per dialogue of each kind of
// process, steady and over the whole run, for every level.
func (r *report) printCPUByProcess(b *strings.Builder) error {
	top := r.Throughput[len(r.Throughput)-1]
	seen := map[string]bool{}
	var classes []string
	for _, l := range r.Throughput {
		for _, m := range []map[string]float64{l.Steady.ByClass, l.Whole.ByClass} {
			for k := range m {
				if !seen[k] {
					seen[k] = true
					classes = append(classes, k)
				}
			}
		}
	}
	sort.Slice(classes, func(i, j int) bool {
		a, c := top.Whole.ByClass[classes[i]], top.Whole.ByClass[classes[j]]
		if a != c {
			return a > c
		}
		return classes[i] < classes[j]
	})
	fmt.Fprintf(b, "\nCPU seconds per dialogue by process, steady (share) and whole run:\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "  process")
	for _, l := range r.Throughput {
		fmt.Fprintf(tw, "\t%d sims steady\t\twhole", l.Sessions)
	}
	fmt.Fprintln(tw, "\t")
	for _, k := range append(classes, "total") {
		fmt.Fprintf(tw, "  %s", k)
		for _, l := range r.Throughput {
			steady, whole := l.Steady.ByClass[k], l.Whole.ByClass[k]
			if k == "total" {
				steady, whole = l.Steady.Total, l.Whole.Total
			}
			if l.SteadyPerMinute.N == 0 || l.Steady.Total <= 0 { // no steady span in any round
				fmt.Fprintf(tw, "\t-\t\t%.2f s", whole)
				continue
			}
			fmt.Fprintf(tw, "\t%.2f s\t%.0f%%\t%.2f s", steady, 100*steady/l.Steady.Total, whole)
		}
		fmt.Fprintln(tw, "\t")
	}
	return tw.Flush()
}

// extremeLevels are the levels with the fewest and the most simulators.
func (r *report) extremeLevels() (lo, hi level, ok bool) {
	if len(r.Throughput) < 2 {
		return lo, hi, false
	}
	lo, hi = r.Throughput[0], r.Throughput[0]
	for _, l := range r.Throughput {
		if l.Sessions < lo.Sessions {
			lo = l
		}
		if l.Sessions > hi.Sessions {
			hi = l
		}
	}
	return lo, hi, hi.Sessions > lo.Sessions
}

// extraRSS is the memory each simulator beyond the fewest adds: the peak
// RSS (code-server + Chromium) of the level with the most simulators minus
// that of the level with the fewest, per extra simulator.
func extraRSS(r *report) float64 {
	lo, hi, ok := r.extremeLevels()
	if !ok {
		return 0
	}
	return (hi.PeakRSSEditorMiB + hi.PeakRSSBrowserMiB - lo.PeakRSSEditorMiB - lo.PeakRSSBrowserMiB) / float64(hi.Sessions-lo.Sessions)
}

// extraPSS is extraRSS with proportional set sizes (shared pages counted
// once).
func extraPSS(r *report) float64 {
	lo, hi, ok := r.extremeLevels()
	if !ok {
		return 0
	}
	return (hi.PeakPSSMiB - lo.PeakPSSMiB) / float64(hi.Sessions-lo.Sessions)
}

func times(x float64) string {
	if x <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", x)
}

func numOr(n int, v float64, format string) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf(format, v)
}

// orWindow is the isolation a report names, window for a report written
// before editorbench measured isolated simulators.
func orWindow(isolation string) string {
	if isolation == "" {
		return adapter.IsolationWindow
	}
	return isolation
}

// scaleTargets are issue 43's targets for many window simulators on one
// machine, when the largest level has 8 or more against a 1-simulator
// level: its CPU per dialogue at most 1.2x one simulator's (whole run
// and steady), its dialogues per minute at least 0.75x linear (16
// simulators >= 12x one), and at most 300 MiB per extra simulator.
func scaleTargets(rep *report) []target {
	lo, hi, ok := rep.extremeLevels()
	if !ok || lo.Sessions != 1 || hi.Sessions < 8 {
		return nil
	}
	span := "whole run"
	if rep.Standing {
		span = "standing worker (windows warm)"
	}
	name := fmt.Sprintf("issue 43: CPU s per dialogue at %d simulators vs 1, %s", hi.Sessions, span)
	ts := []target{
		newTarget(fmt.Sprintf("issue 43: %d simulators vs 1: dialogues/min, %s (0.75x linear)", hi.Sessions, span),
			hi.Ratio, hi.Ratio > 0, ">=", 0.75*float64(hi.Sessions), "x"),
		newTarget(name, ratio(hi.Whole.Total, lo.Whole.Total), hi.Whole.Total > 0 && lo.Whole.Total > 0, "<=", 1.2, "x"),
		newTarget("  the same, steady", ratio(hi.Steady.Total, lo.Steady.Total), hi.Steady.Total > 0 && lo.Steady.Total > 0, "<=", 1.2, "x"),
	}
	if orWindow(rep.Isolation) == adapter.IsolationWindow {
		ts = append(ts, newTarget("issue 43: RSS per extra window simulator (code-server + Chromium)", extraRSS(rep), true, "<=", 300, " MiB"))
	}
	return ts
}

// windowTargets is issue 43's bound on what one fresh simulator's window
// costs over 12 dialogues, its start-up (code-server's and Chromium's
// too) included: at most 1.0 CPU-s per dialogue, for a level of one
// fresh simulator on 12 configs.
func windowTargets(rep *report) []target {
	var ts []target
	for _, l := range rep.Throughput {
		if rep.Standing || l.Sessions != 1 || l.Rounds != 1 || l.ConfigsPerRound != 12 {
			continue
		}
		ts = append(ts, newTarget("issue 43: CPU s per dialogue over a whole 12-dialogue window (1 fresh simulator, start-up included)",
			l.Whole.Total, l.Whole.Total > 0, "<=", 1.0, " s"))
	}
	return ts
}
