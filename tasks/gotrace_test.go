package tasks

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap/zaptest"
)

// edgeNames renders g's edges as "caller -> callee" with package-relative names.
func edgeNames(g *Graph, trim string) []string {
	name := map[string]string{}
	for _, n := range g.Nodes {
		name[n.ID] = strings.TrimPrefix(n.Name, trim)
	}
	var out []string
	for _, e := range g.Edges {
		out = append(out, name[e.From]+" -> "+name[e.To])
	}
	slices.Sort(out)
	return out
}

func coverNames(g *Graph, trim string) map[string][]string {
	name := map[string]string{}
	for _, n := range g.Nodes {
		name[n.ID] = strings.TrimPrefix(n.Name, trim)
	}
	out := map[string][]string{}
	for _, t := range g.Tests {
		var ns []string
		for _, c := range t.Covers {
			ns = append(ns, name[c])
		}
		slices.Sort(ns)
		out[strings.TrimPrefix(t.ID, trim)] = ns
	}
	return out
}

func traceGoFixture(t *testing.T) *Graph {
	t.Helper()
	if g := fixtureGraphs["traceGoFixture"]; g != nil {
		return g
	}
	g, err := Trace(context.Background(), "testdata/gofix", TraceOptions{Log: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	fixtureGraphs["traceGoFixture"] = g
	return g
}

func TestTraceGoFixture(t *testing.T) {
	g := traceGoFixture(t)
	wantEdges := []string{
		"calc.DoubleAll -> calc.Apply",
		"calc.DoubleAll -> calc.double",
		"calc.Parallel -> calc.worker",
		"gen.Drain -> gen.(*Stack).Pop", // calls through instances of generic code
		"gen.Sum -> gen.add",
		"gen.SumInts -> gen.Sum",
		"shapes.(*Rect).Area -> shapes.mul",
		"shapes.Describe -> shapes.Square.Area",
		"shapes.Total -> shapes.(*Rect).Area",
		"shapes.Total -> shapes.Square.Area",
	}
	if d := cmp.Diff(wantEdges, edgeNames(g, "gofix/")); d != "" {
		t.Errorf("edges (-want +got):\n%s", d)
	}
	wantCovers := map[string][]string{
		"calc.TestApply":      {"calc.Apply"},
		"calc.TestDoubleAll":  {"calc.Apply", "calc.DoubleAll", "calc.double"},
		"calc.TestParallel":   {"calc.Parallel", "calc.worker"},
		"calc.TestMixed":      {"calc.Apply", "calc.DoubleAll", "calc.Parallel", "calc.double", "calc.worker"},
		"calc.TestLookup":     {"calc.Lookup"},
		"gen.TestStack":       {"gen.(*Stack).Pop", "gen.(*Stack).Push", "gen.Drain"},
		"gen.TestSum":         {"gen.Sum", "gen.add"},
		"gen.TestSumInts":     {"gen.Sum", "gen.SumInts", "gen.add"},
		"shapes.TestTotal":    {"shapes.(*Rect).Area", "shapes.Square.Area", "shapes.Total", "shapes.mul"},
		"shapes.TestDescribe": {"shapes.Describe", "shapes.Square.Area"},
	}
	if d := cmp.Diff(wantCovers, coverNames(g, "gofix/")); d != "" {
		t.Errorf("covers (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]Dropped{{Test: "gofix/calc.TestFlaky", Reason: "flaky", Detail: "fail,pass,fail"}}, g.Dropped); d != "" {
		t.Errorf("dropped (-want +got):\n%s", d)
	}
	var initNames []string
	for _, id := range g.InitNodes {
		n, _ := g.Node(id)
		initNames = append(initNames, strings.TrimPrefix(n.Name, "gofix/"))
	}
	slices.Sort(initNames)
	if d := cmp.Diff([]string{"calc.init", "calc.register"}, initNames); d != "" {
		t.Errorf("init nodes (-want +got):\n%s", d)
	}
}
