package tasks

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
)

// Languages a repository can be traced in.
const (
	LangGo     = "go"
	LangPython = "python"
)

// Node is one function or method of the project (not of its tests). Nested
// functions, closures and generators belong to the node that encloses them.
type Node struct {
	ID      string `json:"id"`       // file:line:name, stable across runs
	File    string `json:"file"`     // repository-relative, slash separated
	Line    int    `json:"line"`     // first line of the declaration (decorators/doc excluded)
	EndLine int    `json:"end_line"` // last line of the body
	Name    string `json:"name"`     // qualified name: pkg.Func, pkg.(*T).M, mod.Class.meth
	Pkg     string `json:"pkg,omitempty"`
}

// Test is one test the tracer kept, with the nodes it covers.
type Test struct {
	ID     string   `json:"id"`            // Go: importpath.TestName; Python: pytest node id
	Pkg    string   `json:"pkg,omitempty"` // Go import path
	Dir    string   `json:"dir,omitempty"` // Go package directory, repository-relative
	Name   string   `json:"name"`
	File   string   `json:"file,omitempty"`
	Covers []string `json:"covers"` // node ids this test exercises
	Calls  []string `json:"calls,omitempty"`
}

// Edge is a node→node call observed while running the listed tests.
type Edge struct {
	From  string   `json:"from"`
	To    string   `json:"to"`
	Tests []string `json:"tests"`
}

// Dropped is a test left out of the graph, with why.
type Dropped struct {
	Test   string `json:"test"`
	Reason string `json:"reason"` // flaky, order_dependent, fails
	Detail string `json:"detail,omitempty"`
}

// Graph is the runtime dependency graph of a repository's tests.
type Graph struct {
	Repo     string    `json:"repo"`
	Language string    `json:"language"`
	Runs     int       `json:"runs"` // each test ran this many times alone
	Nodes    []Node    `json:"nodes"`
	Tests    []Test    `json:"tests"`
	Edges    []Edge    `json:"edges"`
	Dropped  []Dropped `json:"dropped,omitempty"`
	// InitNodes ran at init/import time (baseline); they are never stubbed.
	InitNodes []string `json:"init_nodes,omitempty"`
}

// Node returns the node with id, if any.
func (g *Graph) Node(id string) (Node, bool) {
	i := slices.IndexFunc(g.Nodes, func(n Node) bool { return n.ID == id })
	if i < 0 {
		return Node{}, false
	}
	return g.Nodes[i], true
}

// Summary counts what a graph holds.
type Summary struct {
	Language      string         `json:"language"`
	Tests         int            `json:"tests_traced"`
	Dropped       int            `json:"tests_dropped"`
	DroppedBy     map[string]int `json:"dropped_by_reason,omitempty"`
	Nodes         int            `json:"nodes"`
	CoveredNodes  int            `json:"covered_nodes"`
	Edges         int            `json:"edges"`
	InitNodes     int            `json:"init_nodes"`
	TestNodeEdges int            `json:"test_node_edges"`
}

// Summarize counts g.
func (g *Graph) Summarize() Summary {
	s := Summary{Language: g.Language, Tests: len(g.Tests), Dropped: len(g.Dropped), Nodes: len(g.Nodes),
		Edges: len(g.Edges), InitNodes: len(g.InitNodes), DroppedBy: map[string]int{}}
	covered := map[string]bool{}
	for _, t := range g.Tests {
		s.TestNodeEdges += len(t.Covers)
		for _, c := range t.Covers {
			covered[c] = true
		}
	}
	s.CoveredNodes = len(covered)
	for _, d := range g.Dropped {
		s.DroppedBy[d.Reason]++
	}
	return s
}

// String is the one-line human summary.
func (s Summary) String() string {
	return fmt.Sprintf("%s: %d tests traced, %d dropped %v, %d nodes (%d covered, %d init-time), %d test→node and %d node→node edges",
		s.Language, s.Tests, s.Dropped, s.DroppedBy, s.Nodes, s.CoveredNodes, s.InitNodes, s.TestNodeEdges, s.Edges)
}

// WriteJSON writes v as indented JSON to path.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ReadGraph loads a graph written by WriteJSON.
func ReadGraph(path string) (*Graph, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read graph: %w", err)
	}
	var g Graph
	if err := json.Unmarshal(b, &g); err != nil {
		return nil, fmt.Errorf("parse graph %s: %w", path, err)
	}
	if g.Language != LangGo && g.Language != LangPython {
		return nil, fmt.Errorf("graph %s: field language: want go or python, got %q", path, g.Language)
	}
	return &g, nil
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
