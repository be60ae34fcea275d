package analyst

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"dialogfarm/profiles"
)

// PlanConfig configures MakePlan.
type PlanConfig struct {
	// N is the number of dialogues to plan.
	N int
	// Seed drives every random choice; the same profile, N and seed give
	// the same plan byte for byte.
	Seed int64
}

// DefaultPlanConfig plans 100 dialogues with seed 42 (the built-in
// profile's seed).
func DefaultPlanConfig() PlanConfig { return PlanConfig{N: 100, Seed: 42} }

// ErrUnsatisfiable is returned when the quotas cannot all be met by
// combinations that satisfy the constraints.
var ErrUnsatisfiable = errors.New("quotas cannot be met under the constraints")

// MakePlan allocates cfg.N dialogues over the profile's cells.
//
// Each dimension gets integer quotas by largest-remainder rounding of N
// times its normalised weights (ties go to the larger weight, then to the
// value listed first), so every value's quota is within one unit of its
// exact share and the quotas sum to N. The dimensions the constraints link
// are filled row by row, drawing each combination from the
// iterative-proportional-fitting joint of the profile, reweighted by how
// much of each value's quota is left (by rejection from the joint, with a
// full scan as fallback); rows the draw could not make valid are repaired
// by swapping one or two dimension values with other rows, which keeps
// every quota; if swaps cannot help (small N), a unit moves from a value
// whose quota was rounded up to one whose quota was rounded down, which
// keeps every quota within one unit of exact. Dimensions no constraint
// mentions are then dealt independently: each value's quota drawn without
// replacement over all rows. Rows are only ever counted per combination,
// so memory grows with the number of cells, not with N.
func MakePlan(p *profiles.Profile, cfg PlanConfig) (*profiles.Plan, error) {
	if cfg.N <= 0 {
		return nil, fmt.Errorf("plan: n must be positive, got %d", cfg.N)
	}
	s := profiles.Compile(p)
	cells, err := s.Cells()
	if err != nil {
		return nil, fmt.Errorf("plan for %s: %w", p.Source, err)
	}
	if len(cells) == 0 {
		return nil, fmt.Errorf("plan for %s: %w: no valid combination", p.Source, ErrUnsatisfiable)
	}
	joint, _ := s.Joint(cells)
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), 0x706c616e))

	quotas := make([][]int, len(s.Dims))
	for d := range s.Dims {
		quotas[d] = LargestRemainder(s.Probs[d], cfg.N)
	}
	// The plan is held as combinations with counts, never as one row per
	// dialogue: memory grows with the number of cells, not with N.
	groups := newCombos()
	bad := fillConstrained(s, cells, joint, quotas, cfg.N, groups, rng)
	if n := repair(s, groups, bad, cfg.N, rng); n > 0 {
		return nil, fmt.Errorf("plan for %s with n=%d: %w: %d rows still break a constraint; change the weights of the linked dimensions",
			p.Source, cfg.N, ErrUnsatisfiable, n)
	}
	for d := range s.Dims {
		if !slices.Contains(s.Constrained, d) {
			groups = splitDim(groups, d, quotas[d], cfg.N, rng)
		}
	}
	return assemble(p, s, cfg, groups), nil
}

// LargestRemainder splits n into integers proportional to shares (which
// sum to one): floors first, then one more unit to the largest remainders,
// ties to the larger share, then the lower index.
func LargestRemainder(shares []float64, n int) []int {
	out := make([]int, len(shares))
	left := n
	order := make([]int, len(shares))
	for i, sh := range shares {
		exact := sh * float64(n)
		out[i] = int(math.Floor(exact + 1e-9))
		left -= out[i]
		order[i] = i
	}
	rem := func(i int) float64 { return shares[i]*float64(n) - float64(out[i]) }
	slices.SortStableFunc(order, func(a, b int) int {
		if ra, rb := rem(a), rem(b); math.Abs(ra-rb) > 1e-12 {
			return cmp.Compare(rb, ra)
		}
		return cmp.Compare(shares[b], shares[a])
	})
	for k := 0; left > 0 && k < len(order); k++ {
		out[order[k]]++
		left--
	}
	return out
}

