package tasks

import (
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMakePlanDeterministicAndMerging: the plan does not depend on the
// order of the graph's tests; a group with nothing new joins the latest
// step it depends on; tests covering no core node are scaffold.
func TestMakePlanDeterministicAndMerging(t *testing.T) {
	g := &Graph{Language: LangGo, Tests: []Test{
		{ID: "t.A", Covers: []string{"a"}},
		{ID: "t.B", Covers: []string{"b"}},
		{ID: "t.AB", Covers: []string{"a", "b"}},       // nothing new: merged into b's step
		{ID: "t.ABC", Covers: []string{"a", "b", "c"}}, // c new, depends on a and b
		{ID: "t.A2", Covers: []string{"a"}},            // same group as t.A
		{ID: "t.None", Covers: []string{}},
	}}
	want := &Plan{Language: LangGo, Scaffold: []string{"t.None"}, Steps: []Step{
		{N: 1, Nodes: []string{"a"}, Tests: []string{"t.A", "t.A2"}},
		{N: 2, Nodes: []string{"b"}, Tests: []string{"t.AB", "t.B"}, Merged: []string{"t.AB"}},
		{N: 3, Nodes: []string{"c"}, Tests: []string{"t.ABC"}, DependsOn: []int{1, 2}},
	}}
	for i := 0; i < 20; i++ {
		rng := rand.New(rand.NewPCG(uint64(i), 1))
		rng.Shuffle(len(g.Tests), func(a, b int) { g.Tests[a], g.Tests[b] = g.Tests[b], g.Tests[a] })
		if d := cmp.Diff(want, MakePlan(g)); d != "" {
			t.Fatalf("shuffle %d: plan (-want +got):\n%s", i, d)
		}
	}
	p := MakePlan(g)
	if d := cmp.Diff([]string{"t.A", "t.A2", "t.None"}, p.PassToPass(2)); d != "" {
		t.Errorf("pass-to-pass of step 2 (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"b", "c"}, p.Stubbed(2)); d != "" {
		t.Errorf("stubbed in step 2's skeleton (-want +got):\n%s", d)
	}
}
