package analyst

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"slices"

	"dialogfarm/profiles"
)

// combos is a multiset of combinations (a value index per dimension, -1
// where not chosen yet): the plan's rows grouped by combination, in the
// order each combination first appeared.
type combos struct {
	index map[string]int
	list  [][]int
	count []int
	key   []byte // scratch: add looks a combination up without allocating
}

func newCombos() *combos { return &combos{index: map[string]int{}} }

// add counts n more rows with combination c (copied).
func (g *combos) add(c []int, n int) {
	if n == 0 {
		return
	}
	g.key = g.key[:0]
	for _, v := range c {
		g.key = append(g.key, byte(v+1)) // dimensions have far fewer than 255 values
	}
	i, ok := g.index[string(g.key)]
	if !ok {
		i = len(g.list)
		g.index[string(g.key)] = i
		g.list = append(g.list, slices.Clone(c))
		g.count = append(g.count, 0)
	}
	g.count[i] += n
}

// repair changes the linked-dimension values of the rows fillConstrained
// left invalid until every row is valid or nothing helps, and adds the
// rows it made valid to groups; it returns the number still invalid. A
// bad row swaps one or two dimensions' values with a row of another
// combination when that lowers the pair's violations (every quota is
// kept), or, if no swap helps (small N), moves one unit of a quota that
// was rounded up to one rounded down (every quota stays within one unit
// of exact).
func repair(s *profiles.Space, groups *combos, bad [][]int, n int, rng *rand.Rand) int {
	if len(bad) == 0 {
		return 0
	}
	var pairs [][2]int
	singles := make([][2]int, len(s.Constrained))
	for a, d := range s.Constrained {
		singles[a] = [2]int{d, -1}
		for _, e := range s.Constrained[a+1:] {
			pairs = append(pairs, [2]int{d, e})
		}
	}
	counts := make([][]int, len(s.Dims))
	for _, d := range s.Constrained {
		counts[d] = make([]int, len(s.Values[d]))
		for i, c := range groups.list {
			counts[d][c[d]] += groups.count[i]
		}
		for _, r := range bad {
			counts[d][r[d]]++
		}
	}
	for pass := 0; pass < 20 && len(bad) > 0; pass++ {
		fixed := 0
		var still [][]int
		for k := 0; k < len(bad); k++ { // bad may grow: a swap partner can turn invalid
			r := bad[k]
			if s.Violations(r) > 0 {
				partner, ok := trySwaps(s, groups, r, rng, singles, pairs)
				if ok && partner != nil {
					bad = append(bad, partner)
				}
				if ok || requota(s, r, counts, n) {
					fixed++
				}
			}
			if s.Violations(r) == 0 {
				groups.add(r, 1)
			} else {
				still = append(still, r)
			}
		}
		bad = still
		if fixed == 0 {
			break
		}
	}
	return len(bad)
}

// trySwaps looks for a combination in groups and one or two dimensions
// whose values, swapped between row r and one row of that combination,
// lower the pair's violations; it makes the swap. partner is the changed
// row of the other combination when it is now invalid (it is then no
// longer in groups), nil when it is valid (it is back in groups).
func trySwaps(s *profiles.Space, groups *combos, r []int, rng *rand.Rand, singles, pairs [][2]int) (partner []int, ok bool) {
	m := len(groups.list)
	if m == 0 {
		return nil, false
	}
	start := rng.IntN(m)
	other := make([]int, len(r))
	for _, group := range [][][2]int{singles, pairs} {
		for _, dd := range group {
			for k := range m {
				j := (start + k) % m
				if groups.count[j] == 0 {
					continue
				}
				copy(other, groups.list[j])
				before := s.Violations(r) + s.Violations(other)
				swapDims(r, other, dd)
				if s.Violations(r)+s.Violations(other) < before {
					groups.count[j]--
					if s.Violations(other) == 0 {
						groups.add(other, 1)
						return nil, true
					}
					return slices.Clone(other), true
				}
				swapDims(r, other, dd)
			}
		}
	}
	return nil, false
}

func swapDims(a, b []int, dd [2]int) {
	for _, d := range dd {
		if d >= 0 {
			a[d], b[d] = b[d], a[d]
		}
	}
}

// requota moves one unit of a linked dimension in row r from a value whose
// quota was rounded up to one whose quota was rounded down, if that lowers
// the row's violations: both quotas stay within one unit of exact. Small N
// needs it (with N=1 the rounded-up values alone may not combine).
func requota(s *profiles.Space, r []int, counts [][]int, n int) bool {
	const eps = 1e-9
	before := s.Violations(r)
	for _, d := range s.Constrained {
		v := r[d]
		if float64(counts[d][v]) <= float64(n)*s.Probs[d][v]+eps {
			continue // v was not rounded up
		}
		for u := range s.Values[d] {
			if u == v || float64(counts[d][u]) >= float64(n)*s.Probs[d][u]-eps {
				continue // u was not rounded down
			}
			r[d] = u
			if s.Violations(r) < before {
				counts[d][v]--
				counts[d][u]++
				return true
			}
			r[d] = v
		}
	}
	return false
}

// splitDim gives dimension d its values: quota[v] rows get value v, drawn
// without replacement across all n rows (as a shuffled list of the quota's
// values dealt to the rows would), one group at a time. Memory is the
// number of combinations, whatever n is.
func splitDim(groups *combos, d int, quota []int, n int, rng *rand.Rand) *combos {
	left := slices.Clone(quota)
	remaining := n
	out := newCombos()
	got := make([]int, len(quota))
	for i, c := range groups.list {
		clear(got)
		for range groups.count[i] {
			x := rng.IntN(remaining)
			v := 0
			for ; x >= left[v]; v++ {
				x -= left[v]
			}
			left[v]--
			remaining--
			got[v]++
		}
		for v, k := range got {
			c[d] = v
			out.add(c, k)
		}
		c[d] = -1
	}
	return out
}

// assemble writes the plan: quotas counted from the groups, cells in
// canonical order.
func assemble(p *profiles.Profile, s *profiles.Space, cfg PlanConfig, groups *combos) *profiles.Plan {
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
		for i, c := range groups.list {
			pl.Quotas[dim][s.Values[d][c[d]]] += groups.count[i]
		}
	}
	order := make([]int, 0, len(groups.list))
	for i, k := range groups.count {
		if k > 0 {
			order = append(order, i)
		}
	}
	slices.SortFunc(order, func(a, b int) int { return slices.Compare(groups.list[a], groups.list[b]) })
	pl.Cells = make([]profiles.Cell, 0, len(order))
	for _, i := range order {
		vals := make(map[string]string, len(s.Dims))
		for d, dim := range s.Dims {
			vals[dim] = s.Values[d][groups.list[i][d]]
		}
		pl.Cells = append(pl.Cells, profiles.Cell{Key: profiles.CellKey(vals), Values: vals, Count: groups.count[i]})
	}
	return pl
}
