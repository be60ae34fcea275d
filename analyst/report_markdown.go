package analyst

import (
	"fmt"
	"io"
	"strings"
)

// WriteMarkdown writes the report as GitHub-flavoured Markdown tables, for
// a pull request or a model card.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	cell := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	p("## Fidelity report: profile %s\n\n", cell(r.Profile))
	if banner := r.Kept.OfflineHeadline("kept dialogues"); banner != "" {
		p("> **%s.**\n\n", cell(banner))
	}
	p("%d configs, %d dialogues. Keep rate: %s.\n\n", r.Configs, r.Dialogues, r.Keep)
	p("| provenance | |\n|---|---|\n")
	for _, line := range r.ProvenanceLines() {
		p("| %s | %s |\n", cell(line[0]), cell(line[1]))
	}
	p("\n")
	p("| dimension | JSD produced (bits) | JSD kept (bits) |\n|---|---:|---:|\n")
	for _, d := range r.Dimensions {
		kept := "n/a"
		if d.JSDKept != nil {
			kept = fmt.Sprintf("%.4f", *d.JSDKept)
		}
		p("| %s | %.4f | %s |\n", cell(d.Dim), d.JSDProduced, kept)
	}
	for _, d := range r.Dimensions {
		p("\n### %s\n\n| value | target | produced | kept |\n|---|---:|---:|---:|\n", cell(d.Dim))
		for _, s := range d.Values {
			kept := "n/a"
			if r.Dialogues > 0 {
				kept = fmt.Sprintf("%s (%d)", pct(s.Kept), s.KeptCount)
			}
			p("| %s | %s | %s (%d) | %s |\n", cell(s.Value), pct(s.Target), pct(s.Produced), s.ProducedCount, kept)
		}
	}
	p("\n### Judge scores\n\n| score | shown answers | candidates |\n|---|---:|---:|\n")
	for i, label := range []string{"no verdict", "1", "2", "3", "4", "5"} {
		p("| %s | %d | %d |\n", label, r.Scores.Shown[i], r.Scores.Candidates[i])
	}
	if len(r.Cells) > 0 {
		p("\n### Cells (%s)\n\n| cell | dialogues | turns | kept turns | turn keep rate | cost USD | cost / kept turn |\n|---|---:|---:|---:|---:|---:|---:|\n",
			cell(strings.Join(r.CellDims, " × ")))
		for _, c := range r.Cells {
			per := "n/a"
			if c.CostPerKeptTurn != nil {
				per = fmt.Sprintf("%.4f", *c.CostPerKeptTurn)
			}
			p("| %s | %d | %d | %d | %s | %.4f | %s |\n", cell(c.Cell), c.Dialogues, c.Turns, c.KeptTurns, pct(c.KeepRate), c.CostUSD, per)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
