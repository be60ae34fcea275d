package tasks

import (
	"context"
	"fmt"
	"path/filepath"

	"golang.org/x/tools/go/callgraph"
	"golang.org/x/tools/go/callgraph/cha"
	"golang.org/x/tools/go/callgraph/vta"
	"golang.org/x/tools/go/packages"
	"golang.org/x/tools/go/ssa"
	"golang.org/x/tools/go/ssa/ssautil"
)

// callSite is a static call from one project node to another, at a place.
type callSite struct {
	from, to  string
	file      string
	line, col int
}

// goCallSites builds the static call graph of the module (test variants
// included, so that types made only by tests flow into interface calls):
// CHA first, refined by VTA over the module's own functions. Calls into
// closures are left out (a closure is part of the node that declares it);
// calls to synthetic wrappers are followed to the real method, and an
// instantiated generic function (Sum[int]) stands for its declaration
// (Sum), as caller and as callee.
func goCallSites(ctx context.Context, repo string, patterns []string, ix nodeIndex) ([]callSite, error) {
	cfg := &packages.Config{Context: ctx, Dir: repo, Tests: true, Mode: packages.LoadAllSyntax}
	initial, err := packages.Load(cfg, patterns...)
	if err != nil {
		return nil, fmt.Errorf("load packages for the call graph: %w", err)
	}
	if n := packages.PrintErrors(initial); n > 0 {
		return nil, fmt.Errorf("load packages for the call graph: %d errors (see above)", n)
	}
	prog, _ := ssautil.AllPackages(initial, ssa.InstantiateGenerics)
	prog.Build()
	nodeOf := func(fn *ssa.Function) (Node, bool) {
		if fn == nil || !fn.Pos().IsValid() {
			return Node{}, false
		}
		p := prog.Fset.Position(fn.Pos())
		rel, err := filepath.Rel(repo, p.Filename)
		if err != nil {
			return Node{}, false
		}
		return ix.at(filepath.ToSlash(rel), p.Line)
	}
	funcs := map[*ssa.Function]bool{}
	for fn := range ssautil.AllFunctions(prog) {
		if _, ok := nodeOf(fn); ok || fn.Synthetic != "" {
			funcs[fn] = true
			continue
		}
		// test-file functions: positions in the module but not nodes
		if fn.Pos().IsValid() {
			if rel, err := filepath.Rel(repo, prog.Fset.Position(fn.Pos()).Filename); err == nil && filepath.IsLocal(rel) {
				funcs[fn] = true
			}
		}
	}
	// Synthetic nodes are kept: DeleteSyntheticNodes would also delete
	// the instances of generic functions ("instance of Sum") and join
	// their callers to their callees.
	cg := vta.CallGraph(funcs, cha.CallGraph(prog))
	seen := map[callSite]bool{}
	var out []callSite
	for fn, n := range cg.Nodes {
		if fn == nil || isWrapper(fn) { // its calls are followed from its callers
			continue
		}
		from, ok := nodeOf(declared(fn))
		if !ok {
			continue
		}
		for _, e := range n.Out {
			for _, callee := range realCallees(e) {
				if callee.Parent() != nil { // a closure: part of its declaring node
					continue
				}
				to, ok := nodeOf(callee)
				if !ok || to.ID == from.ID || e.Site == nil {
					continue
				}
				p := prog.Fset.Position(e.Site.Pos())
				rel, _ := filepath.Rel(repo, p.Filename)
				s := callSite{from: from.ID, to: to.ID, file: filepath.ToSlash(rel), line: p.Line, col: p.Column}
				if !seen[s] {
					seen[s] = true
					out = append(out, s)
				}
			}
		}
	}
	return out, nil
}

// realCallees follows an edge through synthetic wrappers (bound methods,
// pointer-receiver wrappers, thunks) to the declared functions they call;
// an instance of a generic function is its declaration.
func realCallees(e *callgraph.Edge) []*ssa.Function {
	var out []*ssa.Function
	seen := map[*callgraph.Node]bool{}
	var walk func(n *callgraph.Node)
	walk = func(n *callgraph.Node) {
		if seen[n] || n.Func == nil {
			return
		}
		seen[n] = true
		if !isWrapper(n.Func) {
			out = append(out, declared(n.Func))
			return
		}
		for _, e := range n.Out {
			walk(e.Callee)
		}
	}
	walk(e.Callee)
	return out
}

// isWrapper reports a synthetic function that stands for no declaration
// of its own (bound method, wrapper, thunk); x/tools also marks instances
// of generic functions synthetic ("instance of X"), and those are not
// wrappers.
func isWrapper(fn *ssa.Function) bool {
	return fn.Synthetic != "" && fn.Origin() == nil
}

// declared is the function as declared: an instance's generic origin.
func declared(fn *ssa.Function) *ssa.Function {
	if o := fn.Origin(); o != nil {
		return o
	}
	return fn
}
