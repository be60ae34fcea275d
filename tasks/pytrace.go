package tasks

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"
)

//go:embed pyscripts/dialogfarm_tracer.py pyscripts/dialogfarm_stub.py pyscripts/dialogfarm_splice.py pyscripts/dialogfarm_defs.py
var pyScripts embed.FS

// pyResult is what the tracer plugin writes.
type pyResult struct {
	Python string `json:"python"`
	Nodes  map[string]struct {
		File    string `json:"file"`
		Line    int    `json:"line"`
		EndLine int    `json:"end_line"`
		Name    string `json:"name"`
	} `json:"nodes"`
	InitNodes []string `json:"init_nodes"`
	Tests     map[string]struct {
		Outcome  string     `json:"outcome"`
		Covers   []string   `json:"covers"`
		Calls    []string   `json:"calls"`
		Edges    [][]string `json:"edges"`
		Longrepr string     `json:"longrepr"`
	} `json:"tests"`
}

// pytest runs pytest with the embedded plugin.
type pytest struct {
	repo, python string
	scripts      string // dir holding the plugin, on PYTHONPATH
	opt          TraceOptions
}

func newPytest(repo string, opt TraceOptions) (*pytest, func(), error) {
	dir, err := os.MkdirTemp("", "dialogfarm-py-")
	if err != nil {
		return nil, nil, err
	}
	for _, n := range []string{"dialogfarm_tracer.py", "dialogfarm_stub.py"} {
		b, _ := pyScripts.ReadFile("pyscripts/" + n)
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			os.RemoveAll(dir)
			return nil, nil, err
		}
	}
	return &pytest{repo: repo, python: opt.Python, scripts: dir, opt: opt}, func() { os.RemoveAll(dir) }, nil
}

// run runs pytest in dir (the repository or a copy of it) on ids (all when
// empty) and returns the plugin's result.
func (p *pytest) run(ctx context.Context, dir string, ids []string, calls bool, tmp string) (*pyResult, runResult, error) {
	f, err := os.CreateTemp(p.scripts, "result-*.json")
	if err != nil {
		return nil, runResult{}, err
	}
	out := f.Name()
	f.Close()
	defer os.Remove(out)
	pp := p.scripts
	if old := os.Getenv("PYTHONPATH"); old != "" {
		pp += string(os.PathListSeparator) + old
	}
	env := []string{"PYTHONPATH=" + pp, "DIALOGFARM_TRACE_ROOT=" + dir, "DIALOGFARM_TRACE_OUT=" + out,
		"PYTHONDONTWRITEBYTECODE=1", "PYTHONHASHSEED=0", "TMPDIR=" + tmp}
	if !calls {
		env = append(env, "DIALOGFARM_TRACE_CALLS=0")
	}
	args := slices.Concat([]string{"-m", "pytest", "-p", "dialogfarm_tracer", "-p", "no:cacheprovider", "-q", "-o", "addopts="}, ids)
	res, err := runCmd(ctx, dir, env, p.opt.TestTimeout, p.python, args...)
	if err != nil {
		return nil, res, err
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return nil, res, fmt.Errorf("pytest in %s wrote no result (exit %d): %s", dir, res.ExitCode, tail(res.Output, 2000))
	}
	var r pyResult
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, res, fmt.Errorf("parse tracer result: %w", err)
	}
	return &r, res, nil
}

func (p *pytest) collect(ctx context.Context) ([]string, error) {
	res, err := runCmd(ctx, p.repo, []string{"PYTHONDONTWRITEBYTECODE=1"}, p.opt.TestTimeout, p.python,
		"-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-o", "addopts=")
	if err != nil {
		return nil, err
	}
	if res.ExitCode != 0 {
		return nil, fmt.Errorf("pytest --collect-only in %s (exit %d): %s", p.repo, res.ExitCode, tail(res.Output, 2000))
	}
	var ids []string
	for _, l := range strings.Split(res.Output, "\n") {
		if strings.Contains(l, "::") && !strings.HasPrefix(l, " ") {
			ids = append(ids, strings.TrimSpace(l))
		}
	}
	return ids, nil
}

