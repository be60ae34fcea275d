package tune

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"dialogfarm/analyst"
	"dialogfarm/dialog/vocab"
	"dialogfarm/profiles"
)

// Report is what a tuning run measured and planned (tune-report.json).
type Report struct {
	Profile string `json:"profile"`
	Rounds  int    `json:"rounds"`
	// Driven is what the pilot and rounds drove: their run folders,
	// dialogues (ok), kept dialogues, turns, kept turns and cost.
	RunFolders []string `json:"run_folders"`
	Dialogues  int      `json:"dialogues"`
	Kept       int      `json:"kept"`
	Turns      int      `json:"turns"`
	KeptTurns  int      `json:"kept_turns"`
	SpentUSD   float64  `json:"spent_usd"`
	// Model is the fitted keep-rate model; CostPerTurn the pilot's.
	Model       *Model  `json:"model"`
	CostPerTurn float64 `json:"cost_per_turn_usd"`
	MaxFactor   float64 `json:"max_factor"`
	MinKeep     float64 `json:"min_keep"`
	MaxJSD      float64 `json:"max_jsd"`
	// Plan is the tuned plan: its file, id and size, how many of its
	// dialogues the model expects kept and what it should cost; Untuned
	// the same for the fitted plan of the same size (what run would do).
	Plan    PlanSummary `json:"plan"`
	Untuned PlanSummary `json:"untuned"`
	// KeptUntuned says the written plan is the untuned one: at its size
	// the reweighted plan was expected further from the target.
	KeptUntuned bool `json:"kept_untuned,omitempty"`
	// Dimensions compares, per dimension, the profile's target with the
	// pilot's produced and kept shares, and with the kept shares the
	// model expects of the untuned and the tuned plan.
	Dimensions []DimTuning `json:"dimensions"`
	// Values are the pilot's counts and keep rates per dimension value;
	// LowKeep those the tuned plan cannot bring to their share (held at
	// the oversampling cap, or not oversampled at all below MinKeep),
	// with the rules that deducted most.
	Values  []ValueStats `json:"values"`
	LowKeep []ValueStats `json:"low_keep,omitempty"`
	// Cells are the pilot's keep rate and cost per intent × language.
	Cells []analyst.CellReport `json:"cells"`
}

// PlanSummary sizes a plan.
type PlanSummary struct {
	Path          string  `json:"path,omitempty"`
	ID            string  `json:"id,omitempty"`
	N             int     `json:"n"`
	ExpectedKept  float64 `json:"expected_kept"`
	ExpectedUSD   float64 `json:"expected_usd"`
	MaxJSDFitted  float64 `json:"max_jsd_fitted"`
	MeanJSDFitted float64 `json:"mean_jsd_fitted"`
}

// DimTuning is one dimension before and after tuning.
type DimTuning struct {
	Dim    string       `json:"dim"`
	Values []ValueShare `json:"values"`
	// JSD (bits) of each kept distribution from the profile's target and
	// from the fitted target (what the repositories allow).
	JSDPilotKept      *float64 `json:"jsd_pilot_kept"`
	JSDUntunedProfile float64  `json:"jsd_untuned_profile"`
	JSDUntunedFitted  float64  `json:"jsd_untuned_fitted"`
	JSDTunedProfile   float64  `json:"jsd_tuned_profile"`
	JSDTunedFitted    float64  `json:"jsd_tuned_fitted"`
	// Met says whether the tuned JSD from the fitted target is at most
	// MaxJSD.
	Met bool `json:"met"`
}

// ValueShare is one value's shares.
type ValueShare struct {
	Value       string  `json:"value"`
	Target      float64 `json:"target"`
	Fitted      float64 `json:"fitted"`
	PilotShare  float64 `json:"pilot_produced"`
	PilotKept   float64 `json:"pilot_kept"`
	Planned     float64 `json:"planned"`
	UntunedKept float64 `json:"untuned_expected_kept"`
	TunedKept   float64 `json:"tuned_expected_kept"`
	KeepRate    float64 `json:"model_keep_rate"`
}

