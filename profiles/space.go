package profiles

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"dialogfarm/dialog"
	"dialogfarm/dialog/vocab"
)

// MaxCells bounds the number of valid combinations of the constrained
// dimensions a profile may have; beyond it Compile fails.
const MaxCells = 1 << 20

// Space is a profile compiled to indices: for each dimension (canonical
// order) the values with a positive weight and their target shares, and the
// constraints as masks over those values. vocab.Dimensions no constraint mentions
// are free: any of their values combines with anything.
type Space struct {
	Dims   []string
	Values [][]string
	Probs  [][]float64
	// Constrained lists the indices of the dimensions some constraint
	// mentions, in canonical order.
	Constrained []int
	rules       []rule
}

type dimMask struct {
	dim int
	ok  []bool // by value index in Values[dim]
}

type rule struct {
	src                    Constraint
	when, require, exclude []dimMask
}

// Compile builds the profile's Space.
func Compile(p *Profile) *Space {
	s := &Space{Dims: vocab.Dimensions()}
	for _, dim := range s.Dims {
		target := p.Target(dim)
		var vals []string
		var probs []float64
		for _, w := range p.Dimensions[dim] {
			if w.Weight > 0 {
				vals = append(vals, w.Value)
				probs = append(probs, target[w.Value])
			}
		}
		s.Values = append(s.Values, vals)
		s.Probs = append(s.Probs, probs)
	}
	used := make([]bool, len(s.Dims))
	masks := func(m map[string][]string) []dimMask {
		var out []dimMask
		for _, dim := range s.Dims { // canonical order keeps compiled rules deterministic
			vals, ok := m[dim]
			if !ok {
				continue
			}
			d := slices.Index(s.Dims, dim)
			used[d] = true
			mk := dimMask{dim: d, ok: make([]bool, len(s.Values[d]))}
			for i, v := range s.Values[d] {
				mk.ok[i] = slices.Contains(vals, v)
			}
			out = append(out, mk)
		}
		return out
	}
	for _, c := range p.All() {
		s.rules = append(s.rules, rule{src: c, when: masks(c.When), require: masks(c.Require), exclude: masks(c.Exclude)})
	}
	for d, u := range used {
		if u {
			s.Constrained = append(s.Constrained, d)
		}
	}
	return s
}

// Valid reports whether combo (a value index per dimension, -1 when not yet
// chosen) violates no constraint whose condition is already decided.
func (s *Space) Valid(combo []int) bool {
	return s.violated(combo) < 0
}

// violated returns the index of the first rule combo breaks, or -1.
func (s *Space) violated(combo []int) int {
rules:
	for i, r := range s.rules {
		for _, m := range r.when {
			if combo[m.dim] < 0 || !m.ok[combo[m.dim]] {
				continue rules
			}
		}
		for _, m := range r.require {
			if combo[m.dim] >= 0 && !m.ok[combo[m.dim]] {
				return i
			}
		}
		for _, m := range r.exclude {
			if combo[m.dim] >= 0 && m.ok[combo[m.dim]] {
				return i
			}
		}
	}
	return -1
}

// Violations counts the rules a full combination breaks.
func (s *Space) Violations(combo []int) int {
	n := 0
	for i := range s.rules {
		if !s.ruleAllows(i, combo) {
			n++
		}
	}
	return n
}

func (s *Space) ruleAllows(i int, combo []int) bool {
	r := s.rules[i]
	for _, m := range r.when {
		if combo[m.dim] < 0 || !m.ok[combo[m.dim]] {
			return true
		}
	}
	for _, m := range r.require {
		if combo[m.dim] >= 0 && !m.ok[combo[m.dim]] {
			return false
		}
	}
	for _, m := range r.exclude {
		if combo[m.dim] >= 0 && m.ok[combo[m.dim]] {
			return false
		}
	}
	return true
}

// Cells enumerates the valid combinations of the constrained dimensions.
// Each cell is a full-length index slice with -1 for free dimensions.
func (s *Space) Cells() ([][]int, error) {
	var out [][]int
	combo := make([]int, len(s.Dims))
	for i := range combo {
		combo[i] = -1
	}
	var walk func(k int) error
	walk = func(k int) error {
		if k == len(s.Constrained) {
			if len(out) >= MaxCells {
				return fmt.Errorf("more than %d valid combinations of the constrained dimensions", MaxCells)
			}
			out = append(out, slices.Clone(combo))
			return nil
		}
		d := s.Constrained[k]
		for v := range s.Values[d] {
			combo[d] = v
			if s.Valid(combo) {
				if err := walk(k + 1); err != nil {
					return err
				}
			}
		}
		combo[d] = -1
		return nil
	}
	err := walk(0)
	return out, err
}

// Shortfall is where a fitted joint distribution misses the targets most.
type Shortfall struct {
	Dim      string
	Value    string
	Target   float64
	Achieved float64
}

