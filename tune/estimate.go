package tune

import (
	"maps"
	"math"
	"slices"

	"dialogfarm/dialog"
	"dialogfarm/dialog/vocab"
	"dialogfarm/profiles"
)

// Obs is one driven dialogue as the keep-rate model sees it: its cell
// (a value per dimension, from its config), whether the judge kept it (at
// least one turn at or above the minimum score, as the export counts),
// its turns, its cost and the rules that took points off its turns that
// were not kept.
type Obs struct {
	Values map[string]string
	Kept   bool
	Turns  int
	// KeptTurns counts its kept turns.
	KeptTurns int
	CostUSD   float64
	// Deductions counts, per rule name, the deductions in the shown
	// answers' verdicts of the turns not kept.
	Deductions map[string]int
}

// Observe turns recorded dialogues into observations; keptTurns is the
// export's rule (sft.KeptTurns). Dialogues that did not finish ok are
// left out: they say nothing about what the judge keeps.
func Observe(ds []dialog.Dialogue, keptTurns func(dialog.Dialogue) int) []Obs {
	var out []Obs
	for _, d := range ds {
		if d.Status != dialog.StatusOK {
			continue
		}
		o := Obs{Values: profiles.ConfigValues(d.Config), Turns: len(d.Turns), Deductions: map[string]int{}}
		o.KeptTurns = keptTurns(d)
		o.Kept = o.KeptTurns > 0
		for _, t := range d.Turns {
			for _, c := range t.Candidates {
				o.CostUSD += c.CostUSD
			}
		}
		if o.KeptTurns < len(d.Turns) {
			for _, t := range d.Turns {
				for _, ded := range shownDeductions(t) {
					o.Deductions[ded.Rule]++
				}
			}
		}
		out = append(out, o)
	}
	return out
}

// shownDeductions are the deductions of the verdict on the answer the
// plugin showed (the best-ranked verdict of that candidate).
func shownDeductions(t dialog.Turn) []dialog.Deduction {
	best := -1
	for i, v := range t.Verdicts {
		if v.Candidate < 0 || v.Candidate >= len(t.Candidates) || t.Candidates[v.Candidate].Text != t.Answer {
			continue
		}
		if best < 0 || v.Rank < t.Verdicts[best].Rank {
			best = i
		}
	}
	if best < 0 || t.Verdicts[best].Score >= 5 {
		return nil
	}
	return t.Verdicts[best].Deductions
}

// Model is the keep-rate model: the probability that a dialogue of a
// cell is kept,
//
//	logit P(kept | cell) = Bias + Σ_dim Effect[dim][value of the cell in dim]
//
// fitted by maximum a posteriori with a normal prior N(0, Sigma[dim]²) on
// the effects of each dimension's values (a random effect per dimension
// value: a value seen in few pilot dialogues stays near the overall keep
// rate, one seen in many moves to its own) and a flat-ish N(0, 2²) prior
// on Bias. It is the logistic-normal counterpart of shrinking each value's
// keep rate toward the pooled one with a Beta prior, fitted jointly, so a
// value that only looks bad because the pilot happened to pair it with a
// bad value of another dimension is not blamed twice.
//
// Sigma[dim], how much a dimension's values may differ, is estimated
// from the pilot (empirical Bayes: the scale that makes the values'
// kept-of-driven counts most likely; see spread). A dimension whose values do not differ more than chance gets
// a Sigma near 0, and its effects stay near 0: the tuned plan does not
// chase the pilot's noise.
type Model struct {
	Bias   float64                       `json:"bias"`
	Effect map[string]map[string]float64 `json:"effect"`
	Sigma  map[string]float64            `json:"sigma"`
}

// minSigma and maxSigma bound a dimension's prior scale.
const minSigma, maxSigma = 0.02, 3.0

// KeepRate is the model's keep rate of a cell (a value per dimension;
// values the pilot never saw add nothing).
func (m *Model) KeepRate(values map[string]string) float64 {
	z := m.Bias
	for dim, v := range values {
		z += m.Effect[dim][v]
	}
	return 1 / (1 + math.Exp(-z))
}

// ValueRate is the model's keep rate of a dialogue that has value v in
// dim and is average in every other dimension.
func (m *Model) ValueRate(dim, v string) float64 {
	return 1 / (1 + math.Exp(-(m.Bias + m.Effect[dim][v])))
}

