package analyst

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"dialogfarm/analyst/realism"
	"dialogfarm/dialog"
	"dialogfarm/dialog/vocab"
	"dialogfarm/internal/jsonl"
	"dialogfarm/profiles"
)

// ReportConfig configures BuildReport.
type ReportConfig struct {
	// CellDims are the dimensions whose combinations form the cells of the
	// keep-rate and cost table.
	CellDims []string
	// KeptTurns says how many turns of a dialogue are kept: the SFT
	// export's rule (sft.KeptTurns), given by the caller so that the
	// report counts what the export writes. Nil counts none.
	KeptTurns func(dialog.Dialogue) int
}

// DefaultReportConfig reports cells by intent × language, keeping 5-point
// turns.
func DefaultReportConfig() ReportConfig {
	return ReportConfig{CellDims: []string{vocab.DimIntent, vocab.DimLanguage}}
}

// Share is one value's share of a dimension in the target, the produced
// configs and the kept dialogues.
type Share struct {
	Value         string  `json:"value"`
	Target        float64 `json:"target"`
	Produced      float64 `json:"produced"`
	Kept          float64 `json:"kept"`
	ProducedCount int     `json:"produced_count"`
	KeptCount     int     `json:"kept_count"`
}

// DimReport compares one dimension's distributions. JSDKept is nil when
// nothing was kept.
type DimReport struct {
	Dim         string   `json:"dim"`
	Values      []Share  `json:"values"`
	JSDProduced float64  `json:"jsd_produced"`
	JSDKept     *float64 `json:"jsd_kept"`
}

// CellReport is the keep rate and cost of one cell.
type CellReport struct {
	Cell            string   `json:"cell"`
	Dialogues       int      `json:"dialogues"`
	Turns           int      `json:"turns"`
	KeptTurns       int      `json:"kept_turns"`
	KeepRate        float64  `json:"keep_rate"`
	CostUSD         float64  `json:"cost_usd"`
	CostPerKeptTurn *float64 `json:"cost_per_kept_turn"`
}

// Report is the fidelity report of a run against its profile. It reads
// the latest record of each config id (dialog.Latest), as the export does.
// A dialogue counts as kept in the kept distribution when at least one of
// its turns was kept.
type Report struct {
	// Version is dialogfarm's version (set by the caller).
	Version     string `json:"version"`
	Profile     string `json:"profile"`
	ProfileHash string `json:"profile_hash"`
	Configs     int    `json:"configs"`
	Dialogues   int    `json:"dialogues"`
	// Keep is the keep rate, turns and dialogues each named
	// (dialog.KeepRate, the same definition as the dataset card's).
	Keep dialog.KeepRate `json:"keep"`
	// Provenance describes every turn recorded, Kept the kept turns: the
	// offline stand-in's placeholders, the models, how the judge scored,
	// who wrote the queries.
	Provenance dialog.Provenance `json:"provenance"`
	Kept       dialog.Provenance `json:"kept"`
	Dimensions []DimReport       `json:"dimensions"`
	CellDims   []string          `json:"cell_dims"`
	Cells      []CellReport      `json:"cells"`
	// Scores counts final judge scores, rounded to whole points (0: no
	// usable verdict): Shown of the answer the plugin showed per turn,
	// Candidates of every judged candidate.
	Scores ScoreCounts `json:"scores"`
	// Secrets, when known, counts the secrets redacted and the samples the
	// export's safety net dropped.
	Secrets *SecretCounts `json:"secrets,omitempty"`
	// Realism, when a reference log set is known, compares the generated
	// first queries with the logged ones (see Realism).
	Realism *realism.Report `json:"realism,omitempty"`
	// Fit, when the run's plan was fitted to its repositories, says what
	// they hold and what moved (profiles.Plan.Fit).
	Fit *profiles.Fit `json:"fit,omitempty"`
}

// ScoreCounts are score histograms; index i counts score i (0..5).
type ScoreCounts struct {
	Shown      [6]int `json:"shown"`
	Candidates [6]int `json:"candidates"`
}

// scoreBucket rounds a final score to a whole point in 0..5.
func scoreBucket(s float64) int {
	return min(max(int(math.Round(s)), 0), 5)
}

