package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"go.uber.org/zap"

	"dialogfarm/dialog"
	"dialogfarm/dialog/vocab"
	"dialogfarm/internal/jsonl"
	"dialogfarm/tasks/sandbox"
)

// ExecJudge runs an answer against the tests of the step its dialogue came
// from: the answer's code is spliced (by function name and receiver) into
// a copy of the step's skeleton, and the step's fail-to-pass and
// pass-to-pass tests run in the sandbox. Go test binaries are compiled
// outside the sandbox (compiling runs none of the answer's code; GOPROXY=off,
// GOFLAGS=-mod=readonly) and run inside it; Python tests run inside it.
type ExecJudge struct {
	steps  map[string]execStep // by chat config id (= instance id)
	graph  *Graph
	sb     *sandbox.Sandbox
	python string
	log    *zap.Logger
}

type execStep struct {
	inst  Instance
	tests []Test
	files []string // files holding the step's functions
	names []string // the functions, as the splicer names them
}

// Intents the execution judge checks: generate and fix answers are spliced
// into the skeleton; tests answers are added as a test file and must pass
// on the reference and fail on the skeleton.
var execIntents = map[string]bool{vocab.IntentGenerate: true, vocab.IntentFix: true, vocab.IntentTests: true}

// LoadExecJudge reads the instances and graph that `tasks build` wrote in dir.
func LoadExecJudge(dir string, sb *sandbox.Sandbox, python string, log *zap.Logger) (*ExecJudge, error) {
	g, err := ReadGraph(filepath.Join(dir, "graph.json"))
	if err != nil {
		return nil, err
	}
	if python == "" {
		python = "/usr/bin/python3"
	}
	j := &ExecJudge{steps: map[string]execStep{}, graph: g, sb: sb, python: python, log: log}
	f, err := os.Open(filepath.Join(dir, "instances.jsonl"))
	if err != nil {
		return nil, fmt.Errorf("execution judge: %w", err)
	}
	defer f.Close()
	err = jsonl.Each(f, f.Name(), func(_ int, line []byte) error {
		var inst Instance
		if err := json.Unmarshal(line, &inst); err != nil {
			return err
		}
		if inst.Workspace == "" {
			return nil
		}
		inst.Workspace = InstancePath(dir, inst.Workspace)
		inst.SkeletonFiles = InstancePath(dir, inst.SkeletonFiles)
		ts, err := testsByID(g, append(append([]string{}, inst.FailToPass...), inst.PassToPass...))
		if err != nil {
			return err
		}
		st := execStep{inst: inst, tests: ts}
		for _, n := range instanceNodes(g, inst) {
			if !containsStr(st.files, n.File) {
				st.files = append(st.files, n.File)
			}
			st.names = append(st.names, shortName(n))
		}
		j.steps[inst.InstanceID] = st
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("execution judge: %w", err)
	}
	return j, nil
}

// instanceNodes returns the graph nodes of an instance's functions: by
// node id, or, in files written before instances had ids, by name.
func instanceNodes(g *Graph, inst Instance) []Node {
	var out []Node
	if len(inst.Nodes) > 0 {
		for _, id := range inst.Nodes {
			if n, ok := g.Node(id); ok {
				out = append(out, n)
			}
		}
		return out
	}
	for _, fn := range inst.Functions {
		for _, n := range g.Nodes {
			if n.Name == fn {
				out = append(out, n)
			}
		}
	}
	return out
}

func containsStr(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// Execute checks answer for the task-derived dialogue configID. It returns
// nil (nothing to say) for other dialogues and intents.
func (j *ExecJudge) Execute(ctx context.Context, configID, intent, answer string) (*dialog.Execution, error) {
	intent = vocab.Intent(intent)
	st, ok := j.steps[strings.TrimSuffix(configID, "__tests")]
	if !ok || !execIntents[intent] {
		return nil, nil
	}
	ex := &dialog.Execution{Sandbox: j.sb.Mode()}
	for _, t := range st.tests {
		ex.Tests = append(ex.Tests, t.ID)
	}
	blocks := codeBlocks(answer, st.inst.Language)
	if len(blocks) == 0 {
		ex.Output = "the answer has no code block in " + st.inst.Language
		return ex, nil
	}
	work, err := os.MkdirTemp("", "dialogfarm-exec-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	if intent == vocab.IntentTests {
		return j.executeTests(ctx, work, st, strings.Join(blocks, "\n\n"), ex)
	}
	ws := filepath.Join(work, "ws")
	if err := copyTree(st.inst.Workspace, ws); err != nil {
		return nil, fmt.Errorf("copy the skeleton of %s: %w", configID, err)
	}
	spliced, err := j.splice(ws, st, strings.Join(blocks, "\n\n"))
	if errors.Is(err, errSplice) {
		ex.Output = err.Error()
		return ex, nil
	} else if err != nil {
		return nil, err
	}
	ex.Spliced = spliced
	if st.inst.Language == LangGo {
		return j.runGo(ctx, ws, st, ex)
	}
	return j.runPython(ctx, ws, st, ex)
}

// splice tries the code against each file of the step; it returns the
// files it changed.
func (j *ExecJudge) splice(ws string, st execStep, code string) ([]string, error) {
	var changed []string
	var lastErr error
	for _, f := range st.files {
		p := filepath.Join(ws, filepath.FromSlash(f))
		src, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var out []byte
		if st.inst.Language == LangGo {
			out, err = spliceGo(p, src, code, st.names)
		} else {
			out, err = splicePython(j.python, f, src, code, st.names)
		}
		if errors.Is(err, errSplice) {
			lastErr = err
			continue
		} else if err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, out, 0o644); err != nil {
			return nil, err
		}
		changed = append(changed, f)
	}
	if len(changed) == 0 {
		if lastErr == nil {
			lastErr = fmt.Errorf("%w: the step has no file", errSplice)
		}
		return nil, lastErr
	}
	return changed, nil
}

func (j *ExecJudge) runGo(ctx context.Context, ws string, st execStep, ex *dialog.Execution) (*dialog.Execution, error) {
	byDir := map[string][]string{}
	for _, t := range st.tests {
		byDir[t.Dir] = append(byDir[t.Dir], regexp.QuoteMeta(t.Name))
	}
	ex.Built = true
	var out strings.Builder
	passed := true
	for i, dir := range sortedKeys(byDir) {
		bin := filepath.Join(ws, fmt.Sprintf(".dialogfarm-%d.test", i))
		res, err := runCmd(ctx, ws, []string{"GOPROXY=off", "GOFLAGS=-mod=readonly", "GOTOOLCHAIN=local"}, 0,
			"go", "test", "-c", "-o", bin, "./"+dir)
		if err != nil {
			return nil, err
		}
		if res.ExitCode != 0 {
			ex.Built, ex.Passed = false, false
			ex.Output = tail(res.Output, 3000)
			return ex, nil
		}
		run := "^(" + strings.Join(byDir[dir], "|") + ")$"
		sr, err := j.sb.Run(ctx, ws, filepath.Join(ws, filepath.FromSlash(dir)), []string{bin, "-test.run", run, "-test.count=1"})
		if err != nil {
			return nil, err
		}
		out.WriteString(sr.Output)
		if sr.ExitCode != 0 {
			passed = false
		}
	}
	ex.Passed = passed
	ex.Output = tail(out.String(), 3000)
	return ex, nil
}

func (j *ExecJudge) runPython(ctx context.Context, ws string, st execStep, ex *dialog.Execution) (*dialog.Execution, error) {
	args := []string{j.python, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-o", "addopts="}
	for _, t := range st.tests {
		args = append(args, t.ID)
	}
	sr, err := j.sb.Run(ctx, ws, ws, args)
	if err != nil {
		return nil, err
	}
	ex.Output = tail(sr.Output, 3000)
	// pytest: 0 all passed, 1 some failed; 2 interrupted (collection
	// errors), 4 usage error: the answer broke the import.
	ex.Built = sr.ExitCode == 0 || sr.ExitCode == 1
	ex.Passed = sr.ExitCode == 0
	return ex, nil
}
