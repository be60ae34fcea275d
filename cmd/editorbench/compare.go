package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// printSideBySide prints the figures of several backends' reports in
// columns: each latency row's median, the peak RSS with one window, each
// throughput level's dialogues per minute (whole run and steady), UI
// time, CPU and Chromium's peak RSS, and the targets' values.
func printSideBySide(w io.Writer, reps []*report) error {
	var b strings.Builder
	b.WriteString("\nBROWSER BACKENDS SIDE BY SIDE (medians; each backend measured in turn, load average as printed above:")
	for _, r := range reps {
		fmt.Fprintf(&b, " %s %.1f-%.1f", r.Backend, r.LoadSeen.Min, r.LoadSeen.Max)
	}
	b.WriteString(")\n")
	// Rows are collected first, so that the names can be padded to the
	// longest and stay left-aligned in a right-aligned table.
	var rows [][]string
	line := func(name string, cell func(r *report) string) {
		row := []string{name}
		for _, r := range reps {
			row = append(row, cell(r))
		}
		rows = append(rows, row)
	}
	line("measure", func(r *report) string { return string(r.Backend) })
	for i, x := range reps[0].Latency {
		line(x.Name+" (s)", func(r *report) string {
			if i >= len(r.Latency) || r.Latency[i].Name != x.Name {
				return "?"
			}
			return num(r.Latency[i].N, r.Latency[i].Median)
		})
	}
	for i, x := range reps[0].RSS {
		line(x.Name, func(r *report) string {
			if i >= len(r.RSS) {
				return "?"
			}
			return mib(r.RSS[i].N, r.RSS[i].Median)
		})
	}
	for i, l := range reps[0].Throughput {
		at := func(r *report) *level {
			if i < len(r.Throughput) && r.Throughput[i].Sessions == l.Sessions {
				return &r.Throughput[i]
			}
			return nil
		}
		cell := func(f func(l *level) string) func(r *report) string {
			return func(r *report) string {
				if l := at(r); l != nil {
					return f(l)
				}
				return "?"
			}
		}
		line(fmt.Sprintf("%d sims: dialogues/min, whole run", l.Sessions), cell(func(l *level) string { return fmt.Sprintf("%.1f", l.PerMinute.Median) }))
		line(fmt.Sprintf("%d sims: dialogues/min, steady", l.Sessions), cell(func(l *level) string { return numOr(l.SteadyPerMinute.N, l.SteadyPerMinute.Median, "%.1f") }))
		line(fmt.Sprintf("%d sims: turn minus model (s)", l.Sessions), cell(func(l *level) string { return fmt.Sprintf("%.2f", l.TurnOverhead.Median) }))
		line(fmt.Sprintf("%d sims: CPU s per dialogue, steady", l.Sessions), cell(func(l *level) string { return fmt.Sprintf("%.2f", l.Steady.Total) }))
		line(fmt.Sprintf("%d sims: CPU s per dialogue, whole run", l.Sessions), cell(func(l *level) string { return fmt.Sprintf("%.2f", l.Whole.Total) }))
		line(fmt.Sprintf("%d sims: CPU cores Chromium", l.Sessions), cell(func(l *level) string { return fmt.Sprintf("%.2f", l.CPUBrowser) }))
		line(fmt.Sprintf("%d sims: peak RSS Chromium", l.Sessions), cell(func(l *level) string { return fmt.Sprintf("%.0f MiB", l.PeakRSSBrowserMiB) }))
	}
	for i, t := range reps[0].Targets {
		line("target: "+strings.TrimSpace(t.Name), func(r *report) string {
			if i >= len(r.Targets) || !r.Targets[i].Known {
				return "-"
			}
			verdict := "not met"
			if r.Targets[i].Met {
				verdict = "met"
			}
			return fmt.Sprintf("%.2f%s %s", r.Targets[i].Value, r.Targets[i].Unit, verdict)
		})
	}
	width := 0
	for _, row := range rows {
		width = max(width, len([]rune(row[0])))
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, row := range rows {
		row[0] += strings.Repeat(" ", width-len([]rune(row[0])))
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}
