package tasks

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
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
		tmp := filepath.Join(work, fmt.Sprintf("tmp%d", i))
		if err := os.MkdirAll(tmp, 0o755); err != nil {
			return nil, err
		}
		batch, err := r.batch(ctx, bin, filepath.Join(r.repo, dir), tmp, byPkg[dir])
		if err != nil {
			return nil, err
		}
		for id, tr := range batch {
			out[id] = tr
		}
	}
	return out, nil
}

// batch runs tests in as few processes as it can: all of them in one
// verbose run, then, when a panic (a stub's) ended the binary, the ones that
// had not run yet in the next.
func (r goRunner) batch(ctx context.Context, bin, dir, tmp string, tests []Test) (map[string]TestRun, error) {
	out := map[string]TestRun{}
	pending := tests
	for len(pending) > 0 {
		var names []string
		for _, t := range pending {
			names = append(names, regexp.QuoteMeta(t.Name))
		}
		res, err := runCmd(ctx, dir, []string{"TMPDIR=" + tmp}, r.timeout, bin,
			"-test.run", "^("+strings.Join(names, "|")+")$", "-test.v", "-test.count=1", "-test.timeout", r.timeout.String())
		if err != nil {
			return nil, err
		}
		seg := testSegments(res.Output)
		var next []Test
		for _, t := range pending {
			s, ran := seg[t.Name]
			switch {
			case ran && s.result == "PASS":
				out[t.ID] = TestRun{Outcome: OutcomePass}
			case ran && (s.result == "FAIL" || s.result == ""): // "": the binary died in it
				out[t.ID] = classify(LangGo, runResult{Output: s.text, ExitCode: 1})
			case ran && s.result == "SKIP":
				out[t.ID] = TestRun{Outcome: OutcomeFail, Output: "skipped: " + tail(s.text, 500)}
			default:
				next = append(next, t)
			}
		}
		if len(next) == len(pending) { // no progress: report, do not loop
			for _, t := range next {
				out[t.ID] = classify(LangGo, runResult{Output: res.Output, ExitCode: 1, TimedOut: res.TimedOut})
			}
			break
		}
		pending = next
	}
	return out, nil
}

type segment struct {
	result string // PASS, FAIL, SKIP or "" when the test never finished
	text   string
}

var goRunLine = regexp.MustCompile(`^=== RUN   (\S+)$`)

// testSegments splits `go test -v` output into the part each top-level
// test printed: from its RUN line to the next RUN line (a panic's trace
// follows the FAIL line).
func testSegments(output string) map[string]*segment {
	segs := map[string]*segment{}
	var cur *segment
	for _, l := range strings.SplitAfter(output, "\n") {
		line := strings.TrimRight(l, "\n")
		if m := goRunLine.FindStringSubmatch(line); m != nil && !strings.Contains(m[1], "/") {
			cur = &segment{}
			segs[m[1]] = cur
		}
		if m := goTestLine.FindStringSubmatch(line); m != nil && !strings.Contains(m[2], "/") {
			if s, ok := segs[m[2]]; ok {
				s.result = m[1]
				if s != cur { // a parallel test's result: its text is elsewhere
					s.text += l
					continue
				}
			}
		}
		if cur != nil {
			cur.text += l
		}
	}
	return segs
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
