// Package dashboard turns a run folder into the figures people look at
// instead of the terminal table: progress and rate, score histograms per
// intent, keep rate by intent × language, JSD per profile dimension
// against its 0.02 target, cost per kept turn, and failures by class with
// links to their screenshot and DOM. The same HTML (inline SVG, no
// script) is served live by `dialogfarm serve` and written as
// dashboard.html next to report.json.
package dashboard

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"dialogfarm/analyst"
	"dialogfarm/dialog"
	"dialogfarm/internal/jsonl"
	"dialogfarm/sft"
)

// JSDTarget is the divergence (bits) a dimension should stay under.
const JSDTarget = 0.02

// Progress is how far the run has got.
type Progress struct {
	Status     string  `json:"status"`
	Done       int     `json:"done"`
	Total      int     `json:"total"`
	OK         int     `json:"ok"`
	Failed     int     `json:"failed"`
	PerMinute  float64 `json:"dialogues_per_minute"`
	ETASeconds float64 `json:"eta_seconds"`
}

// IntentScores counts turns by rounded score (0–5) for one intent.
type IntentScores struct {
	Intent string `json:"intent"`
	Counts [6]int `json:"counts"`
}

// KeepCell is the keep rate of one intent × language cell.
type KeepCell struct {
	Intent    string  `json:"intent"`
	Language  string  `json:"language"`
	Turns     int     `json:"turns"`
	KeptTurns int     `json:"kept_turns"`
	Rate      float64 `json:"rate"`
}

// JSD is one profile dimension's divergence from its target.
type JSD struct {
	Dim      string   `json:"dim"`
	Produced float64  `json:"produced"`
	Kept     *float64 `json:"kept"`
}

// Failure is one failed dialogue with links (relative to the run folder)
// to what the driver saved.
type Failure struct {
	ConfigID   string `json:"config_id"`
	Error      string `json:"error"`
	Screenshot string `json:"screenshot,omitempty"`
	DOM        string `json:"dom,omitempty"`
}

// FailureClass groups failures by the step that failed.
type FailureClass struct {
	Class    string    `json:"class"`
	Failures []Failure `json:"failures"`
}

// Data is everything the dashboard shows.
type Data struct {
	Title     string   `json:"title"`
	Progress  Progress `json:"progress"`
	Dialogues int      `json:"dialogues"`
	// KeepRate is the keep rate (dialog.KeepRate, the definition the report
	// and the dataset card use); Provenance describes every turn
	// recorded, Kept the kept ones; Banner, when any kept dialogue holds
	// the offline stand-in's placeholders, says so on top of the page.
	KeepRate        dialog.KeepRate   `json:"keep_rate"`
	Provenance      dialog.Provenance `json:"provenance"`
	Kept            dialog.Provenance `json:"kept"`
	Banner          string            `json:"banner,omitempty"`
	CostUSD         float64           `json:"cost_usd"`
	CostPerKeptTurn *float64          `json:"cost_per_kept_turn"`
	Scores          []IntentScores    `json:"scores"`
	Keep            []KeepCell        `json:"keep"`
	JSD             []JSD             `json:"jsd"`
	Failures        []FailureClass    `json:"failures"`
}

// Sources names the files of a run the dashboard reads; Dialogues is
// required, Configs and Report are used when they exist.
type Sources struct {
	Dir       string
	Dialogues string
	Configs   string
	Report    string
	// Export decides which turns count as kept (as the export does).
	Export sft.Options
}