func buildReport(cfg Config, p, fitted *profiles.Profile, fit *profiles.Fit, st *state, w *Weighting, tuned *profiles.Plan) (*Report, error) {
	r := &Report{Profile: p.Name, Rounds: cfg.Rounds, RunFolders: st.dirs, Model: st.model, CostPerTurn: st.cost.PerTurn,
		MaxFactor: cfg.MaxFactor, MinKeep: cfg.MinKeep, MaxJSD: cfg.MaxJSD, SpentUSD: st.spentUSD}
	for _, o := range st.obs {
		r.Dialogues++
		r.Turns += o.Turns
		r.KeptTurns += o.KeptTurns
		if o.Kept {
			r.Kept++
		}
	}
	seed := tuned.Seed
	untuned, err := analyst.MakePlan(fitted, analyst.PlanConfig{N: tuned.N, Seed: seed})
	if err != nil {
		return nil, err
	}
	target := func(dim string) map[string]float64 {
		if fit != nil {
			return fit.Targets[dim]
		}
		return p.Target(dim)
	}
	r.Plan = summarise(tuned, st, target)
	r.Plan.Path = PlanFile
	r.Untuned = summarise(untuned, st, target)
	r.Untuned.ID = ""
	r.KeptUntuned = tuned.Tuning != nil && tuned.Tuning.Untuned
	before, after := ExpectedKept(untuned, st.model), ExpectedKept(tuned, st.model)
	produced, kept := map[string]map[string]float64{}, map[string]map[string]float64{}
	for _, o := range st.obs {
		for dim, v := range o.Values {
			if produced[dim] == nil {
				produced[dim], kept[dim] = map[string]float64{}, map[string]float64{}
			}
			produced[dim][v]++
			if o.Kept {
				kept[dim][v]++
			}
		}
	}
	for _, dim := range vocab.Dimensions() {
		dt := DimTuning{Dim: dim,
			JSDUntunedProfile: jsd(p.Target(dim), before[dim]), JSDUntunedFitted: jsd(target(dim), before[dim]),
			JSDTunedProfile: jsd(p.Target(dim), after[dim]), JSDTunedFitted: jsd(target(dim), after[dim])}
		if j := analyst.JSD(p.Target(dim), kept[dim]); !math.IsNaN(j) {
			dt.JSDPilotKept = &j
		}
		dt.Met = dt.JSDTunedFitted <= cfg.MaxJSD
		pn, kn := sum(produced[dim]), sum(kept[dim])
		planned := tuned.Quotas[dim]
		for _, wt := range p.Dimensions[dim] {
			v := wt.Value
			vs := ValueShare{Value: v, Target: p.Target(dim)[v], Fitted: target(dim)[v],
				UntunedKept: before[dim][v], TunedKept: after[dim][v], KeepRate: st.model.MarginalRate(st.obs, dim, v)}
			if pn > 0 {
				vs.PilotShare = produced[dim][v] / pn
			}
			if kn > 0 {
				vs.PilotKept = kept[dim][v] / kn
			}
			if tuned.N > 0 {
				vs.Planned = float64(planned[v]) / float64(tuned.N)
			}
			dt.Values = append(dt.Values, vs)
		}
		r.Dimensions = append(r.Dimensions, dt)
	}
	r.Values = valueStats(st.obs, p, st.model)
	for _, vs := range r.Values {
		if key := vs.Dim + "=" + vs.Value; slices.Contains(w.Capped, key) || slices.Contains(w.Hopeless, key) {
			r.LowKeep = append(r.LowKeep, vs)
		}
	}
	rc := analyst.DefaultReportConfig()
	rc.KeptTurns = st.keptTurns
	cells := analyst.BuildReport(p, st.configs, st.dialogues, rc)
	r.Cells = cells.Cells
	return r, nil
}

