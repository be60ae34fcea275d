package main

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"dialogfarm/pool"
)

// report prints each member's and the judge model's accounting.
func (r *poolResponder) report(w io.Writer) {
	stats := r.pool.Stats()
	if r.judgeModel != nil {
		stats = append(stats, r.judgeModel.Stats())
	}
	writeStats(w, stats)
}

// writeStats prints the models' accounting, a line per model; a process
// that called none (a run whose dialogues a farm's workers drove) says so
// in one line rather than with a table of zeros.
func writeStats(w io.Writer, stats []pool.Stats) {
	if !slices.ContainsFunc(stats, func(s pool.Stats) bool { return s.Calls > 0 || s.CacheHits > 0 }) {
		fmt.Fprintln(w, "models: no call from this process (on a farm the workers call them: each prints its own table when it stops, and the run's report sums the costs from the records)")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "member\tmodel\tanswers\tcalls\tretries\tfailures\tlate\tskipped\tcache hits\tprompt tok\tcompletion tok\tcost USD\tlimit wait s\tstatus")
	for _, s := range stats {
		status := "ok"
		if s.Failing {
			status = "FAILING: " + s.LastError
		}
		if s.Circuit != "" && s.Circuit != "closed" {
			status = "circuit " + s.Circuit + "; " + status
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%.4f\t%.1f\t%s\n", s.Member, s.Model, s.Answers, s.Calls,
			s.Retries, s.Failures, s.Late, s.Skipped, s.CacheHits, s.PromptTokens, s.CompletionTokens, s.CostUSD, s.LimitWait, status)
	}
	_ = tw.Flush()
}
