package analyst

import (
	"encoding/json"
	"errors"
	"math"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"dialogfarm/dialog/vocab"
	"dialogfarm/profiles"
)

func loadProfile(tb testing.TB, name string) *profiles.Profile {
	tb.Helper()
	p, err := profiles.Load(name)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

func TestLargestRemainder(t *testing.T) {
	tests := map[string]struct {
		shares []float64
		n      int
		want   []int
	}{
		"exact":               {[]float64{0.5, 0.25, 0.25}, 8, []int{4, 2, 2}},
		"remainders":          {[]float64{0.5, 0.3, 0.2}, 7, []int{4, 2, 1}},   // 3.5 2.1 1.4 → 3 2 1 + 1 to .5
		"tie to first":        {[]float64{0.25, 0.25, 0.5}, 2, []int{1, 0, 1}}, // .5 .5 1 → 0 0 1, +1: tie .5/.5 → first listed
		"thirds":              {[]float64{1.0 / 3, 1.0 / 3, 1.0 / 3}, 10, []int{4, 3, 3}},
		"zero share":          {[]float64{0, 1}, 5, []int{0, 5}},
		"small n":             {[]float64{0.7, 0.2, 0.1}, 1, []int{1, 0, 0}},
		"tie broken by share": {[]float64{0.1, 0.3, 0.6}, 5, []int{0, 2, 3}}, // .5 1.5 3 → 0 1 3, rem .5 .5 → larger share
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got := LargestRemainder(tt.shares, tt.n)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestPlanQuotas(t *testing.T) {
	sizes := map[string][]int{"default": {1, 2, 3, 5, 7, 100, 1000, 2500}, "testdata/linked.yaml": {1, 2, 7, 100, 1000}}
	for _, name := range []string{"default", "testdata/linked.yaml"} {
		p := loadProfile(t, name)
		for _, n := range sizes[name] {
			t.Run(filepath.Base(name)+"/"+itoa(n), func(t *testing.T) {
				pl, err := MakePlan(p, PlanConfig{N: n, Seed: 3})
				if err != nil {
					t.Fatal(err)
				}
				if err := pl.Check(p); err != nil {
					t.Fatal(err)
				}
				// Independent recount: sums, marginals within one unit, constraints.
				sum := 0
				marg := map[string]map[string]int{}
				for _, c := range pl.Cells {
					sum += c.Count
					if !p.Allows(c.Values) {
						t.Errorf("cell %s breaks a constraint", c.Key)
					}
					for d, v := range c.Values {
						if marg[d] == nil {
							marg[d] = map[string]int{}
						}
						marg[d][v] += c.Count
					}
				}
				if sum != n {
					t.Errorf("cells sum to %d, want %d", sum, n)
				}
				for _, dim := range vocab.Dimensions() {
					for v, share := range p.Target(dim) {
						if d := math.Abs(float64(marg[dim][v]) - share*float64(n)); d >= 1 {
							t.Errorf("%s=%s: %d dialogues, exact share %.3f", dim, v, marg[dim][v], share*float64(n))
						}
					}
				}
			})
		}
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestPlanDeterministic(t *testing.T) {
	p := loadProfile(t, "default")
	a, err := MakePlan(p, PlanConfig{N: 500, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := MakePlan(p, PlanConfig{N: 500, Seed: 9})
	c, _ := MakePlan(p, PlanConfig{N: 500, Seed: 10})
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	jc, _ := json.Marshal(c)
	if string(ja) != string(jb) {
		t.Error("same seed gave different plans")
	}
	if string(ja) == string(jc) {
		t.Error("different seeds gave the same plan")
	}
	if a.ID == c.ID {
		t.Error("plan IDs should differ by seed")
	}
	path := filepath.Join(t.TempDir(), "plan.json")
	if err := profiles.WritePlan(path, a); err != nil {
		t.Fatal(err)
	}
	back, err := profiles.ReadPlan(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(a, back); diff != "" {
		t.Errorf("plan changed on write/read (-want +got):\n%s", diff)
	}
}

func TestPlanUnsatisfiable(t *testing.T) {
	p := loadProfile(t, "testdata/linked.yaml")
	// Built in code, bypassing validation: commands (never from the panel) get
	// 60% but only 10% of triggers leave the panel.
	p.Dimensions[vocab.DimInstruction] = []profiles.Weight{{Value: "free_text", Weight: 0.4}, {Value: "command", Weight: 0.6}}
	p.Dimensions[vocab.DimTrigger] = []profiles.Weight{{Value: "panel", Weight: 0.9}, {Value: "palette", Weight: 0.1}}
	_, err := MakePlan(p, PlanConfig{N: 30, Seed: 1})
	if !errors.Is(err, ErrUnsatisfiable) {
		t.Fatalf("err = %v, want ErrUnsatisfiable", err)
	}
}