// fillConstrained draws the linked dimensions' values of n rows, adding
// each valid row to groups; it returns the rows it could not make valid
// (dead ends), for repair.
func fillConstrained(s *profiles.Space, cells [][]int, joint []float64, quotas [][]int, n int, groups *combos, rng *rand.Rand) [][]int {
	left := make([][]int, len(quotas))
	factor := make([][]float64, len(s.Dims))
	for d := range quotas {
		left[d] = slices.Clone(quotas[d])
		factor[d] = make([]float64, len(quotas[d]))
	}
	proposal := newAlias(joint)
	weights := make([]float64, len(cells))
	row := make([]int, len(s.Dims))
	var bad [][]int
	for i := range n {
		// A cell's weight is its joint probability times, per linked
		// dimension, the quota left for its value over the quota expected
		// left: over-used values fade, exhausted ones drop out.
		remaining := float64(n - i)
		bound := 1.0
		for _, d := range s.Constrained {
			fmax := 0.0
			for v, l := range left[d] {
				factor[d][v] = float64(l) / (remaining * s.Probs[d][v])
				fmax = max(fmax, factor[d][v])
			}
			bound *= fmax
		}
		pick := -1
		// Rejection sampling from the joint is exact for the reweighted
		// distribution and cheap while quotas are balanced; a full scan
		// takes over when it keeps rejecting (late rows, tight quotas).
		for try := 0; try < 32 && bound > 0; try++ {
			c := proposal.draw(rng)
			w := 1.0
			for _, d := range s.Constrained {
				w *= factor[d][cells[c][d]]
			}
			if rng.Float64()*bound < w {
				pick = c
				break
			}
		}
		if pick < 0 {
			pick = scan(s, cells, joint, factor, weights, rng)
		}
		for d := range row {
			row[d] = -1
		}
		if pick >= 0 {
			for _, d := range s.Constrained {
				row[d] = cells[pick][d]
			}
		} else {
			// Dead end: take the value with most quota left in each linked
			// dimension; repair makes the row valid.
			for _, d := range s.Constrained {
				row[d] = argmax(left[d])
			}
		}
		for _, d := range s.Constrained {
			left[d][row[d]]--
		}
		if s.Violations(row) == 0 {
			groups.add(row, 1)
		} else {
			bad = append(bad, slices.Clone(row))
		}
	}
	return bad
}

// scan draws a cell in proportion to its full weight, or -1 if every
// weight is zero.
func scan(s *profiles.Space, cells [][]int, joint []float64, factor [][]float64, weights []float64, rng *rand.Rand) int {
	total := 0.0
	for c, cell := range cells {
		w := joint[c]
		for _, d := range s.Constrained {
			w *= factor[d][cell[d]]
		}
		weights[c] = w
		total += w
	}
	if total <= 0 {
		return -1
	}
	x := rng.Float64() * total
	for c, w := range weights {
		if x < w {
			return c
		}
		x -= w
	}
	for c := len(weights) - 1; c >= 0; c-- {
		if weights[c] > 0 {
			return c
		}
	}
	return -1
}

// alias is Vose's alias table: O(1) draws from a discrete distribution.
type alias struct {
	prob  []float64
	alias []int
}

func newAlias(p []float64) *alias {
	n := len(p)
	a := &alias{prob: make([]float64, n), alias: make([]int, n)}
	total := 0.0
	for _, x := range p {
		total += x
	}
	scaled := make([]float64, n)
	var small, large []int
	for i, x := range p {
		scaled[i] = x / total * float64(n)
		if scaled[i] < 1 {
			small = append(small, i)
		} else {
			large = append(large, i)
		}
	}
	for len(small) > 0 && len(large) > 0 {
		l, g := small[len(small)-1], large[len(large)-1]
		small = small[:len(small)-1]
		a.prob[l], a.alias[l] = scaled[l], g
		scaled[g] -= 1 - scaled[l]
		if scaled[g] < 1 {
			large = large[:len(large)-1]
			small = append(small, g)
		}
	}
	for _, i := range append(small, large...) {
		a.prob[i], a.alias[i] = 1, i
	}
	return a
}

func (a *alias) draw(rng *rand.Rand) int {
	i := rng.IntN(len(a.prob))
	if rng.Float64() < a.prob[i] {
		return i
	}
	return a.alias[i]
}

func argmax(xs []int) int {
	best := 0
	for i, x := range xs {
		if x > xs[best] {
			best = i
		}
	}
	return best
}
