package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"
	"golang.org/x/tools/cover"
)

// TraceOptions configures Trace.
type TraceOptions struct {
	// Runs is how many times each test runs alone (default 3); a test whose
	// outcome differs between runs is dropped as flaky.
	Runs int
	// Packages are the Go package patterns to trace (default ./...).
	Packages []string
	// TestTimeout bounds one test run (default 2 minutes).
	TestTimeout time.Duration
	// Python is the interpreter that has pytest (default /usr/bin/python3).
	Python string
	// Jobs is how many tests trace at once (default 1; each test's own
	// runs stay one after the other).
	Jobs int
	Log  *zap.Logger
}

func (o *TraceOptions) defaults() {
	if o.Runs <= 0 {
		o.Runs = 3
	}
	if len(o.Packages) == 0 {
		o.Packages = []string{"./..."}
	}
	if o.TestTimeout <= 0 {
		o.TestTimeout = 2 * time.Minute
	}
	if o.Python == "" {
		o.Python = "/usr/bin/python3"
	}
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
}

// DetectLanguage says whether repo is a Go module or a Python project.
func DetectLanguage(repo string) (string, error) {
	if _, err := os.Stat(filepath.Join(repo, "go.mod")); err == nil {
		return LangGo, nil
	}
	for _, f := range []string{"pyproject.toml", "setup.py", "setup.cfg", "pytest.ini", "tox.ini", "conftest.py"} {
		if _, err := os.Stat(filepath.Join(repo, f)); err == nil {
			return LangPython, nil
		}
	}
	// Loose modules, or a package at the top with no packaging file (a
	// library as a distribution installs it: toolz/, toolz/tests/).
	for _, pat := range []string{"*.py", filepath.Join("*", "__init__.py")} {
		if m, _ := filepath.Glob(filepath.Join(repo, pat)); len(m) > 0 {
			return LangPython, nil
		}
	}
	return "", fmt.Errorf("%s: neither a Go module (go.mod) nor a Python project (pyproject.toml, setup.py, *.py, PACKAGE/__init__.py)", repo)
}

// Trace runs repo's tests and returns their runtime dependency graph.
func Trace(ctx context.Context, repo string, opt TraceOptions) (*Graph, error) {
	opt.defaults()
	repo, err := filepath.Abs(repo)
	if err != nil {
		return nil, err
	}
	lang, err := DetectLanguage(repo)
	if err != nil {
		return nil, err
	}
	if lang == LangPython {
		return tracePython(ctx, repo, opt)
	}
	return traceGo(ctx, repo, opt)
}

// goPkg is the part of `go list -json` the tracer reads.
type goPkg struct {
	ImportPath   string
	Dir          string
	Name         string
	GoFiles      []string
	TestGoFiles  []string
	XTestGoFiles []string
}

