package tasks

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// stubber makes the skeleton states of a build: the stubbed functions and
// the copies of their bodies elsewhere in the repository.
type stubber struct {
	g       *Graph
	python  string
	ix      *repoIndex
	byID    map[string]Node
	nodeAt  map[string]string // file:line → node id
	covered map[string]bool   // nodes a step implements
	init    map[string]bool   // nodes that run at init/import time
	twins   map[string][]defEntry
}

func newStubber(g *Graph, plan *Plan, ix *repoIndex, python string) *stubber {
	s := &stubber{g: g, python: python, ix: ix, byID: map[string]Node{}, nodeAt: map[string]string{},
		covered: map[string]bool{}, init: map[string]bool{}, twins: map[string][]defEntry{}}
	for _, n := range g.Nodes {
		s.byID[n.ID] = n
		s.nodeAt[fmt.Sprintf("%s:%d", n.File, n.Line)] = n.ID
	}
	for _, st := range plan.Steps {
		for _, id := range st.Nodes {
			s.covered[id] = true
		}
	}
	for _, id := range g.InitNodes {
		s.init[id] = true
	}
	return s
}

// original returns a repository file's content.
func (s *stubber) original(file string) []byte {
	if f, ok := s.ix.files[file]; ok {
		return f.src
	}
	b, _ := os.ReadFile(filepath.Join(s.g.Repo, filepath.FromSlash(file)))
	return b
}

// ref is the repository's declaration of node id.
func (s *stubber) ref(id string) (defEntry, bool) {
	n := s.byID[id]
	return s.ix.def(n.File, n.Line)
}

// twinsOf memoizes repoIndex.twins per node.
func (s *stubber) twinsOf(id string) []defEntry {
	if t, ok := s.twins[id]; ok {
		return t
	}
	var t []defEntry
	if r, ok := s.ref(id); ok {
		t = s.ix.twins(r)
	}
	s.twins[id] = t
	return t
}

// state returns the stubbed contents of every file holding one of ids or
// a copy of one's body, the copies stubbed ("file:line name"), and, per
// node, the copies that could not be stubbed: functions an earlier step
// implements or that run at init time.
func (s *stubber) state(ids []string) (map[string][]byte, []string, map[string][]Leak, error) {
	in := map[string]bool{}
	for _, id := range ids {
		in[id] = true
	}
	targets := map[string]map[int]string{} // file → line → name
	add := func(file string, line int, name string) {
		if targets[file] == nil {
			targets[file] = map[int]string{}
		}
		targets[file][line] = name
	}
	for _, id := range ids {
		n, ok := s.byID[id]
		if !ok {
			return nil, nil, nil, fmt.Errorf("node %s is not in the graph", id)
		}
		add(n.File, n.Line, shortName(n))
	}
	var copies []string
	blocked := map[string][]Leak{}
	for _, id := range ids {
		for _, tw := range s.twinsOf(id) {
			nid, isNode := s.nodeAt[fmt.Sprintf("%s:%d", tw.file, tw.def.Line)]
			switch {
			case isNode && in[nid]: // stubbed anyway
				continue
			case isNode && s.init[nid]:
				blocked[id] = append(blocked[id], Leak{File: tw.file, Line: tw.def.Line, How: "twin: " + tw.def.Name + " runs at init/import time"})
				continue
			case isNode && s.covered[nid]:
				blocked[id] = append(blocked[id], Leak{File: tw.file, Line: tw.def.Line, How: "twin: " + tw.def.Name + " is implemented by an earlier step"})
				continue
			}
			if _, dup := targets[tw.file][tw.def.Line]; !dup {
				add(tw.file, tw.def.Line, tw.def.Name)
				copies = append(copies, fmt.Sprintf("%s:%d %s", tw.file, tw.def.Line, tw.def.Name))
			}
		}
	}
	slices.Sort(copies)
	files := map[string][]byte{}
	for _, f := range sortedKeys(targets) {
		src := s.original(f)
		var out []byte
		var err error
		if strings.HasSuffix(f, ".go") {
			lines := map[int]bool{}
			for l := range targets[f] {
				lines[l] = true
			}
			out, err = stubGo(filepath.Join(s.g.Repo, filepath.FromSlash(f)), src, lines)
		} else {
			var ns []Node
			for _, l := range sortedInts(targets[f]) {
				ns = append(ns, Node{Line: l, Name: targets[f][l]})
			}
			out, err = stubPython(s.python, f, src, ns)
		}
		if err != nil {
			return nil, nil, nil, err
		}
		files[f] = out
	}
	return files, copies, blocked, nil
}

// leaks lists where the bodies of a step's nodes are still found: copies
// that could not be stubbed (blocked), and the normalised bodies anywhere
// in the skeleton workspace or in the requirement text.
func (s *stubber) leaks(nodes []Node, skel map[string][]byte, blocked map[string][]Leak, requirement string) []Leak {
	type span struct {
		fn, file string
		from, to int
	}
	var refs []leakRef
	var out []Leak
	var spans []span // where the blocked twins are: their bodies are not listed again as copies
	for _, n := range nodes {
		r, ok := s.ref(n.ID)
		if !ok {
			continue
		}
		refs = append(refs, leakRef{name: n.Name, body: r.body})
		for _, l := range blocked[n.ID] {
			l.Function = n.Name
			src, ok := skel[l.File]
			if !ok {
				src = s.original(l.File)
			}
			if d, ok := s.ix.def(l.File, l.Line); ok {
				l.Line = lineOf(src, d.def)
				spans = append(spans, span{n.Name, l.File, l.Line, l.Line + d.def.EndLine - d.def.Line})
			}
			out = append(out, l)
		}
	}
	for _, c := range s.ix.scan(skel, refs) {
		if !slices.ContainsFunc(spans, func(sp span) bool {
			return sp.fn == c.Function && sp.file == c.File && sp.from <= c.Line && c.Line <= sp.to
		}) {
			out = append(out, c)
		}
	}
	out = append(out, scanCanon("requirement.md", canonOf("requirement.md", []byte(requirement)), refs)...)
	slices.SortFunc(out, func(a, b Leak) int {
		return strings.Compare(fmt.Sprintf("%s\x00%s\x00%08d", a.Function, a.File, a.Line), fmt.Sprintf("%s\x00%s\x00%08d", b.Function, b.File, b.Line))
	})
	return slices.CompactFunc(out, func(a, b Leak) bool { return a.Function == b.Function && a.File == b.File && a.Line == b.Line })
}

func sortedInts[V any](m map[int]V) []int {
	ks := make([]int, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
