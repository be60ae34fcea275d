package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
)

// readReports reads the -json reports of earlier invocations: throughput
// reports (one backend each) and -startup reports.
func readReports(paths []string) ([]*report, []*startupFigures, error) {
	var out []*report
	var starts []*startupFigures
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, nil, fmt.Errorf("read report: %w", err)
		}
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(data, &keys); err != nil {
			return nil, nil, fmt.Errorf("read report %s (an earlier -json output): %w", p, err)
		}
		if _, ok := keys["throughput"]; !ok && keys["runs"] != nil && keys["windows"] != nil {
			var f startupFigures
			if err := json.Unmarshal(data, &f); err != nil {
				return nil, nil, fmt.Errorf("read report %s (a -startup -json output): %w", p, err)
			}
			starts = append(starts, &f)
			continue
		}
		var r report
		if err := json.Unmarshal(data, &r); err != nil {
			return nil, nil, fmt.Errorf("read report %s (one backend's -json output): %w", p, err)
		}
		if len(r.Throughput) == 0 {
			return nil, nil, fmt.Errorf("read report %s: no throughput levels", p)
		}
		out = append(out, &r)
	}
	return out, starts, nil
}

// printSummary prints the throughput levels of several reports (each run
// with its own model delay) as one table, the issue's, and every report's
// targets, so that `make bench-farm` ends with the whole farm on one page.
func printSummary(w io.Writer, reps []*report, starts []*startupFigures) error {
	var b strings.Builder
	b.WriteString("\nFARM SUMMARY (each level a fresh `dialogfarm drive --sessions n`, or a standing worker's warm windows; load average as printed above:")
	for _, r := range reps {
		fmt.Fprintf(&b, " %.0f s model %.1f-%.1f", r.ModelDelay, r.LoadSeen.Min, r.LoadSeen.Max)
	}
	b.WriteString(")\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "model\tworker\tsims\tconfigs\trepos\tdial/min whole run\tvs 1\tdial/min steady\tvs 1\tCPU cores busy\tCPU s/dialogue steady (whole)\tpeak RSS\tok\t")
	for _, r := range reps {
		for _, l := range r.Throughput {
			steady, cpu := "-", fmt.Sprintf("- (%.2f)", l.Whole.Total)
			if l.SteadyPerMinute.N > 0 {
				steady, cpu = fmt.Sprintf("%.1f", l.SteadyPerMinute.Median), fmt.Sprintf("%.2f (%.2f)", l.Steady.Total, l.Whole.Total)
			} else {
				l.SteadyRatio = 0
			}
			fmt.Fprintf(tw, "%.0f s\t%s\t%d\t%d x %d\t%d\t%.1f\t%s\t%s\t%s\t%.2f\t%s\t%.0f MiB\t%d/%d\t\n",
				r.ModelDelay, r.worker(), l.Sessions, l.Rounds, l.ConfigsPerRound, r.repos(), l.PerMinute.Median, times(l.Ratio), steady, times(l.SteadyRatio),
				l.CPUEditor+l.CPUBrowser+l.CPUSelf, cpu, l.PeakRSSEditorMiB+l.PeakRSSBrowserMiB, l.OK, l.Rounds*l.ConfigsPerRound)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range reps {
		if r.Queue != nil {
			fmt.Fprintf(&b, "queue per job: %.0f µs wall, %.0f µs CPU (medians of %d runs)\n", r.Queue.WallMicros.Median, r.Queue.CPUMicros.Median, r.Queue.CPUMicros.N)
		}
	}
	b.WriteString("\nALL TARGETS (a run of 1 simulator alone has no ratio of its own: its rows that say NOT MEASURED are left out)\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, r := range reps {
		for _, t := range r.Targets {
			if !t.Known && len(r.Throughput) == 1 && r.Throughput[0].Sessions == 1 {
				continue
			}
			fmt.Fprintf(tw, "%.0f s model run (%s worker): %s\t%s\t\n", r.ModelDelay, r.worker(), strings.TrimSpace(t.Name), t.verdict())
		}
	}
	for _, t := range equalWorkTargets(reps) {
		fmt.Fprintf(tw, "%s\t%s\t\n", t.Name, t.verdict())
	}
	for _, f := range starts {
		for _, t := range f.targets() {
			fmt.Fprintf(tw, "start-up runs (%d windows each): %s\t%s\t\n", f.Windows, t.Name, t.verdict())
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// worker says how the report's levels were driven: a fresh drive stage
// each, or a standing worker's warm windows (-standing).
func (r *report) worker() string {
	if r.Standing {
		return "standing"
	}
	return "fresh"
}

// repos is how many repository copies the report's configs went to
// (reports made before -repos say 0: one).
func (r *report) repos() int { return max(r.Repos, 1) }

// equalWorkTargets compares, at the same model delay, n simulators with
// one simulator driving the same number of configs: a report of 1
// simulator alone (make bench-farm runs 1 x 48 at the 2 s model) against
// every level of the other reports with that many configs per round. The
// targets the reports hold themselves give n simulators the work of n
// single ones, so one simulator there amortises its window start-up over
// n times fewer configs; this is the issue's own table (1 and 4
// simulators, 48 configs each).
func equalWorkTargets(reps []*report) []target {
	var ts []target
	for _, one := range reps {
		if len(one.Throughput) != 1 || one.Throughput[0].Sessions != 1 {
			continue
		}
		base := one.Throughput[0]
		for _, r := range reps {
			if r == one || r.ModelDelay != one.ModelDelay || r.Standing != one.Standing || r.repos() != one.repos() ||
				orWindow(r.Isolation) != orWindow(one.Isolation) {
				continue
			}
			for _, l := range r.Throughput {
				if l.Sessions < 2 || l.ConfigsPerRound != base.ConfigsPerRound {
					continue
				}
				name := fmt.Sprintf("%.0f s model: %d simulators vs 1 on the same %d configs, whole run incl. window start-up (0.8x linear)",
					r.ModelDelay, l.Sessions, l.ConfigsPerRound)
				ts = append(ts,
					newTarget(name, ratio(l.PerMinute.Median, base.PerMinute.Median), l.PerMinute.N > 0 && base.PerMinute.N > 0, ">=", 0.8*float64(l.Sessions), "x"),
					newTarget("  the same, steady (every window warm)", ratio(l.SteadyPerMinute.Median, base.SteadyPerMinute.Median),
						l.SteadyPerMinute.N > 0 && base.SteadyPerMinute.N > 0, ">=", 0.8*float64(l.Sessions), "x"))
			}
		}
	}
	return ts
}