// countScores adds a turn's verdicts to the histograms: every candidate's
// best-ranked verdict, and the shown answer's (0 when none judged it).
func (sc *ScoreCounts) countScores(t dialog.Turn) {
	best := map[int]dialog.Verdict{}
	for _, v := range t.Verdicts {
		if b, ok := best[v.Candidate]; !ok || v.Rank < b.Rank {
			best[v.Candidate] = v
		}
	}
	shown := -1.0
	for i, c := range t.Candidates {
		v, ok := best[i]
		if !ok {
			continue
		}
		sc.Candidates[scoreBucket(v.Score)]++
		if c.Text == t.Answer && v.Score > shown {
			shown = v.Score
		}
	}
	sc.Shown[scoreBucket(shown)]++
}

// BuildReport compares the profile's targets with the produced configs and
// the kept dialogues.
func BuildReport(p *profiles.Profile, configs []dialog.ChatConfig, dialogues []dialog.Dialogue, cfg ReportConfig) *Report {
	kept := cfg.KeptTurns
	if kept == nil {
		kept = func(dialog.Dialogue) int { return 0 }
	}
	dialogues = dialog.Latest(dialogues)
	r := &Report{Profile: p.Name, ProfileHash: p.Hash(), Configs: len(configs), Dialogues: len(dialogues), CellDims: cfg.CellDims,
		Provenance: dialog.NewProvenance(), Kept: dialog.NewProvenance()}
	produced := map[string]map[string]int{}
	keptDist := map[string]map[string]int{}
	add := func(m map[string]map[string]int, vals map[string]string) {
		for dim, v := range vals {
			if m[dim] == nil {
				m[dim] = map[string]int{}
			}
			m[dim][v]++
		}
	}
	for _, c := range configs {
		add(produced, profiles.ConfigValues(c))
	}
	cells := map[string]*CellReport{}
	var order []string
	for _, d := range dialogues {
		vals := profiles.ConfigValues(d.Config)
		key := cellOf(vals, cfg.CellDims)
		cr, ok := cells[key]
		if !ok {
			cr = &CellReport{Cell: key}
			cells[key] = cr
			order = append(order, key)
		}
		cr.Dialogues++
		for _, t := range d.Turns {
			cr.Turns++
			r.Scores.countScores(t)
			for _, cand := range t.Candidates {
				cr.CostUSD += cand.CostUSD
			}
		}
		k := kept(d)
		r.Keep.Add(len(d.Turns), k)
		r.Provenance.Add(d, len(d.Turns))
		r.Kept.Add(d, k)
		if k > 0 {
			cr.KeptTurns += k
			add(keptDist, vals)
		}
	}
	slices.Sort(order)
	for _, key := range order {
		cr := cells[key]
		if cr.Turns > 0 {
			cr.KeepRate = float64(cr.KeptTurns) / float64(cr.Turns)
		}
		if cr.KeptTurns > 0 {
			per := cr.CostUSD / float64(cr.KeptTurns)
			cr.CostPerKeptTurn = &per
		}
		r.Cells = append(r.Cells, *cr)
	}
	for _, dim := range vocab.Dimensions() {
		r.Dimensions = append(r.Dimensions, dimReport(p, dim, produced[dim], keptDist[dim]))
	}
	return r
}

func cellOf(vals map[string]string, dims []string) string {
	parts := make([]string, len(dims))
	for i, d := range dims {
		parts[i] = vals[d]
	}
	return strings.Join(parts, "/")
}

