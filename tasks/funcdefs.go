package tasks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path"
	"strings"
)

// funcDef is one function or method as a source file declares it.
type funcDef struct {
	// Name is Go F, T.M or (*T).M (type parameters left out); Python the
	// qualified name (Class.method).
	Name    string `json:"name"`
	Line    int    `json:"line"` // Go: the func keyword's line; Python: the first decorator's
	EndLine int    `json:"end_line"`
	// Decl is what a task shows of the function: Go its doc comment and
	// signature, Python its decorators, signature and docstring; never the
	// body.
	Decl string `json:"decl"`
	// Body is the body without braces (Go) or docstring (Python).
	Body string `json:"body"`
	// Source is the whole declaration (Python with its decorators, Go
	// without its doc comment), dedented.
	Source string `json:"source"`
	// Code is Source without the Python docstring: the function as an
	// answer that implements it shows it (the splicer keeps the file's
	// docstring). Go: Source.
	Code string `json:"code"`
}

// goDefs lists the functions and methods with a body of a Go file.
func goDefs(filename string, src []byte) ([]funcDef, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filename, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", filename, err)
	}
	var out []funcDef
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		start := fset.Position(fd.Type.Func).Offset
		declStart := start
		if fd.Doc != nil {
			declStart = fset.Position(fd.Doc.Pos()).Offset
		}
		lb, rb := fset.Position(fd.Body.Lbrace).Offset, fset.Position(fd.Body.Rbrace).Offset
		out = append(out, funcDef{
			Name: goFuncName(fd), Line: fset.Position(fd.Type.Func).Line, EndLine: fset.Position(fd.Body.Rbrace).Line,
			Decl:   strings.TrimRight(string(src[declStart:lb]), " \t\r\n"),
			Body:   string(src[lb+1 : rb]),
			Source: string(src[start : rb+1]),
			Code:   string(src[start : rb+1]),
		})
	}
	return out, nil
}

// pyDefs lists the functions and methods of Python files (path → source)
// with the embedded lister; files that do not parse are left out.
func pyDefs(python string, files map[string][]byte) (map[string][]funcDef, error) {
	req := map[string]map[string]string{"files": {}}
	for p, src := range files {
		req["files"][p] = string(src)
	}
	in, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	script, err := pyScripts.ReadFile("pyscripts/dialogfarm_defs.py")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(python, "-c", string(script))
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("list the functions of %d Python files: %w: %s", len(files), err, tail(stderr.String(), 1000))
	}
	var res struct {
		Defs map[string][]funcDef `json:"defs"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		return nil, fmt.Errorf("parse the function list: %w", err)
	}
	return res.Defs, nil
}

// defsOf lists the functions of one file in lang.
func defsOf(lang, python, file string, src []byte) ([]funcDef, error) {
	if lang == LangGo {
		return goDefs(file, src)
	}
	m, err := pyDefs(python, map[string][]byte{file: src})
	if err != nil {
		return nil, err
	}
	return m[file], nil
}

// shortName is the name a node has in its file: Go without the import
// path and package (pkg.(*T).M → (*T).M), Python its qualified name.
func shortName(n Node) string {
	if n.Pkg != "" && strings.HasPrefix(n.Name, n.Pkg+".") {
		return strings.TrimPrefix(n.Name, n.Pkg+".")
	}
	if strings.HasSuffix(n.File, ".go") {
		rest := n.Name[strings.LastIndex(n.Name, "/")+1:]
		return rest[strings.Index(rest, ".")+1:]
	}
	return n.Name
}

// bareName is a function's name without its receiver or class.
func bareName(name string) string {
	return name[strings.LastIndex(name, ".")+1:]
}

// findDef returns the def of node n among defs, the declarations of the
// same file in another state (skeleton, reference): the one with n's
// name, the k-th of that name when orig (the original file's defs) has
// several.
func findDef(defs, orig []funcDef, n Node) (funcDef, bool) {
	name := shortName(n)
	k := 0
	for _, d := range orig {
		if d.Name == name && d.Line < n.Line {
			k++
		}
	}
	for _, d := range defs {
		if d.Name != name {
			continue
		}
		if k == 0 {
			return d, true
		}
		k--
	}
	return funcDef{}, false
}

// isTestFile says whether a repository file holds tests (never stubbed):
// Go _test.go files; Python test_*.py, *_test.py, conftest.py and files
// under a test, tests or testing folder.
func isTestFile(rel string) bool {
	base := path.Base(rel)
	if strings.HasSuffix(base, "_test.go") {
		return true
	}
	if !strings.HasSuffix(base, ".py") {
		return false
	}
	if strings.HasPrefix(base, "test_") || strings.HasSuffix(base, "_test.py") || base == "conftest.py" {
		return true
	}
	for _, p := range strings.Split(path.Dir(rel), "/") {
		if p == "test" || p == "tests" || p == "testing" {
			return true
		}
	}
	return false
}
