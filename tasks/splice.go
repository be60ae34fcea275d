package tasks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"dialogfarm/dialog/vocab"

	"golang.org/x/tools/go/ast/astutil"
	"golang.org/x/tools/imports"
)

// errSplice is an answer that cannot be put into the file: it does not
// parse or defines none of the functions asked for.
var errSplice = errors.New("answer cannot be spliced")

var fence = regexp.MustCompile("(?s)```([A-Za-z0-9_+-]*)[^\n]*\n(.*?)\n```")

// codeBlocks returns the fenced code blocks of answer tagged lang (or
// untagged), in order.
func codeBlocks(answer, lang string) []string {
	var out []string
	for _, m := range fence.FindAllStringSubmatch(answer, -1) {
		if tag := m[1]; tag == "" || vocab.LanguageName(tag) == lang {
			out = append(out, m[2])
		}
	}
	return out
}

// spliceGo puts the answer's functions into src: a function or method whose
// name (and receiver type) matches one of targets replaces it (the
// original's doc comment stays), other new functions are appended, the
// answer's imports are added, unused imports pruned, and the file
// formatted.
func spliceGo(filename string, src []byte, code string, targets []string) ([]byte, error) {
	if !strings.HasPrefix(strings.TrimSpace(code), "package ") {
		code = "package answer\n\n" + code
	}
	afset := token.NewFileSet()
	af, err := parser.ParseFile(afset, "answer.go", code, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("%w: the answer's Go code does not parse: %v", errSplice, err)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filename, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", filename, err)
	}
	have := map[string]*ast.FuncDecl{}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok {
			have[goFuncName(fd)] = fd
		}
	}
	type edit struct {
		from, to int
		text     string
	}
	var edits []edit
	var extra []string
	matched := 0
	for _, d := range af.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		name := goFuncName(fd)
		text := code[afset.Position(fd.Type.Func).Offset:afset.Position(fd.End()).Offset]
		switch old, ok := have[name]; {
		case ok && slices.Contains(targets, name):
			edits = append(edits, edit{fset.Position(old.Type.Func).Offset, fset.Position(old.End()).Offset, text})
			matched++
		case !ok:
			extra = append(extra, text)
		}
	}
	if matched == 0 {
		return nil, fmt.Errorf("%w: the answer defines none of %s", errSplice, strings.Join(targets, ", "))
	}
	slices.SortFunc(edits, func(a, b edit) int { return b.from - a.from })
	out := slices.Clone(src)
	for _, e := range edits {
		out = slices.Concat(out[:e.from], []byte(e.text), out[e.to:])
	}
	if len(extra) > 0 {
		out = append(bytes.TrimRight(out, "\n"), []byte("\n\n"+strings.Join(extra, "\n\n")+"\n")...)
	}
	nf, err := parser.ParseFile(fset, filename, out, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("%w: the spliced file does not parse: %v", errSplice, err)
	}
	for _, imp := range af.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		name := ""
		if imp.Name != nil {
			name = imp.Name.Name
		}
		astutil.AddNamedImport(fset, nf, name, p)
	}
	var buf bytes.Buffer
	if err := format.Node(&buf, fset, nf); err != nil {
		return nil, err
	}
	res, err := imports.Process(filename, buf.Bytes(), &imports.Options{Comments: true, TabIndent: true, TabWidth: 8})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errSplice, err)
	}
	return res, nil
}

// splicePython runs the embedded splicer.
func splicePython(python, file string, src []byte, code string, targets []string) ([]byte, error) {
	in, _ := json.Marshal(map[string]any{"source": string(src), "answer": code, "targets": targets})
	b, _ := pyScripts.ReadFile("pyscripts/dialogfarm_splice.py")
	cmd := exec.Command(python, "-c", string(b))
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 3 {
		return nil, fmt.Errorf("%w: %s", errSplice, strings.TrimSpace(stderr.String()))
	}
	if err != nil {
		return nil, fmt.Errorf("splice into %s: %w: %s", file, err, tail(stderr.String(), 1000))
	}
	return stdout.Bytes(), nil
}