// Build reads a run's files into dashboard data.
func Build(src Sources) (*Data, error) {
	ds, _, err := jsonl.ReadLog[dialog.Dialogue](src.Dialogues)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	d := &Data{Title: filepath.Base(src.Dir)}
	if src.Configs != "" {
		if cs, err := jsonl.Read[dialog.ChatConfig](src.Configs); err == nil {
			d.Progress.Total = len(cs)
		}
	}
	scores := map[string]*IntentScores{}
	keep := map[[2]string]*KeepCell{}
	failures := map[string]*FailureClass{}
	var pace Pace
	for _, dl := range ds {
		pace.Add(dl)
		d.Dialogues++
		d.Progress.Done++
		if dl.Status != dialog.StatusOK {
			d.Progress.Failed++
			class := dl.FailedStep
			if class == "" {
				class = "error"
			}
			fc := failures[class]
			if fc == nil {
				fc = &FailureClass{Class: class}
				failures[class] = fc
			}
			fc.Failures = append(fc.Failures, failure(src.Dir, dl))
			continue
		}
		d.Progress.OK++
		intent, lang := orNone(dl.Config.Intent), orNone(dl.Config.Language)
		kept := sft.KeptTurns(dl, src.Export)
		cell := keep[[2]string{intent, lang}]
		if cell == nil {
			cell = &KeepCell{Intent: intent, Language: lang}
			keep[[2]string{intent, lang}] = cell
		}
		cell.Turns += len(dl.Turns)
		cell.KeptTurns += kept
		sc := scores[intent]
		if sc == nil {
			sc = &IntentScores{Intent: intent}
			scores[intent] = sc
		}
		for _, t := range dl.Turns {
			s := int(math.Round(shownScore(t.Exchange)))
			sc.Counts[min(5, max(0, s))]++
			for _, c := range t.Candidates {
				d.CostUSD += c.CostUSD
			}
		}
	}
	if d.Progress.Total < d.Progress.Done {
		d.Progress.Total = d.Progress.Done
	}
	d.Progress.PerMinute, d.Progress.ETASeconds = pace.PerMinute(), pace.ETA(d.Progress.Total).Seconds()
	d.keep(ds, src.Export)
	if d.KeepRate.KeptTurns > 0 {
		c := d.CostUSD / float64(d.KeepRate.KeptTurns)
		d.CostPerKeptTurn = &c
	}
	for _, k := range sortedKeys(scores) {
		d.Scores = append(d.Scores, *scores[k])
	}
	for _, c := range keep {
		if c.Turns > 0 {
			c.Rate = float64(c.KeptTurns) / float64(c.Turns)
		}
		d.Keep = append(d.Keep, *c)
	}
	sort.Slice(d.Keep, func(i, j int) bool {
		a, b := d.Keep[i], d.Keep[j]
		return a.Intent < b.Intent || a.Intent == b.Intent && a.Language < b.Language
	})
	for _, k := range sortedKeys(failures) {
		d.Failures = append(d.Failures, *failures[k])
	}
	if src.Report != "" {
		if data, err := os.ReadFile(src.Report); err == nil {
			var r analyst.Report
			if err := json.Unmarshal(data, &r); err != nil {
				return nil, fmt.Errorf("read %s: %w", src.Report, err)
			}
			for _, dim := range r.Dimensions {
				d.JSD = append(d.JSD, JSD{Dim: dim.Dim, Produced: dim.JSDProduced, Kept: dim.JSDKept})
			}
		}
	}
	return d, nil
}

// keep counts the keep rate and provenance of the latest record of each
// config id, as the export and the report do.
func (d *Data) keep(ds []dialog.Dialogue, export sft.Options) {
	d.Provenance, d.Kept = dialog.NewProvenance(), dialog.NewProvenance()
	for _, dl := range dialog.Latest(ds) {
		kept := sft.KeptTurns(dl, export)
		d.KeepRate.Add(len(dl.Turns), kept)
		d.Provenance.Add(dl, len(dl.Turns))
		d.Kept.Add(dl, kept)
	}
	d.Banner = d.Kept.OfflineHeadline("kept dialogues")
}

// shownScore is the best verdict score of the candidate whose text was
// shown.
func shownScore(ex dialog.Exchange) float64 {
	best := 0.0
	for _, v := range ex.Verdicts {
		if v.Candidate >= 0 && v.Candidate < len(ex.Candidates) && ex.Candidates[v.Candidate].Text == ex.Answer {
			best = max(best, v.Score)
		}
	}
	return best
}

func failure(dir string, d dialog.Dialogue) Failure {
	f := Failure{ConfigID: d.ConfigID, Error: d.Error}
	if d.Artifacts == "" {
		return f
	}
	rel := d.Artifacts
	if filepath.IsAbs(rel) {
		if r, err := filepath.Rel(dir, rel); err == nil {
			rel = r
		}
	}
	if filepath.IsAbs(rel) || rel == ".." || len(rel) > 2 && rel[:3] == "../" {
		return f
	}
	for name, field := range map[string]*string{"screenshot.png": &f.Screenshot, "dom.html": &f.DOM} {
		if _, err := os.Stat(filepath.Join(dir, rel, name)); err == nil {
			*field = filepath.ToSlash(filepath.Join(rel, name))
		}
	}
	return f
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
