package tasks

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
)

// Step is one incremental task: implement Nodes so that Tests pass.
type Step struct {
	N     int      `json:"n"`     // 1-based
	Nodes []string `json:"nodes"` // node ids to implement (new in this step)
	Tests []string `json:"tests"` // fail-to-pass
	// Merged are tests of groups that brought no new node; they need this
	// step's nodes (the latest they depend on) and join its fail-to-pass.
	Merged    []string `json:"merged,omitempty"`
	DependsOn []int    `json:"depends_on,omitempty"`
}

// Plan is the ordered list of steps for one graph.
type Plan struct {
	Repo     string `json:"repo"`
	Language string `json:"language"`
	Steps    []Step `json:"steps"`
	// Scaffold tests cover no core node: they pass at every step.
	Scaffold []string `json:"scaffold,omitempty"`
}

// MakePlan groups g's tests by the exact set of core nodes they cover,
// orders the groups by size (a group's dependencies are its subsets, so
// they come first) with the set itself as tie-break, and turns each group
// into a step that implements the nodes no earlier step did. A group that
// brings nothing new is merged into the latest step it depends on. The
// result depends only on g.
func MakePlan(g *Graph) *Plan {
	p := &Plan{Repo: g.Repo, Language: g.Language}
	type group struct {
		nodes []string
		tests []string
	}
	byKey := map[string]*group{}
	for _, t := range g.Tests {
		if len(t.Covers) == 0 {
			p.Scaffold = append(p.Scaffold, t.ID)
			continue
		}
		k := strings.Join(t.Covers, "\n")
		if byKey[k] == nil {
			byKey[k] = &group{nodes: t.Covers}
		}
		byKey[k].tests = append(byKey[k].tests, t.ID)
	}
	keys := sortedKeys(byKey)
	slices.SortStableFunc(keys, func(a, b string) int { return len(byKey[a].nodes) - len(byKey[b].nodes) })
	stepOf := map[string]int{}
	for _, k := range keys {
		gr := byKey[k]
		slices.Sort(gr.tests)
		var fresh []string
		deps := map[int]bool{}
		for _, n := range gr.nodes {
			if s, ok := stepOf[n]; ok {
				deps[s] = true
			} else {
				fresh = append(fresh, n)
			}
		}
		if len(fresh) == 0 {
			last := 0
			for s := range deps {
				last = max(last, s)
			}
			st := &p.Steps[last-1]
			st.Tests = append(st.Tests, gr.tests...)
			st.Merged = append(st.Merged, gr.tests...)
			slices.Sort(st.Tests)
			continue
		}
		st := Step{N: len(p.Steps) + 1, Nodes: fresh, Tests: gr.tests}
		for s := range deps {
			st.DependsOn = append(st.DependsOn, s)
		}
		slices.Sort(st.DependsOn)
		for _, n := range fresh {
			stepOf[n] = st.N
		}
		p.Steps = append(p.Steps, st)
	}
	slices.Sort(p.Scaffold)
	return p
}

// PassToPass returns the tests that must keep passing at step n: every
// earlier step's tests and the scaffold.
func (p *Plan) PassToPass(n int) []string {
	out := slices.Clone(p.Scaffold)
	for _, s := range p.Steps[:n-1] {
		out = append(out, s.Tests...)
	}
	slices.Sort(out)
	return out
}

// Stubbed returns the node ids stubbed in step n's skeleton: steps n..end.
func (p *Plan) Stubbed(n int) []string {
	var out []string
	for _, s := range p.Steps[n-1:] {
		out = append(out, s.Nodes...)
	}
	return out
}

// ReadPlan loads a plan written with WriteJSON.
func ReadPlan(path string) (*Plan, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read plan: %w", err)
	}
	var p Plan
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("parse plan %s: %w", path, err)
	}
	for i, s := range p.Steps {
		if s.N != i+1 {
			return nil, fmt.Errorf("plan %s: steps[%d].n: want %d, got %d", path, i, i+1, s.N)
		}
	}
	return &p, nil
}