// MarginalRate is the keep rate the model expects of dialogues that have
// value v in dim and, in every other dimension, the mix of the
// observations (the pilot's, which is the plan's).
func (m *Model) MarginalRate(obs []Obs, dim, v string) float64 {
	if len(obs) == 0 {
		return m.ValueRate(dim, v)
	}
	sum := 0.0
	for _, o := range obs {
		z := m.Bias + m.Effect[dim][v]
		for d, x := range o.Values {
			if d != dim {
				z += m.Effect[d][x]
			}
		}
		sum += 1 / (1 + math.Exp(-z))
	}
	return sum / float64(len(obs))
}

// FitModel fits the keep-rate model to the observations. sigma > 0 fixes
// every dimension's prior scale; 0 estimates each from the observations
// (see Model). It maximises the log posterior by preconditioned gradient
// ascent: each parameter's step is the inverse of a bound on its
// curvature, so the iteration cannot overshoot, and it stops when no
// parameter moves by more than 1e-9.
func FitModel(obs []Obs, sigma float64) *Model {
	m := &Model{Effect: map[string]map[string]float64{}, Sigma: map[string]float64{}}
	for _, dim := range vocab.Dimensions() {
		if sigma > 0 {
			m.Sigma[dim] = sigma
		} else {
			m.Sigma[dim] = spread(obs, dim)
		}
	}
	type param struct {
		dim, value string
		n          int
		prec       float64 // prior precision
	}
	index := map[string]int{}
	var params []param
	rows := make([][]int, len(obs))
	for i, o := range obs {
		for _, dim := range vocab.Dimensions() {
			v, ok := o.Values[dim]
			if !ok || v == "" {
				continue
			}
			key := dim + "\x00" + v
			j, ok := index[key]
			if !ok {
				j = len(params)
				index[key] = j
				params = append(params, param{dim: dim, value: v, prec: 1 / (m.Sigma[dim] * m.Sigma[dim])})
			}
			params[j].n++
			rows[i] = append(rows[i], j)
		}
	}
	if len(obs) == 0 {
		return m
	}
	w := make([]float64, len(params))
	grad := make([]float64, len(params))
	const biasVar = 4.0
	active := 1.0 // bias
	for _, r := range rows {
		active = max(active, float64(len(r)+1))
	}
	for iter := 0; iter < 20000; iter++ {
		clear(grad)
		gb := -m.Bias / biasVar
		for i, o := range obs {
			z := m.Bias
			for _, j := range rows[i] {
				z += w[j]
			}
			y := 0.0
			if o.Kept {
				y = 1
			}
			r := y - 1/(1+math.Exp(-z))
			gb += r
			for _, j := range rows[i] {
				grad[j] += r
			}
		}
		step := 1 / (0.25*active*float64(len(obs)) + 1/biasVar)
		m.Bias += step * gb
		moved := math.Abs(step * gb)
		for j, p := range params {
			g := grad[j] - w[j]*p.prec
			s := 1 / (0.25*active*float64(p.n) + p.prec)
			w[j] += s * g
			moved = max(moved, math.Abs(s*g))
		}
		if moved < 1e-9 {
			break
		}
	}
	for j, p := range params {
		if m.Effect[p.dim] == nil {
			m.Effect[p.dim] = map[string]float64{}
		}
		m.Effect[p.dim][p.value] = w[j]
	}
	return m
}

// spread estimates how much dim's values' keep rates differ: the prior
// scale τ that maximises the marginal likelihood of the values' counts
// (kept of dialogues) under the binomial–logit-normal model
// kept_v ~ Binomial(n_v, sigmoid(μ + u_v)), u_v ~ N(0, τ²), integrated
// over u_v by quadrature on a 61-point grid, maximised over a grid of τ
// (0 to maxSigma by 0.05) and μ (the pooled logit ± 2 by 0.1). It is
// exact for small counts, where a normal approximation of the logit
// fails (a value kept 0 times of 9 is strong evidence, not an infinite
// logit). The result is bounded to [minSigma, maxSigma].
func spread(obs []Obs, dim string) float64 {
	n, k := map[string]int{}, map[string]int{}
	total, kept := 0, 0
	for _, o := range obs {
		v := o.Values[dim]
		n[v]++
		total++
		if o.Kept {
			k[v]++
			kept++
		}
	}
	if len(n) < 2 {
		return minSigma
	}
	const nodes = 61
	var z, wz [nodes]float64
	wsum := 0.0
	for i := range nodes {
		z[i] = -4 + 8*float64(i)/float64(nodes-1)
		wz[i] = math.Exp(-z[i] * z[i] / 2)
		wsum += wz[i]
	}
	for i := range wz {
		wz[i] /= wsum
	}
	pooled := (float64(kept) + 0.5) / (float64(total) + 1)
	mu0 := math.Log(pooled / (1 - pooled))
	logLik := func(mu, tau float64) float64 {
		ll := 0.0
		for v, nv := range n {
			kv := k[v]
			like := 0.0
			for i := range nodes {
				p := 1 / (1 + math.Exp(-(mu + tau*z[i])))
				like += wz[i] * math.Exp(float64(kv)*math.Log(max(p, 1e-300))+float64(nv-kv)*math.Log(max(1-p, 1e-300)))
			}
			ll += math.Log(max(like, 1e-300))
		}
		return ll
	}
	best, bestTau := math.Inf(-1), 0.0
	for tau := 0.0; tau <= maxSigma+1e-9; tau += 0.05 {
		for mu := mu0 - 2; mu <= mu0+2+1e-9; mu += 0.1 {
			if ll := logLik(mu, tau); ll > best+1e-12 {
				best, bestTau = ll, tau
			}
		}
	}
	return math.Min(maxSigma, math.Max(minSigma, bestTau))
}

