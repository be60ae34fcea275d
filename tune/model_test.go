package tune

import (
	"math"
	"slices"
	"testing"

	"dialogfarm/dialog/vocab"
	"dialogfarm/judge"
	"dialogfarm/profiles"
)

// pilotObs makes n observations per intent, spread evenly over every
// other dimension's values, kept at the given rate per intent (the first
// round(rate*n) of each intent kept), each not-kept one deducted by rule.
func pilotObs(p *profiles.Profile, n int, rate map[string]float64, rule string) []Obs {
	var out []Obs
	i := 0
	for _, w := range p.Dimensions[vocab.DimIntent] {
		for j := range n {
			vals := map[string]string{}
			for _, dim := range vocab.Dimensions() {
				ws := p.Dimensions[dim]
				vals[dim] = ws[(i+j*7+len(dim))%len(ws)].Value
			}
			vals[vocab.DimIntent] = w.Value
			o := Obs{Values: vals, Turns: 1, Deductions: map[string]int{}}
			if float64(j) < math.Round(rate[w.Value]*float64(n)) {
				o.Kept, o.KeptTurns = true, 1
			} else {
				o.Deductions[rule] = 1
			}
			out = append(out, o)
			i++
		}
	}
	return out
}

// defaultPilot is a pilot of the default profile, n dialogues per intent
// kept at rate, and the model fitted to it.
func defaultPilot(t *testing.T, n int, rate map[string]float64) (*profiles.Profile, []Obs, *Model) {
	t.Helper()
	p, err := profiles.Builtin("default")
	if err != nil {
		t.Fatal(err)
	}
	obs := pilotObs(p, n, rate, judge.RuleMissingCodeBlock)
	return p, obs, FitModel(obs, 0)
}

// TestModelShrinksAndSeparates: the dimension whose values differ gets a
// prior scale well above the others', its values' keep rates come out in
// the right order, and a dimension with no real difference stays near
// the pooled rate.
func TestModelShrinksAndSeparates(t *testing.T) {
	rate := map[string]float64{"explain": 0.9, "generate": 0.3, "fix": 0.5, "tests": 0.2, "docs": 0.6, "optimize": 0.5, "refactor": 0.5, "question": 0.9}
	p, obs, m := defaultPilot(t, 10, rate)
	if m.Sigma[vocab.DimIntent] < 0.5 || m.Sigma[vocab.DimLanguage] > 0.3 {
		t.Errorf("sigma intent %.2f, language %.2f: want the intent's large, the language's small", m.Sigma[vocab.DimIntent], m.Sigma[vocab.DimLanguage])
	}
	ex, te := m.MarginalRate(obs, vocab.DimIntent, "explain"), m.MarginalRate(obs, vocab.DimIntent, "tests")
	if ex < 0.7 || te > 0.4 {
		t.Errorf("explain %.2f, tests %.2f", ex, te)
	}
	for _, w := range p.Dimensions[vocab.DimLanguage] {
		if r := m.MarginalRate(obs, vocab.DimLanguage, w.Value); math.Abs(r-0.55) > 0.1 {
			t.Errorf("language %s: %.2f, want near the pooled 0.55", w.Value, r)
		}
	}
}

// TestReweightCapsAndGivesUp: a value kept at 20% is oversampled but at
// most MaxFactor times its share; one the judge never keeps is not
// oversampled at all and is reported with its dominant deduction.
func TestReweightCapsAndGivesUp(t *testing.T) {
	rate := map[string]float64{"explain": 0.9, "generate": 0.9, "fix": 0.9, "tests": 0, "docs": 0.9, "optimize": 0.9, "refactor": 0.2, "question": 0.9}
	p, obs, m := defaultPilot(t, 12, rate)
	w, err := Reweight(p, nil, m, obs, 2, DefaultMinKeep, 1)
	if err != nil {
		t.Fatal(err)
	}
	if f := w.Factor[vocab.DimIntent]["refactor"]; f < 1.5 || f > 2.0001 {
		t.Errorf("refactor planned %.2f× its share, want oversampled up to the cap of 2", f)
	}
	if f := w.Factor[vocab.DimIntent]["tests"]; math.Abs(f-1) > 0.05 {
		t.Errorf("tests (never kept) planned %.2f× its share, want 1 (not oversampled)", f)
	}
	if !slices.Contains(w.Hopeless, "intent=tests") || !slices.Contains(w.Capped, "intent=refactor") {
		t.Errorf("hopeless %v, capped %v", w.Hopeless, w.Capped)
	}
	for _, vs := range valueStats(obs, p, m) {
		if vs.Dim == vocab.DimIntent && vs.Value == "tests" {
			if len(vs.Deductions) == 0 || vs.Deductions[0].Rule != judge.RuleMissingCodeBlock {
				t.Errorf("tests deductions %v", vs.Deductions)
			}
		}
	}
}

// TestBestPlanNeverWorseThanUntuned: at every size the plan written is
// expected to keep dialogues at least as close to the target as the
// untuned plan, and at some small sizes that takes keeping the untuned one.
func TestBestPlanNeverWorseThanUntuned(t *testing.T) {
	rate := map[string]float64{"explain": 0.9, "generate": 0.3, "fix": 0.5, "tests": 0.2, "docs": 0.6, "optimize": 0.5, "refactor": 0.5, "question": 0.9}
	p, obs, m := defaultPilot(t, 10, rate)
	w, err := Reweight(p, nil, m, obs, 3, DefaultMinKeep, 1)
	if err != nil {
		t.Fatal(err)
	}
	kept, tunedWon := 0, 0
	for n := 2; n <= 60; n++ {
		best, err := BestPlan(p, p, nil, w, m, n, 1, 1, 3)
		if err != nil {
			t.Fatal(err)
		}
		tuned, err := TunedPlan(p, nil, w, m, n, 1, 1, 3)
		if err != nil {
			t.Fatal(err)
		}
		plain, err := TunedPlan(p, nil, &Weighting{Profile: p}, m, n, 1, 1, 3)
		if err != nil {
			t.Fatal(err)
		}
		b, tu, pl := worstJSD(best, m, p.Target), worstJSD(tuned, m, p.Target), worstJSD(plain, m, p.Target)
		if b > min(tu, pl)+1e-12 {
			t.Errorf("n=%d: best plan's worst JSD %.4f, tuned %.4f, untuned %.4f", n, b, tu, pl)
		}
		if best.Tuning.Untuned {
			kept++
		} else {
			tunedWon++
		}
	}
	if kept == 0 || tunedWon == 0 {
		t.Errorf("untuned kept at %d sizes, tuned at %d: want both to happen between 2 and 60 dialogues", kept, tunedWon)
	}
	t.Logf("untuned kept at %d of 59 sizes", kept)
}
