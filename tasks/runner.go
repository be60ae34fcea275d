package tasks

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Outcomes of one test run.
const (
	OutcomePass       = "pass"
	OutcomeStub       = "stub_fail"   // failed with the stub's own error
	OutcomeFail       = "fail"        // failed with another error
	OutcomeBuildError = "build_error" // did not build / collect / import
)

// TestRun is one test's outcome in one state of the repository.
type TestRun struct {
	Outcome string `json:"outcome"`
	Output  string `json:"output,omitempty"`
}

// TestRunner runs tests of a repository with some files replaced.
type TestRunner interface {
	// Run runs tests (graph test ids) with files (repository-relative path →
	// content) in place of the originals.
	Run(ctx context.Context, files map[string][]byte, tests []Test) (map[string]TestRun, error)
}

// Wrapper turns a command (argv, working directory) into the command that
// really runs, e.g. inside a sandbox; nil runs it as is.
type Wrapper func(argv []string, dir string) []string

// goRunner runs Go tests with `go test -overlay`, so the tree is never
// touched: one test binary per package and state, each test run alone (a
// stub's panic ends the binary).
type goRunner struct {
	repo    string
	timeout time.Duration
}

func (r goRunner) Run(ctx context.Context, files map[string][]byte, tests []Test) (map[string]TestRun, error) {
	work, err := os.MkdirTemp("", "dialogfarm-gorun-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	replace := map[string]string{}
	for f, c := range files {
		p := filepath.Join(work, "overlay", filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, c, 0o644); err != nil {
			return nil, err
		}
		replace[filepath.Join(r.repo, filepath.FromSlash(f))] = p
	}
	ov, _ := json.Marshal(map[string]any{"Replace": replace})
	ovPath := filepath.Join(work, "overlay.json")
	if err := os.WriteFile(ovPath, ov, 0o644); err != nil {
		return nil, err
	}
	byPkg := map[string][]Test{}
	for _, t := range tests {
		byPkg[t.Dir] = append(byPkg[t.Dir], t)
	}
	out := map[string]TestRun{}
	for i, dir := range sortedKeys(byPkg) {
		bin := filepath.Join(work, fmt.Sprintf("p%d.test", i))
		res, err := runCmd(ctx, r.repo, nil, 10*r.timeout, "go", "test", "-c", "-overlay", ovPath, "-o", bin, "./"+dir)
		if err != nil {
			return nil, err
		}
		if res.ExitCode != 0 {
			for _, t := range byPkg[dir] {
				out[t.ID] = TestRun{Outcome: OutcomeBuildError, Output: tail(res.Output, 2000)}
			}
			continue
		}
		for _, t := range byPkg[dir] {
			tmp := filepath.Join(work, "tmp-"+t.Name)
			if err := os.MkdirAll(tmp, 0o755); err != nil {
				return nil, err
			}
			res, err := runCmd(ctx, filepath.Join(r.repo, dir), []string{"TMPDIR=" + tmp}, r.timeout, bin,
				"-test.run", "^"+t.Name+"$", "-test.count=1", "-test.timeout", r.timeout.String())
			if err != nil {
				return nil, err
			}
			out[t.ID] = classify(LangGo, res)
		}
	}
	return out, nil
}

func classify(lang string, res runResult) TestRun {
	switch {
	case res.ExitCode == 0 && !res.TimedOut:
		return TestRun{Outcome: OutcomePass}
	case isStubFailure(lang, res.Output):
		return TestRun{Outcome: OutcomeStub, Output: tail(res.Output, 1500)}
	default:
		return TestRun{Outcome: OutcomeFail, Output: tail(res.Output, 1500)}
	}
}

// NewRunner returns the test runner for g's language.
func NewRunner(g *Graph, python string, timeout time.Duration) TestRunner {
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	if python == "" {
		python = "/usr/bin/python3"
	}
	if g.Language == LangGo {
		return goRunner{repo: g.Repo, timeout: timeout}
	}
	return pyRunner{repo: g.Repo, python: python, timeout: timeout}
}

// testsByID returns g's tests with the given ids, in order.
func testsByID(g *Graph, ids []string) ([]Test, error) {
	byID := map[string]Test{}
	for _, t := range g.Tests {
		byID[t.ID] = t
	}
	var out []Test
	var missing []string
	for _, id := range ids {
		t, ok := byID[id]
		if !ok {
			missing = append(missing, id)
			continue
		}
		out = append(out, t)
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("tests not in the graph: %s", strings.Join(missing, ", "))
	}
	return out, nil
}