// ValueStats are the pilot's counts for one value of a dimension.
type ValueStats struct {
	Dim        string  `json:"dim"`
	Value      string  `json:"value"`
	Dialogues  int     `json:"dialogues"`
	Kept       int     `json:"kept"`
	Turns      int     `json:"turns"`
	KeptTurns  int     `json:"kept_turns"`
	CostUSD    float64 `json:"cost_usd"`
	RawRate    float64 `json:"raw_keep_rate"`
	ModelRate  float64 `json:"model_keep_rate"`
	TurnsPerDl float64 `json:"turns_per_dialogue"`
	// Deductions are the rules that took points off its turns that were
	// not kept, most frequent first.
	Deductions []RuleCount `json:"deductions,omitempty"`
}

// RuleCount is how often a judge rule deducted.
type RuleCount struct {
	Rule  string `json:"rule"`
	Count int    `json:"count"`
}

// valueStats counts the observations per dimension value, in the
// profile's value order.
func valueStats(obs []Obs, p *profiles.Profile, m *Model) []ValueStats {
	var out []ValueStats
	for _, dim := range vocab.Dimensions() {
		for _, w := range p.Dimensions[dim] {
			vs := ValueStats{Dim: dim, Value: w.Value}
			rules := map[string]int{}
			for _, o := range obs {
				if o.Values[dim] != w.Value {
					continue
				}
				vs.Dialogues++
				vs.Turns += o.Turns
				vs.KeptTurns += o.KeptTurns
				vs.CostUSD += o.CostUSD
				if o.Kept {
					vs.Kept++
				}
				for r, n := range o.Deductions {
					rules[r] += n
				}
			}
			if vs.Dialogues == 0 {
				continue
			}
			vs.RawRate = float64(vs.Kept) / float64(vs.Dialogues)
			vs.TurnsPerDl = float64(vs.Turns) / float64(vs.Dialogues)
			vs.ModelRate = m.MarginalRate(obs, dim, w.Value)
			vs.Deductions = topRules(rules)
			out = append(out, vs)
		}
	}
	return out
}

// topRules orders rule counts, most frequent first (ties by name).
func topRules(m map[string]int) []RuleCount {
	var out []RuleCount
	for _, r := range slices.Sorted(maps.Keys(m)) {
		out = append(out, RuleCount{r, m[r]})
	}
	slices.SortStableFunc(out, func(a, b RuleCount) int { return b.Count - a.Count })
	return out
}

// costModel is what a dialogue costs: the pilot's cost per turn times a
// cell's planned turns.
type costModel struct {
	PerTurn float64
}

func newCostModel(obs []Obs) costModel {
	turns, cost := 0, 0.0
	for _, o := range obs {
		turns += o.Turns
		cost += o.CostUSD
	}
	if turns == 0 {
		return costModel{}
	}
	return costModel{PerTurn: cost / float64(turns)}
}

// dialogue is the expected cost of one dialogue of the cell.
func (c costModel) dialogue(values map[string]string) float64 {
	return c.PerTurn * float64(plannedTurns(values))
}

func plannedTurns(values map[string]string) int {
	n := 0
	for _, ch := range values[vocab.DimTurns] {
		if ch < '0' || ch > '9' {
			return 1
		}
		n = n*10 + int(ch-'0')
	}
	return max(n, 1)
}