func goList(ctx context.Context, repo string, patterns []string) ([]goPkg, error) {
	res, err := runCmd(ctx, repo, nil, 5*time.Minute, "go", append([]string{"list", "-json"}, patterns...)...)
	if err != nil {
		return nil, err
	}
	if res.ExitCode != 0 {
		return nil, fmt.Errorf("go list in %s: %s", repo, tail(res.Output, 2000))
	}
	var pkgs []goPkg
	dec := json.NewDecoder(strings.NewReader(res.Output))
	for {
		var p goPkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("parse go list output: %w", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

// goNodes parses the packages' non-test files and returns one node per
// function or method with a body.
func goNodes(repo string, pkgs []goPkg) ([]Node, error) {
	var nodes []Node
	fset := token.NewFileSet()
	for _, p := range pkgs {
		for _, f := range p.GoFiles {
			abs := filepath.Join(p.Dir, f)
			file, err := parser.ParseFile(fset, abs, nil, parser.SkipObjectResolution)
			if err != nil {
				return nil, fmt.Errorf("parse %s: %w", abs, err)
			}
			rel, _ := filepath.Rel(repo, abs)
			rel = filepath.ToSlash(rel)
			for _, d := range file.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					continue
				}
				name := goFuncName(fd)
				line := fset.Position(fd.Type.Func).Line
				nodes = append(nodes, Node{
					ID: fmt.Sprintf("%s:%d:%s", rel, line, name), File: rel, Line: line,
					EndLine: fset.Position(fd.Body.Rbrace).Line, Name: p.ImportPath + "." + name, Pkg: p.ImportPath,
				})
			}
		}
	}
	return nodes, nil
}

// goFuncName is Func, T.M or (*T).M.
func goFuncName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	ptr := false
	if s, ok := t.(*ast.StarExpr); ok {
		ptr, t = true, s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	recv := "?"
	if id, ok := t.(*ast.Ident); ok {
		recv = id.Name
	}
	if ptr {
		return "(*" + recv + ")." + fd.Name.Name
	}
	return recv + "." + fd.Name.Name
}

// nodeIndex finds the node enclosing a file position.
type nodeIndex map[string][]Node

func newNodeIndex(nodes []Node) nodeIndex {
	ix := nodeIndex{}
	for _, n := range nodes {
		ix[n.File] = append(ix[n.File], n)
	}
	return ix
}

func (ix nodeIndex) at(file string, line int) (Node, bool) {
	for _, n := range ix[file] {
		if n.Line <= line && line <= n.EndLine {
			return n, true
		}
	}
	return Node{}, false
}

// blockKey names one coverage block.
type blockKey struct {
	File                                 string
	StartLine, StartCol, EndLine, EndCol int
}

// coverage is block → count for one run.
type coverage map[blockKey]int

func readCoverage(profile string, fileOf func(string) string) (coverage, error) {
	ps, err := cover.ParseProfiles(profile)
	if err != nil {
		return nil, fmt.Errorf("read coverage profile: %w", err)
	}
	c := coverage{}
	for _, p := range ps {
		f := fileOf(p.FileName)
		for _, b := range p.Blocks {
			c[blockKey{f, b.StartLine, b.StartCol, b.EndLine, b.EndCol}] += b.Count
		}
	}
	return c, nil
}

// minus returns the blocks whose count grew over base.
func (c coverage) minus(base coverage) coverage {
	d := coverage{}
	for k, n := range c {
		if n-base[k] > 0 {
			d[k] = n - base[k]
		}
	}
	return d
}

// nodes returns the ids of the nodes holding a block that ran.
func (c coverage) nodes(ix nodeIndex) map[string]bool {
	out := map[string]bool{}
	for k, cnt := range c {
		if cnt == 0 {
			continue
		}
		if n, ok := ix.at(k.File, k.StartLine); ok {
			out[n.ID] = true
		}
	}
	return out
}

// hits reports whether the innermost block holding file:line:col ran.
func (c coverage) hits(all coverage, file string, line, col int) bool {
	var best *blockKey
	for k := range all {
		if k.File != file || !posIn(line, col, k) {
			continue
		}
		if best == nil || k.StartLine > best.StartLine || (k.StartLine == best.StartLine && k.StartCol > best.StartCol) {
			kk := k
			best = &kk
		}
	}
	return best != nil && c[*best] > 0
}

func posIn(line, col int, k blockKey) bool {
	after := line > k.StartLine || (line == k.StartLine && col >= k.StartCol)
	before := line < k.EndLine || (line == k.EndLine && col <= k.EndCol)
	return after && before
}

var (
	goTestLine   = regexp.MustCompile(`(?m)^--- (PASS|FAIL|SKIP): (\S+)`)
	goTestFuncRe = regexp.MustCompile(`^Test[^a-z]`)
)

func traceGo(ctx context.Context, repo string, opt TraceOptions) (*Graph, error) {
	pkgs, err := goList(ctx, repo, opt.Packages)
	if err != nil {
		return nil, err
	}
	nodes, err := goNodes(repo, pkgs)
	if err != nil {
		return nil, err
	}
	ix := newNodeIndex(nodes)
	g := &Graph{Repo: repo, Language: LangGo, Runs: opt.Runs, Nodes: nodes}
	dirOf := map[string]string{}
	var coverpkg []string
	for _, p := range pkgs {
		dirOf[p.ImportPath] = p.Dir
		coverpkg = append(coverpkg, p.ImportPath)
	}
	fileOf := func(name string) string {
		d, ok := dirOf[path.Dir(name)]
		if !ok {
			return name
		}
		rel, _ := filepath.Rel(repo, filepath.Join(d, path.Base(name)))
		return filepath.ToSlash(rel)
	}
	sites, err := goCallSites(ctx, repo, opt.Packages, ix)
	if err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "dialogfarm-trace-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	initNodes := map[string]bool{}
	edges := map[[2]string][]string{}
	for i, p := range pkgs {
		if len(p.TestGoFiles)+len(p.XTestGoFiles) == 0 {
			continue
		}
		testFiles := goTestFiles(repo, p)
		pt := &goPkgTrace{repo: repo, pkg: p, opt: opt, fileOf: fileOf,
			bin: filepath.Join(work, fmt.Sprintf("p%d.test", i)), tmp: filepath.Join(work, fmt.Sprintf("t%d", i))}
		if err := pt.run(ctx, strings.Join(coverpkg, ",")); err != nil {
			return nil, err
		}
		for id := range pt.base.nodes(ix) {
			initNodes[id] = true
		}
		g.Dropped = append(g.Dropped, pt.dropped...)
		for _, tc := range pt.tests {
			covered := tc.cov.nodes(ix)
			t := Test{ID: p.ImportPath + "." + tc.name, Pkg: p.ImportPath, Dir: relDir(repo, p.Dir), Name: tc.name, File: testFiles[tc.name]}
			for id := range covered {
				t.Covers = append(t.Covers, id)
			}
			slices.Sort(t.Covers)
			for _, s := range sites {
				if covered[s.from] && covered[s.to] && tc.cov.hits(tc.all, s.file, s.line, s.col) {
					k := [2]string{s.from, s.to}
					if !slices.Contains(edges[k], t.ID) {
						edges[k] = append(edges[k], t.ID)
					}
				}
			}
			g.Tests = append(g.Tests, t)
		}
	}
	g.InitNodes = sortedKeys(initNodes)
	finishGraph(g, edges)
	return g, nil
}

// finishGraph removes init-time nodes from the tests' cover sets, sorts
// everything and fills g.Edges.
func finishGraph(g *Graph, edges map[[2]string][]string) {
	init := map[string]bool{}
	for _, id := range g.InitNodes {
		init[id] = true
	}
	for i := range g.Tests {
		g.Tests[i].Covers = slices.DeleteFunc(g.Tests[i].Covers, func(id string) bool { return init[id] })
		if g.Tests[i].Covers == nil {
			g.Tests[i].Covers = []string{}
		}
	}
	for k, ts := range edges {
		slices.Sort(ts)
		g.Edges = append(g.Edges, Edge{From: k[0], To: k[1], Tests: ts})
	}
	slices.SortFunc(g.Edges, func(a, b Edge) int { return strings.Compare(a.From+"\x00"+a.To, b.From+"\x00"+b.To) })
	slices.SortFunc(g.Tests, func(a, b Test) int { return strings.Compare(a.ID, b.ID) })
	slices.SortFunc(g.Dropped, func(a, b Dropped) int { return strings.Compare(a.Test, b.Test) })
	slices.SortFunc(g.Nodes, func(a, b Node) int { return strings.Compare(a.ID, b.ID) })
}

func relDir(repo, dir string) string {
	rel, err := filepath.Rel(repo, dir)
	if err != nil {
		return dir
	}
	return filepath.ToSlash(rel)
}

// goTestFiles maps the package's test function names to their files.
func goTestFiles(repo string, p goPkg) map[string]string {
	out := map[string]string{}
	fset := token.NewFileSet()
	for _, f := range slices.Concat(p.TestGoFiles, p.XTestGoFiles) {
		abs := filepath.Join(p.Dir, f)
		file, err := parser.ParseFile(fset, abs, nil, parser.SkipObjectResolution)
		if err != nil {
			continue
		}
		for _, d := range file.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
				out[fd.Name.Name] = filepath.ToSlash(filepath.Join(relDir(repo, p.Dir), f))
			}
		}
	}
	return out
}