// Joint fits a distribution over cells whose marginals match the target
// shares as closely as the constraints allow, by iterative proportional
// fitting from the independent product. It returns one probability per
// cell and the largest marginal gap left.
func (s *Space) Joint(cells [][]int) ([]float64, Shortfall) {
	p := make([]float64, len(cells))
	for i, c := range cells {
		p[i] = 1
		for _, d := range s.Constrained {
			p[i] *= s.Probs[d][c[d]]
		}
	}
	var worst Shortfall
	for iter := 0; iter < 500; iter++ {
		worst = Shortfall{}
		gap := 0.0
		for _, d := range s.Constrained {
			m := s.marginal(cells, p, d)
			for v, got := range m {
				if g := math.Abs(got - s.Probs[d][v]); g > gap {
					gap = g
					worst = Shortfall{Dim: s.Dims[d], Value: s.Values[d][v], Target: s.Probs[d][v], Achieved: got}
				}
			}
			for i, c := range cells {
				if m[c[d]] > 0 {
					p[i] *= s.Probs[d][c[d]] / m[c[d]]
				}
			}
		}
		if gap < 1e-7 {
			break
		}
	}
	return p, worst
}

func (s *Space) marginal(cells [][]int, p []float64, d int) []float64 {
	m := make([]float64, len(s.Values[d]))
	total := 0.0
	for i, c := range cells {
		m[c[d]] += p[i]
		total += p[i]
	}
	if total > 0 {
		for v := range m {
			m[v] /= total
		}
	}
	return m
}

// check runs the cross-field checks Parse and Validate share.
func check(p *Profile) []*dialog.FieldError {
	var errs []*dialog.FieldError
	add := func(line int, field, format string, args ...any) {
		errs = append(errs, &dialog.FieldError{File: p.source(), Line: line, Field: field, PathOnly: true, Msg: fmt.Sprintf(format, args...)})
	}
	for _, dim := range vocab.Dimensions() {
		ws, ok := p.Dimensions[dim]
		if !ok {
			add(0, "dimensions."+dim, "missing (every profile lists all ten dimensions)")
		} else if !slices.ContainsFunc(ws, func(w Weight) bool { return w.Weight > 0 }) {
			add(0, "dimensions."+dim, "all weights are zero; at least one value needs a positive weight")
		}
	}
	if len(errs) > 0 {
		return errs
	}
	s := Compile(p)
	cells, err := s.Cells()
	if err != nil {
		return []*dialog.FieldError{{File: p.source(), Field: "constraints", PathOnly: true, Msg: err.Error()}}
	}
	if len(cells) == 0 {
		line, culprits := 0, blame(p)
		if len(culprits) > 0 {
			line = culprits[0].Line
		}
		add(line, "constraints", "the constraints leave no valid combination of positive-weight values%s", describe(culprits))
		return errs
	}
	for _, d := range s.Constrained {
		seen := make([]bool, len(s.Values[d]))
		for _, c := range cells {
			seen[c[d]] = true
		}
		for v, ok := range seen {
			if !ok {
				dim, val := s.Dims[d], s.Values[d][v]
				add(lineOf(p, dim, val), "dimensions."+dim+"."+val,
					"has a positive weight but the constraints allow no combination with it")
			}
		}
	}
	if len(errs) > 0 {
		return errs
	}
	if _, worst := s.Joint(cells); math.Abs(worst.Target-worst.Achieved) > 0.01 {
		add(lineOf(p, worst.Dim, worst.Value), "dimensions."+worst.Dim+"."+worst.Value,
			"weight share %.3f cannot be met under the constraints (closest reachable ≈ %.3f); adjust the weights of the dimensions the constraints link",
			worst.Target, worst.Achieved)
	}
	return errs
}

// blame returns the profile constraints without which a valid combination
// exists, one at a time.
func blame(p *Profile) []Constraint {
	var out []Constraint
	for i := range p.Constraints {
		q := *p
		q.Constraints = slices.Delete(slices.Clone(p.Constraints), i, i+1)
		if cells, err := Compile(&q).Cells(); err == nil && len(cells) > 0 {
			out = append(out, p.Constraints[i])
		}
	}
	return out
}

func describe(cs []Constraint) string {
	if len(cs) == 0 {
		return " (the weights alone conflict with the built-in structural constraints)"
	}
	var parts []string
	for _, c := range cs {
		if c.Line > 0 {
			parts = append(parts, fmt.Sprintf("line %d", c.Line))
		} else {
			parts = append(parts, c.String())
		}
	}
	return " (they conflict with each other: constraints at " + strings.Join(parts, ", ") + ")"
}

func lineOf(p *Profile, dim, value string) int {
	for _, w := range p.Dimensions[dim] {
		if w.Value == value {
			return w.Line
		}
	}
	return 0
}
