package analyst

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
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
// exact share and the quotas sum to N. Dimensions no constraint mentions are
// then filled independently by shuffling their quota lists. The
// dimensions the constraints link are filled row by row, drawing each
// combination from the iterative-proportional-fitting joint of the profile,
// reweighted by how much of each value's quota is left (by rejection from
// the joint, with a full scan as fallback); rows the draw could
// not make valid are repaired by swapping one or two dimension values with
// other rows, which keeps every quota; if swaps cannot help (small N), a
// unit moves from a value whose quota was rounded up to one whose quota was
// rounded down, which keeps every quota within one unit of exact.
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
	rows := make([][]int, cfg.N)
	for i := range rows {
		rows[i] = make([]int, len(s.Dims))
		for d := range rows[i] {
			rows[i][d] = -1
		}
	}
	fillConstrained(s, cells, joint, quotas, rows, rng)
	if bad := repair(s, rows, rng); bad > 0 {
		return nil, fmt.Errorf("plan for %s with n=%d: %w: %d rows still break a constraint; change the weights of the linked dimensions",
			p.Source, cfg.N, ErrUnsatisfiable, bad)
	}
	for d := range s.Dims {
		if slices.Contains(s.Constrained, d) {
			continue
		}
		var vals []int
		for v, q := range quotas[d] {
			for range q {
				vals = append(vals, v)
			}
		}
		rng.Shuffle(len(vals), func(i, j int) { vals[i], vals[j] = vals[j], vals[i] })
		for i := range rows {
			rows[i][d] = vals[i]
		}
	}
	return assemble(p, s, cfg, rows), nil
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

func fillConstrained(s *profiles.Space, cells [][]int, joint []float64, quotas [][]int, rows [][]int, rng *rand.Rand) {
	left := make([][]int, len(quotas))
	factor := make([][]float64, len(s.Dims))
	for d := range quotas {
		left[d] = slices.Clone(quotas[d])
		factor[d] = make([]float64, len(quotas[d]))
	}
	proposal := newAlias(joint)
	weights := make([]float64, len(cells))
	for i := range rows {
		// A cell's weight is its joint probability times, per linked
		// dimension, the quota left for its value over the quota expected
		// left: over-used values fade, exhausted ones drop out.
		remaining := float64(len(rows) - i)
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
		if pick >= 0 {
			for _, d := range s.Constrained {
				rows[i][d] = cells[pick][d]
			}
		} else {
			// Dead end: take the value with most quota left in each linked
			// dimension; repair makes the row valid.
			for _, d := range s.Constrained {
				rows[i][d] = argmax(left[d])
			}
		}
		for _, d := range s.Constrained {
			left[d][rows[i][d]]--
		}
	}
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

// repair swaps linked-dimension values between rows until every row is
// valid or no swap helps; it returns the number of rows still invalid.
func repair(s *profiles.Space, rows [][]int, rng *rand.Rand) int {
	n := len(rows)
	var pairs [][2]int
	for a := range s.Constrained {
		for b := a + 1; b < len(s.Constrained); b++ {
			pairs = append(pairs, [2]int{s.Constrained[a], s.Constrained[b]})
		}
	}
	counts := make([][]int, len(s.Dims))
	for _, d := range s.Constrained {
		counts[d] = make([]int, len(s.Values[d]))
		for _, r := range rows {
			counts[d][r[d]]++
		}
	}
	for pass := 0; pass < 20; pass++ {
		bad, fixed := 0, 0
		for i := range rows {
			if s.Violations(rows[i]) == 0 {
				continue
			}
			bad++
			if trySwaps(s, rows, i, rng.IntN(n), singleDims(s), pairs) || requota(s, rows, i, counts) {
				fixed++
			}
		}
		if bad == 0 {
			return 0
		}
		if fixed == 0 {
			return bad
		}
	}
	bad := 0
	for i := range rows {
		if s.Violations(rows[i]) > 0 {
			bad++
		}
	}
	return bad
}

// requota moves one unit of a linked dimension in row i from a value whose
// quota was rounded up to one whose quota was rounded down, if that lowers
// the row's violations: both quotas stay within one unit of exact. Small N
// needs it (with N=1 the rounded-up values alone may not combine).
func requota(s *profiles.Space, rows [][]int, i int, counts [][]int) bool {
	n := float64(len(rows))
	const eps = 1e-9
	before := s.Violations(rows[i])
	for _, d := range s.Constrained {
		v := rows[i][d]
		if float64(counts[d][v]) <= n*s.Probs[d][v]+eps {
			continue // v was not rounded up
		}
		for u := range s.Values[d] {
			if u == v || float64(counts[d][u]) >= n*s.Probs[d][u]-eps {
				continue // u was not rounded down
			}
			rows[i][d] = u
			if s.Violations(rows[i]) < before {
				counts[d][v]--
				counts[d][u]++
				return true
			}
			rows[i][d] = v
		}
	}
	return false
}

func singleDims(s *profiles.Space) [][2]int {
	out := make([][2]int, len(s.Constrained))
	for k, d := range s.Constrained {
		out[k] = [2]int{d, -1}
	}
	return out
}

// trySwaps looks for a row j and one or two dimensions whose values,
// swapped between rows i and j, lower the pair's violations.
func trySwaps(s *profiles.Space, rows [][]int, i, start int, singles, pairs [][2]int) bool {
	n := len(rows)
	swap := func(j int, dd [2]int) {
		for _, d := range dd {
			if d >= 0 {
				rows[i][d], rows[j][d] = rows[j][d], rows[i][d]
			}
		}
	}
	for _, group := range [][][2]int{singles, pairs} {
		for _, dd := range group {
			for k := range n {
				j := (start + k) % n
				if j == i {
					continue
				}
				before := s.Violations(rows[i]) + s.Violations(rows[j])
				swap(j, dd)
				if s.Violations(rows[i])+s.Violations(rows[j]) < before {
					return true
				}
				swap(j, dd)
			}
		}
	}
	return false
}

func assemble(p *profiles.Profile, s *profiles.Space, cfg PlanConfig, rows [][]int) *profiles.Plan {
	h := sha256.Sum256(fmt.Appendf(nil, "%s|%d|%d", p.Hash(), cfg.N, cfg.Seed))
	pl := &profiles.Plan{
		Version: profiles.PlanVersion, ID: "p" + hex.EncodeToString(h[:4]),
		Profile: p.Name, ProfileHash: p.Hash(), Seed: cfg.Seed, N: cfg.N,
		Dimensions: s.Dims, Targets: map[string]map[string]float64{}, Quotas: map[string]map[string]int{},
	}
	for d, dim := range s.Dims {
		pl.Targets[dim] = p.Target(dim)
		pl.Quotas[dim] = map[string]int{}
		for _, w := range p.Dimensions[dim] {
			pl.Quotas[dim][w.Value] = 0
		}
		for _, r := range rows {
			pl.Quotas[dim][s.Values[d][r[d]]]++
		}
	}
	slices.SortFunc(rows, func(a, b []int) int { return slices.Compare(a, b) })
	for i, r := range rows {
		if i > 0 && slices.Equal(r, rows[i-1]) {
			pl.Cells[len(pl.Cells)-1].Count++
			continue
		}
		vals := make(map[string]string, len(s.Dims))
		for d, dim := range s.Dims {
			vals[dim] = s.Values[d][r[d]]
		}
		pl.Cells = append(pl.Cells, profiles.Cell{Key: profiles.CellKey(vals), Values: vals, Count: 1})
	}
	return pl
}
