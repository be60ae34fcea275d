package tune

import (
	"fmt"

	"dialogfarm/analyst"
	"dialogfarm/dialog/vocab"
	"dialogfarm/profiles"
)

// DefaultMaxFactor caps oversampling: a value is planned at most this many
// times its fitted share. A value whose keep rate is so low that it would
// need more is reported (with the judge rules that deduct most) instead of
// eating the budget.
const DefaultMaxFactor = 4.0

// rakeSample is how many dialogues the planner draws to measure the
// expected kept shares of a weighting (stratified, so every dimension's
// shares are exact to 1/rakeSample).
const rakeSample = 2000

// DefaultMinKeep is the keep rate below which a value is not oversampled
// at all: it is planned at its fitted share and reported with the judge
// rules that deduct most, for someone to fix the prompts, the pool or the
// rubric; oversampling it would spend the budget on dialogues the judge
// throws away.
const DefaultMinKeep = 0.1

// Weighting is a planning profile: the fitted profile with each
// dimension's weights changed so that the dialogues the model expects to
// be kept have the fitted shares.
type Weighting struct {
	Profile *profiles.Profile
	// Factor is each value's planned share over its fitted share.
	Factor map[string]map[string]float64
	// Capped lists the values held at the maximum factor, Hopeless those
	// whose keep rate is below the minimum ("dim=value").
	Capped, Hopeless []string
}

// Reweight finds the planning weights by raking (iterative proportional
// fitting on the expected kept shares): each round plans rakeSample
// dialogues on the current weights, computes each dimension's expected
// kept shares under the model, and multiplies each value's weight by its
// fitted share over its expected kept share. A value's planned share is
// held at most maxFactor times its fitted share; a value whose keep rate
// (Model.MarginalRate over obs) is below minKeep is held at its fitted share. It stops
// when no dimension's expected kept shares move by more than 1e-4 bits
// (JSD) from one round to the next, or after 25 rounds.
func Reweight(fitted *profiles.Profile, fit *profiles.Fit, m *Model, obs []Obs, maxFactor, minKeep float64, seed int64) (*Weighting, error) {
	if maxFactor < 1 {
		maxFactor = DefaultMaxFactor
	}
	target := func(dim string) map[string]float64 {
		if fit != nil {
			return fit.Targets[dim]
		}
		return fitted.Target(dim)
	}
	w := &Weighting{Factor: map[string]map[string]float64{}}
	hopeless := map[string]bool{}
	for _, dim := range vocab.Dimensions() {
		for _, wt := range fitted.Dimensions[dim] {
			if target(dim)[wt.Value] > 0 && m.MarginalRate(obs, dim, wt.Value) < minKeep {
				hopeless[dim+"="+wt.Value] = true
				w.Hopeless = append(w.Hopeless, dim+"="+wt.Value)
			}
		}
	}
	q := cloneWeights(fitted)
	capped := map[string]bool{}
	var last *profiles.Profile
	var prev map[string]map[string]float64
	for round := 0; round < 25; round++ {
		pl, err := analyst.MakePlan(q, analyst.PlanConfig{N: rakeSample, Seed: seed})
		if err != nil {
			if last == nil {
				return nil, err
			}
			q = last // the previous weights still plan
			break
		}
		last = cloneWeights(q)
		kept := ExpectedKept(pl, m)
		if prev != nil {
			moved := 0.0
			for _, dim := range vocab.Dimensions() {
				moved = max(moved, jsd(prev[dim], kept[dim]))
			}
			if moved < 1e-4 {
				break
			}
		}
		prev = kept
		clear(capped)
		for _, dim := range vocab.Dimensions() {
			t := target(dim)
			share := q.Target(dim)
			next := map[string]float64{}
			fixed := map[string]bool{}
			for v, tv := range t {
				switch k := kept[dim][v]; {
				case tv <= 0:
				case hopeless[dim+"="+v]:
					next[v], fixed[v] = tv, true
				case k <= 0:
					next[v] = share[v] * maxFactor
				default:
					next[v] = share[v] * tv / k
				}
			}
			capTo(next, t, fixed, maxFactor, capped, dim)
			for i, wt := range q.Dimensions[dim] {
				q.Dimensions[dim][i].Weight = next[wt.Value]
			}
		}
	}
	w.Profile = q
	for _, dim := range vocab.Dimensions() {
		t, share := target(dim), q.Target(dim)
		w.Factor[dim] = map[string]float64{}
		for _, wt := range fitted.Dimensions[dim] {
			v := wt.Value
			if t[v] <= 0 {
				continue
			}
			w.Factor[dim][v] = share[v] / t[v]
			if share[v]/t[v] >= maxFactor*0.999 {
				w.Capped = append(w.Capped, dim+"="+v)
			}
		}
	}
	return w, nil
}