// summarise sizes a plan under the model.
func summarise(pl *profiles.Plan, st *state, target func(string) map[string]float64) PlanSummary {
	s := PlanSummary{ID: pl.ID, N: pl.N, ExpectedKept: expectedKeptCount(pl, st.model), ExpectedUSD: expectedCost(pl, st.cost)}
	kept := ExpectedKept(pl, st.model)
	for _, dim := range vocab.Dimensions() {
		j := jsd(target(dim), kept[dim])
		s.MaxJSDFitted = max(s.MaxJSDFitted, j)
		s.MeanJSDFitted += j / float64(len(vocab.Dimensions()))
	}
	return s
}

func jsd(p, q map[string]float64) float64 {
	j := analyst.JSD(p, q)
	if math.IsNaN(j) {
		return 1
	}
	return j
}

func sum(m map[string]float64) float64 {
	t := 0.0
	for _, x := range m {
		t += x
	}
	return t
}

// WriteTable prints the report for a terminal: the budget, the shares per
// dimension before and after, and the values held at the cap.
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "tune %s: %d rounds; driven %d dialogues (%d kept, %d of %d turns), %.4f USD\n",
		r.Profile, r.Rounds, r.Dialogues, r.Kept, r.KeptTurns, r.Turns, r.SpentUSD)
	fmt.Fprintf(tw, "tuned plan %s: %d dialogues, expected %.1f kept, %.4f USD; untuned (as run): expected %.1f kept\n",
		r.Plan.ID, r.Plan.N, r.Plan.ExpectedKept, r.Plan.ExpectedUSD, r.Untuned.ExpectedKept)
	if r.KeptUntuned {
		fmt.Fprintf(tw, "the plan is the untuned one: at %d dialogues the reweighted plan was expected further from the target (too few dialogues to round to its shares; a larger --max-dialogues or --budget-usd lets tuning help)\n", r.Plan.N)
	}
	fmt.Fprintf(tw, "expected kept vs fitted target, JSD bits: tuned max %.4f mean %.4f; untuned max %.4f mean %.4f (aim: at most %.2f per dimension)\n\n",
		r.Plan.MaxJSDFitted, r.Plan.MeanJSDFitted, r.Untuned.MaxJSDFitted, r.Untuned.MeanJSDFitted, r.MaxJSD)
	fmt.Fprintln(tw, "dimension\tvalue\ttarget\tpilot produced\tpilot kept\tkeep rate\tplanned\tkept untuned\tkept tuned\tJSD untuned\tJSD tuned")
	for _, d := range r.Dimensions {
		for i, v := range d.Values {
			name, ju, jt := "", "", ""
			if i == 0 {
				name, ju, jt = d.Dim, fmt.Sprintf("%.4f", d.JSDUntunedFitted), fmt.Sprintf("%.4f", d.JSDTunedFitted)
				if !d.Met {
					jt += " (above aim)"
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", name, v.Value, pct(v.Target), pct(v.PilotShare), pct(v.PilotKept),
				pct(v.KeepRate), pct(v.Planned), pct(v.UntunedKept), pct(v.TunedKept), ju, jt)
		}
	}
	if len(r.LowKeep) > 0 {
		fmt.Fprintf(tw, "\nnot brought to their share: oversampled at most %.0f×, not at all below a keep rate of %.0f%% (the judge keeps too few):\n", r.MaxFactor, 100*r.MinKeep)
		fmt.Fprintln(tw, "dimension\tvalue\tpilot dialogues\tkept\tkeep rate\tdeducted most")
		for _, v := range r.LowKeep {
			var rules []string
			for _, rc := range v.Deductions[:min(3, len(v.Deductions))] {
				rules = append(rules, fmt.Sprintf("%s %d", rc.Rule, rc.Count))
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\n", v.Dim, v.Value, v.Dialogues, v.Kept, pct(v.ModelRate), strings.Join(rules, ", "))
		}
	}
	return tw.Flush()
}

func pct(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }
