package tasks

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"golang.org/x/tools/imports"

	"dialogfarm/dialog"
)

// executeTests checks a tests-intent answer: its code becomes a new test
// file next to the step's first test; the new tests must build and pass
// on the reference (the skeleton with the reference patch applied) and
// must fail on the skeleton — tests that pass on a stub test nothing.
func (j *ExecJudge) executeTests(ctx context.Context, work string, st execStep, code string, ex *dialog.Execution) (*dialog.Execution, error) {
	ex.Tests = nil
	ref, skel := filepath.Join(work, "ref"), filepath.Join(work, "skel")
	for _, d := range []string{ref, skel} {
		if err := copyTree(st.inst.Workspace, d); err != nil {
			return nil, err
		}
	}
	patch := filepath.Join(work, "reference.patch")
	if err := os.WriteFile(patch, []byte(st.inst.Patch), 0o644); err != nil {
		return nil, err
	}
	if res, err := runCmd(ctx, ref, nil, 0, "git", "apply", patch); err != nil || res.ExitCode != 0 {
		return nil, fmt.Errorf("apply the reference patch of %s: %v %s", st.inst.InstanceID, err, res.Output)
	}
	anchor := st.tests[0]
	for _, t := range st.tests {
		if containsStr(st.inst.FailToPass, t.ID) {
			anchor = t
			break
		}
	}
	file, names, err := j.writeAnswerTests(ref, anchor, code, st.inst.Language)
	if err != nil {
		ex.Output = err.Error()
		return ex, nil
	}
	if _, _, err := j.writeAnswerTests(skel, anchor, code, st.inst.Language); err != nil {
		return nil, err
	}
	ex.Spliced = []string{file}
	ex.Tests = names
	onRef, err := j.runAnswerTests(ctx, ref, file, names, st.inst.Language)
	if err != nil {
		return nil, err
	}
	ex.Built, ex.Passed, ex.Output = onRef.Built, onRef.Passed, "on the reference:\n"+onRef.Output
	if !ex.Built || !ex.Passed {
		return ex, nil
	}
	onSkel, err := j.runAnswerTests(ctx, skel, file, names, st.inst.Language)
	if err != nil {
		return nil, err
	}
	if onSkel.Built && onSkel.Passed {
		ex.Passed = false
		ex.Output = "the tests pass on the skeleton too, where the function is a stub: they do not test it\n" + onSkel.Output
	}
	return ex, nil
}

var pyTestDef = regexp.MustCompile(`(?m)^(?:async )?def (test\w*)\(|^class (Test\w*)`)

// writeAnswerTests writes code as a test file in the anchor test's folder
// of ws and returns its path and the test names in it.
func (j *ExecJudge) writeAnswerTests(ws string, anchor Test, code, lang string) (string, []string, error) {
	if lang == LangPython {
		dir := filepath.Dir(strings.SplitN(anchor.ID, "::", 2)[0])
		file := filepath.ToSlash(filepath.Join(dir, "test_dialogfarm_answer.py"))
		var names []string
		for _, m := range pyTestDef.FindAllStringSubmatch(code, -1) {
			names = append(names, m[1]+m[2])
		}
		if len(names) == 0 {
			return "", nil, fmt.Errorf("%w: the answer defines no test_ function or Test class", errSplice)
		}
		return file, names, os.WriteFile(filepath.Join(ws, filepath.FromSlash(file)), []byte(code+"\n"), 0o644)
	}
	pkgName := "main"
	if anchor.File != "" {
		if f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(ws, filepath.FromSlash(anchor.File)), nil, parser.PackageClauseOnly); err == nil {
			pkgName = f.Name.Name
		}
	}
	src := code
	if !strings.HasPrefix(strings.TrimSpace(src), "package ") {
		src = "package " + pkgName + "\n\n" + src
	} else {
		src = regexp.MustCompile(`(?m)^package \w+`).ReplaceAllString(src, "package "+pkgName)
	}
	file := filepath.ToSlash(filepath.Join(anchor.Dir, "dialogfarm_answer_test.go"))
	abs := filepath.Join(ws, filepath.FromSlash(file))
	f, err := parser.ParseFile(token.NewFileSet(), abs, src, parser.SkipObjectResolution)
	if err != nil {
		return "", nil, fmt.Errorf("%w: the answer's Go tests do not parse: %v", errSplice, err)
	}
	var names []string
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && goTestFuncRe.MatchString(fd.Name.Name+"_") {
			names = append(names, fd.Name.Name)
		}
	}
	if len(names) == 0 {
		return "", nil, fmt.Errorf("%w: the answer defines no Test function", errSplice)
	}
	out, err := imports.Process(abs, []byte(src), &imports.Options{Comments: true, TabIndent: true, TabWidth: 8})
	if err != nil {
		return "", nil, fmt.Errorf("%w: %v", errSplice, err)
	}
	return file, names, os.WriteFile(abs, out, 0o644)
}

// runAnswerTests runs the answer's tests in ws, in the sandbox.
func (j *ExecJudge) runAnswerTests(ctx context.Context, ws, file string, names []string, lang string) (*dialog.Execution, error) {
	r := &dialog.Execution{}
	if lang == LangPython {
		sr, err := j.sb.Run(ctx, ws, ws, []string{j.python, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-o", "addopts=", file})
		if err != nil {
			return nil, err
		}
		r.Output = tail(sr.Output, 3000)
		r.Built, r.Passed = sr.ExitCode == 0 || sr.ExitCode == 1, sr.ExitCode == 0
		return r, nil
	}
	dir := filepath.Dir(filepath.FromSlash(file))
	bin := filepath.Join(ws, ".dialogfarm-answer.test")
	res, err := runCmd(ctx, ws, []string{"GOPROXY=off", "GOFLAGS=-mod=readonly", "GOTOOLCHAIN=local"}, 0, "go", "test", "-c", "-o", bin, "./"+filepath.ToSlash(dir))
	if err != nil {
		return nil, err
	}
	if res.ExitCode != 0 {
		r.Output = tail(res.Output, 3000)
		return r, nil
	}
	r.Built = true
	sr, err := j.sb.Run(ctx, ws, filepath.Join(ws, dir), []string{bin, "-test.run", "^(" + strings.Join(names, "|") + ")$", "-test.count=1", "-test.v"})
	if err != nil {
		return nil, err
	}
	r.Output, r.Passed = tail(sr.Output, 3000), sr.ExitCode == 0
	return r, nil
}