// capTo scales next so that it sums to one with the fixed values at their
// target share, and holds every other value at most maxFactor times its
// target share, re-normalising the rest, until none is above.
func capTo(next, t map[string]float64, fixed map[string]bool, maxFactor float64, capped map[string]bool, dim string) {
	held := map[string]bool{}
	for v := range fixed {
		held[v] = true
	}
	for range 20 {
		heldSum, free := 0.0, 0.0
		for v, x := range next {
			if held[v] {
				heldSum += x
			} else {
				free += x
			}
		}
		if free <= 0 || heldSum >= 1 {
			return
		}
		over := false
		for v, x := range next {
			if held[v] {
				continue
			}
			next[v] = x * (1 - heldSum) / free
			if next[v] > maxFactor*t[v] {
				next[v], held[v], capped[dim+"="+v], over = maxFactor*t[v], true, true, true
			}
		}
		if !over {
			return
		}
	}
}

// ExpectedKept is, per dimension, each value's share among the dialogues
// of the plan the model expects to be kept.
func ExpectedKept(pl *profiles.Plan, m *Model) map[string]map[string]float64 {
	out := map[string]map[string]float64{}
	total := 0.0
	for _, c := range pl.Cells {
		k := float64(c.Count) * m.KeepRate(c.Values)
		total += k
		for dim, v := range c.Values {
			if out[dim] == nil {
				out[dim] = map[string]float64{}
			}
			out[dim][v] += k
		}
	}
	if total > 0 {
		for _, shares := range out {
			for v := range shares {
				shares[v] /= total
			}
		}
	}
	return out
}

// expectedKeptCount is how many of the plan's dialogues the model expects
// to be kept.
func expectedKeptCount(pl *profiles.Plan, m *Model) float64 {
	k := 0.0
	for _, c := range pl.Cells {
		k += float64(c.Count) * m.KeepRate(c.Values)
	}
	return k
}

// expectedCost is what the plan is expected to cost.
func expectedCost(pl *profiles.Plan, c costModel) float64 {
	x := 0.0
	for _, cell := range pl.Cells {
		x += float64(cell.Count) * c.dialogue(cell.Values)
	}
	return x
}

// TunedPlan plans n dialogues on the weighting and marks the plan as
// tuned for profile p (its name, hash and targets; the fit's targets
// and moves).
func TunedPlan(p *profiles.Profile, fit *profiles.Fit, w *Weighting, m *Model, n int, seed int64, round int, maxFactor float64) (*profiles.Plan, error) {
	pl, err := analyst.MakePlan(w.Profile, analyst.PlanConfig{N: n, Seed: seed})
	if err != nil {
		return nil, fmt.Errorf("tuned plan of %d dialogues: %w", n, err)
	}
	pl.Profile, pl.ProfileHash, pl.Fit = p.Name, p.Hash(), fit
	for _, dim := range vocab.Dimensions() {
		pl.Targets[dim] = p.Target(dim)
	}
	pl.Tuning = &profiles.Tuning{Round: round, MaxFactor: maxFactor, ExpectedKept: ExpectedKept(pl, m)}
	if err := pl.Check(p); err != nil {
		return nil, err
	}
	return pl, nil
}

// BestPlan is the tuned plan of n dialogues, unless the plan of the
// fitted (untuned) weights is expected to keep dialogues closer to the
// target at that size: a few dialogues cannot round to the reweighted
// shares, and oversampling then only moves the kept set further away. That
// plan is then the one written, with Tuning.Untuned set, so run --plan
// never does worse than run by the model's own measure.
func BestPlan(p, fitted *profiles.Profile, fit *profiles.Fit, w *Weighting, m *Model, n int, seed int64, round int, maxFactor float64) (*profiles.Plan, error) {
	tuned, err := TunedPlan(p, fit, w, m, n, seed, round, maxFactor)
	if err != nil {
		return nil, err
	}
	plain, err := TunedPlan(p, fit, &Weighting{Profile: fitted}, m, n, seed, round, maxFactor)
	if err != nil {
		return nil, err
	}
	target := func(dim string) map[string]float64 {
		if fit != nil {
			return fit.Targets[dim]
		}
		return p.Target(dim)
	}
	if worstJSD(plain, m, target) < worstJSD(tuned, m, target) {
		plain.Tuning.Untuned = true
		return plain, nil
	}
	return tuned, nil
}

// worstJSD is the largest JSD, over the dimensions, of the kept shares the
// model expects of pl from target.
func worstJSD(pl *profiles.Plan, m *Model, target func(string) map[string]float64) float64 {
	kept := ExpectedKept(pl, m)
	worst := 0.0
	for _, dim := range vocab.Dimensions() {
		worst = max(worst, jsd(target(dim), kept[dim]))
	}
	return worst
}

// cloneWeights deep-copies a profile's weights and constraints.
func cloneWeights(p *profiles.Profile) *profiles.Profile {
	q := *p
	q.Dimensions = map[string][]profiles.Weight{}
	for dim, ws := range p.Dimensions {
		q.Dimensions[dim] = append([]profiles.Weight(nil), ws...)
	}
	q.Constraints = append([]profiles.Constraint(nil), p.Constraints...)
	return &q
}