func dimReport(p *profiles.Profile, dim string, produced, kept map[string]int) DimReport {
	target := p.Target(dim)
	dr := DimReport{Dim: dim}
	values := []string{}
	for _, w := range p.Dimensions[dim] {
		values = append(values, w.Value)
	}
	for _, m := range []map[string]int{produced, kept} {
		for _, v := range slices.Sorted(maps.Keys(m)) {
			if !slices.Contains(values, v) {
				values = append(values, v) // produced values the profile does not list
			}
		}
	}
	np, nk := total(produced), total(kept)
	for _, v := range values {
		s := Share{Value: v, Target: target[v], ProducedCount: produced[v], KeptCount: kept[v]}
		if np > 0 {
			s.Produced = float64(produced[v]) / float64(np)
		}
		if nk > 0 {
			s.Kept = float64(kept[v]) / float64(nk)
		}
		dr.Values = append(dr.Values, s)
	}
	dr.JSDProduced = JSD(target, Floats(produced))
	if math.IsNaN(dr.JSDProduced) {
		dr.JSDProduced = 1
	}
	if nk > 0 {
		j := JSD(target, Floats(kept))
		dr.JSDKept = &j
	}
	return dr
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// WriteTable prints the report for a terminal.
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	if banner := r.OfflineBanner(); banner != "" {
		fmt.Fprintf(tw, "WARNING: %s\n\n", banner)
	}
	fmt.Fprintf(tw, "profile %s: %d configs, %d dialogues\nkeep rate: %s\n", r.Profile, r.Configs, r.Dialogues, r.Keep)
	for _, line := range r.ProvenanceLines() {
		fmt.Fprintf(tw, "%s: %s\n", line[0], line[1])
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "dimension\tvalue\ttarget\tproduced\tkept\tJSD produced\tJSD kept")
	for _, d := range r.Dimensions {
		for i, s := range d.Values {
			name, jp, jk := "", "", ""
			if i == 0 {
				name, jp, jk = d.Dim, fmt.Sprintf("%.4f", d.JSDProduced), "-"
				if d.JSDKept != nil {
					jk = fmt.Sprintf("%.4f", *d.JSDKept)
				}
			}
			kept := "-"
			if r.Dialogues > 0 {
				kept = fmt.Sprintf("%.1f%% (%d)", 100*s.Kept, s.KeptCount)
			}
			fmt.Fprintf(tw, "%s\t%s\t%.1f%%\t%.1f%% (%d)\t%s\t%s\t%s\n", name, s.Value,
				100*s.Target, 100*s.Produced, s.ProducedCount, kept, jp, jk)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if r.Fit != nil && (len(r.Fit.Moves) > 0 || r.Fit.CapacityLine() != "") {
		fmt.Fprintln(w)
		if err := WriteMoves(w, r.Fit); err != nil {
			return err
		}
	}
	if len(r.Cells) > 0 {
		fmt.Fprintf(tw, "\ncell (%s)\tdialogues\tturns\tkept turns\tturn keep rate\tcost USD\tcost/kept turn\n", strings.Join(r.CellDims, "/"))
		for _, c := range r.Cells {
			per := "-"
			if c.CostPerKeptTurn != nil {
				per = fmt.Sprintf("%.4f", *c.CostPerKeptTurn)
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.1f%%\t%.4f\t%s\n", c.Cell, c.Dialogues, c.Turns, c.KeptTurns,
				100*c.KeepRate, c.CostUSD, per)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if r.Realism != nil {
		_, err := fmt.Fprint(w, "\n"+r.Realism.Summary())
		return err
	}
	return nil
}

// OfflineBanner is the warning every page of the report shows when any
// kept dialogue holds the offline stand-in's placeholders, or "".
func (r *Report) OfflineBanner() string {
	return r.Kept.OfflineSentence("kept dialogues")
}

// ProvenanceLines are the report's provenance as (label, value) lines:
// the version, the profile, the offline stand-in, the models, the judge
// and the queries, of every turn recorded and of the kept ones.
func (r *Report) ProvenanceLines() [][2]string {
	p, k := r.Provenance, r.Kept
	lines := [][2]string{
		{"dialogfarm version", orNone(r.Version)},
		{"profile", strings.TrimSpace(r.Profile + " " + r.ProfileHash)},
		{"offline stand-in", fmt.Sprintf("%d of %d dialogues (%d of %d turns); kept: %d of %d dialogues",
			p.OfflineDialogues, p.Dialogues, p.OfflineTurns, p.Turns, k.OfflineDialogues, k.Dialogues)},
		{"answers by model (turns)", dialog.Counts(p.AnswerModels) + "; kept: " + dialog.Counts(k.AnswerModels)},
		{"pool models (turns with a candidate)", dialog.Counts(p.PoolModels)},
		{"judge models (turns scored)", dialog.Counts(p.JudgeModels) + "; kept: " + dialog.Counts(k.JudgeModels)},
		{"judge mode (turns)", dialog.Counts(p.JudgeModes) + "; kept: " + dialog.Counts(k.JudgeModes)},
		{"first query written by (dialogues)", dialog.Counts(p.QuerySources) + "; kept: " + dialog.Counts(k.QuerySources)},
	}
	if r.Secrets != nil {
		lines = append(lines, [2]string{"secrets redacted", fmt.Sprint(r.Secrets.Redacted) + perRule(r.Secrets.RedactedPerRule)})
	}
	return lines
}

func orNone(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// ReadRun reads a run's configs and, if the file exists, its dialogues.
func ReadRun(configsPath, dialoguesPath string) ([]dialog.ChatConfig, []dialog.Dialogue, error) {
	configs, err := jsonl.Read[dialog.ChatConfig](configsPath)
	if err != nil {
		return nil, nil, err
	}
	dialogues, _, err := jsonl.ReadLog[dialog.Dialogue](dialoguesPath)
	if errors.Is(err, os.ErrNotExist) {
		return configs, nil, nil
	}
	return configs, dialogues, err
}
