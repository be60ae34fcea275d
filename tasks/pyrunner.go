package tasks

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// pyRunner runs pytest in a scratch copy of the repository with the files
// replaced, all the given tests in one process.
type pyRunner struct {
	repo, python string
	timeout      time.Duration
}

func (r pyRunner) Run(ctx context.Context, files map[string][]byte, tests []Test) (map[string]TestRun, error) {
	work, err := os.MkdirTemp("", "dialogfarm-pyrun-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	ws := filepath.Join(work, "repo")
	if err := copyTree(r.repo, ws); err != nil {
		return nil, err
	}
	if err := writeFiles(ws, files); err != nil {
		return nil, err
	}
	tmp := filepath.Join(work, "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return nil, err
	}
	p, cleanup, err := newPytest(ws, TraceOptions{Python: r.python, TestTimeout: r.timeout})
	if err != nil {
		return nil, err
	}
	defer cleanup()
	var ids []string
	for _, t := range tests {
		ids = append(ids, t.ID)
	}
	res, run, err := p.run(ctx, ws, ids, false, tmp)
	if err != nil {
		return nil, err
	}
	var collectErr strings.Builder
	for id, t := range res.Tests {
		if strings.HasPrefix(id, "<collect>:") {
			collectErr.WriteString(t.Longrepr)
		}
	}
	out := map[string]TestRun{}
	for _, id := range ids {
		t, ok := res.Tests[id]
		switch {
		case !ok:
			msg := collectErr.String()
			if msg == "" {
				msg = run.Output
			}
			out[id] = TestRun{Outcome: OutcomeBuildError, Output: tail(msg, 2000)}
		case t.Outcome == "passed":
			out[id] = TestRun{Outcome: OutcomePass}
		case isStubFailure(LangPython, t.Longrepr):
			out[id] = TestRun{Outcome: OutcomeStub, Output: tail(t.Longrepr, 1500)}
		default:
			out[id] = TestRun{Outcome: OutcomeFail, Output: tail(t.Longrepr, 1500)}
		}
	}
	return out, nil
}

// copyTree copies src to dst, leaving out VCS folders and caches.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			switch d.Name() {
			case ".git", "__pycache__", ".pytest_cache", ".mypy_cache", ".tox", "node_modules":
				if rel != "." {
					return filepath.SkipDir
				}
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, _ := d.Info()
		return os.WriteFile(filepath.Join(dst, rel), b, info.Mode().Perm())
	})
}