func tracePython(ctx context.Context, repo string, opt TraceOptions) (*Graph, error) {
	p, cleanup, err := newPytest(repo, opt)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	ids, err := p.collect(ctx)
	if err != nil {
		return nil, err
	}
	tmp := filepath.Join(p.scripts, "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return nil, err
	}
	full, _, err := p.run(ctx, repo, nil, false, tmp)
	if err != nil {
		return nil, err
	}
	opt.Log.Info("tracing", zap.Int("tests", len(ids)), zap.String("python", full.Python))
	g := &Graph{Repo: repo, Language: LangPython, Runs: opt.Runs}
	nodes := map[string]Node{}
	initNodes := map[string]bool{}
	edges := map[[2]string][]string{}
	type traced struct {
		res   []*pyResult // every run's result
		fails []string    // outcomes
		last  string
	}
	results := make([]traced, len(ids))
	eg, gctx := errgroup.WithContext(ctx)
	eg.SetLimit(max(1, opt.Jobs))
	for i, id := range ids {
		eg.Go(func() error {
			for r := 0; r < opt.Runs; r++ {
				res, _, err := p.run(gctx, repo, []string{id}, true, tmp)
				if err != nil {
					return err
				}
				t, ok := res.Tests[id]
				if !ok || t.Outcome != "passed" {
					results[i].fails = append(results[i].fails, "fail")
					results[i].last = t.Longrepr
				} else {
					results[i].fails = append(results[i].fails, "pass")
				}
				results[i].res = append(results[i].res, res)
			}
			return nil
		})
	}
	if err := eg.Wait(); err != nil {
		return nil, err
	}
	for i, id := range ids {
		outcomes := results[i].fails
		covers, calls := map[string]bool{}, map[string]bool{}
		var tedges [][]string
		for _, res := range results[i].res {
			for nid, n := range res.Nodes {
				nodes[nid] = Node{ID: nid, File: n.File, Line: n.Line, EndLine: n.EndLine, Name: n.Name}
			}
			for _, n := range res.InitNodes {
				initNodes[n] = true
			}
			if t, ok := res.Tests[id]; ok && t.Outcome == "passed" {
				for _, c := range t.Covers {
					covers[c] = true
				}
				for _, c := range t.Calls {
					calls[c] = true
				}
				tedges = append(tedges, t.Edges...)
			}
		}
		last := results[i].last
		switch pass := !slices.Contains(outcomes, "fail"); {
		case !pass && slices.Contains(outcomes, "pass"):
			g.Dropped = append(g.Dropped, Dropped{Test: id, Reason: "flaky", Detail: strings.Join(outcomes, ",")})
		case !pass:
			g.Dropped = append(g.Dropped, Dropped{Test: id, Reason: "fails", Detail: tail(last, 600)})
		case full.Tests[id].Outcome != "passed":
			g.Dropped = append(g.Dropped, Dropped{Test: id, Reason: "order_dependent", Detail: "passes alone, not in the whole suite"})
		default:
			file, name, _ := strings.Cut(id, "::")
			g.Tests = append(g.Tests, Test{ID: id, Name: name, File: file, Covers: sortedKeys(covers), Calls: sortedKeys(calls)})
			for _, e := range tedges {
				k := [2]string{e[0], e[1]}
				if !slices.Contains(edges[k], id) {
					edges[k] = append(edges[k], id)
				}
			}
		}
	}
	for _, id := range sortedKeys(nodes) {
		g.Nodes = append(g.Nodes, nodes[id])
	}
	g.InitNodes = sortedKeys(initNodes)
	finishGraph(g, edges)
	return g, nil
}

// stubPython stubs nodes in one Python file with the embedded stubber.
func stubPython(python, file string, src []byte, nodes []Node) ([]byte, error) {
	type target struct {
		Line int    `json:"line"`
		Name string `json:"name"`
	}
	req := struct {
		Source  string   `json:"source"`
		Targets []target `json:"targets"`
	}{Source: string(src)}
	for _, n := range nodes {
		req.Targets = append(req.Targets, target{n.Line, n.Name})
	}
	in, _ := json.Marshal(req)
	b, _ := pyScripts.ReadFile("pyscripts/dialogfarm_stub.py")
	cmd := exec.Command(python, "-c", string(b))
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("stub %s: %w: %s", file, err, tail(stderr.String(), 1000))
	}
	return stdout.Bytes(), nil
}
