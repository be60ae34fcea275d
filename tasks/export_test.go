package tasks

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap/zaptest"

	"dialogfarm/dialog"
	"dialogfarm/dialog/vocab"
	"dialogfarm/internal/jsonl"
	"dialogfarm/judge"
	"dialogfarm/profiles"
	"dialogfarm/tasks/sandbox"
)

// exported builds, audits and exports a fixture (once per graph) with the
// default profile (configs in English and Chinese, every query style) and
// writes its graph.json, as `tasks build` leaves a folder.
func exported(t *testing.T, g *Graph) (*Build, *Audit, string) {
	t.Helper()
	b, a, out := buildAndAudit(t, g)
	if _, err := os.Stat(filepath.Join(out, "graph.json")); err == nil {
		return b, a, out
	}
	prof, err := profiles.Load("default")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Export(context.Background(), b, a, out, ExportOptions{Profile: prof, Materialize: true}); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(filepath.Join(out, "graph.json"), g); err != nil {
		t.Fatal(err)
	}
	return b, a, out
}

func fixtures(t *testing.T) map[string]*Graph {
	return map[string]*Graph{"go": traceGoFixture(t), "python": tracePyFixture(t)}
}

var reqHeading = regexp.MustCompile("(?m)^### `([^`]+)` \\(([^:]+):(\\d+)\\)\n\n```\\w+\n((?s:.*?))\n```")

// TestRequirementsShowTheSkeleton: every function of a requirement is
// shown as the skeleton declares it — Go doc comment and signature, never
// a body, even of a one-line function; Python decorators, signature and
// docstring — with the line it starts on in the skeleton, not in the
// original file; vacuous tests are not among the tests that must pass.
func TestRequirementsShowTheSkeleton(t *testing.T) {
	for lang, g := range fixtures(t) {
		t.Run(lang, func(t *testing.T) {
			b, _, _ := exported(t, g)
			shown := map[string]string{}
			moved := 0
			for i, task := range b.Tasks {
				req, err := os.ReadFile(task.Requirement)
				if err != nil {
					t.Fatal(err)
				}
				ms := reqHeading.FindAllStringSubmatch(string(req), -1)
				if len(ms) != len(task.Nodes) {
					t.Fatalf("step %d: %d functions in the requirement, want %d:\n%s", task.Step, len(ms), len(task.Nodes), req)
				}
				for k, m := range ms {
					n := task.Nodes[k]
					line, _ := strconv.Atoi(m[3])
					src, ok := b.States[i][m[2]]
					if !ok {
						t.Fatalf("step %d: %s is not a skeleton file", task.Step, m[2])
					}
					defs, err := defsOf(b.Language, "/usr/bin/python3", m[2], src)
					if err != nil {
						t.Fatal(err)
					}
					if !slices.ContainsFunc(defs, func(d funcDef) bool { return d.Name == shortName(n) && d.Line == line }) {
						t.Errorf("step %d: %s is not declared at %s:%d of the skeleton:\n%s", task.Step, n.Name, m[2], line, src)
					}
					if line != n.Line {
						moved++
					}
					shown[n.Name] = m[4]
				}
			}
			if moved == 0 {
				t.Errorf("no function moved between the original and a skeleton: the fixture does not check the line references")
			}
			want := map[string]string{
				"gofix/shapes.Square.Area": "// Area of a square.\nfunc (s Square) Area() int",
				"gofix/gen.add":            "func add[T Number](a, b T) T",
				"scale":                    "@logged\ndef scale(x, k):\n    \"\"\"Multiply x by k.\"\"\"",
				"histogram":                "def histogram(words):\n    \"\"\"Count each word, ignoring case and surrounding blanks.\"\"\"",
				"Square.area":              "def area(self):",
			}
			for name, decl := range want {
				if got, ok := shown[name]; ok && got != decl {
					t.Errorf("%s shown as\n%s\nwant\n%s", name, got, decl)
				}
			}
		})
	}
	b, a, _ := exported(t, tracePyFixture(t))
	lookup := stepOf(t, b, "lookup")
	req, _ := os.ReadFile(b.Tasks[lookup].Requirement)
	must := string(req)[strings.Index(string(req), "## Tests that must pass"):]
	if vac := a.Steps[lookup].Vacuous; len(vac) != 1 || strings.Contains(must, vac[0]) || !strings.Contains(must, "test_util.py::test_lookup`") {
		t.Errorf("the lookup step's tests that must pass (vacuous %v):\n%s", vac, must)
	}
}

// readInstances reads the instances.jsonl of out.
func readInstances(t *testing.T, out string) []Instance {
	t.Helper()
	insts, err := jsonl.Read[Instance](filepath.Join(out, "instances.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return insts
}

func readConfigs(t *testing.T, out string) []dialog.ChatConfig {
	t.Helper()
	cfgs, err := jsonl.Read[dialog.ChatConfig](filepath.Join(out, "configs.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return cfgs
}

// TestInstancesPaths: repo, workspace and skeleton_files are relative to
// the folder of instances.jsonl; vacuous tests are pass-to-pass, not
// fail-to-pass; node ids come with the functions.
func TestInstancesPaths(t *testing.T) {
	g := tracePyFixture(t)
	_, _, out := exported(t, g)
	for _, inst := range readInstances(t, out) {
		for field, p := range map[string]string{"repo": inst.Repo, "workspace": inst.Workspace, "skeleton_files": inst.SkeletonFiles} {
			if filepath.IsAbs(p) || p == "" {
				t.Errorf("%s: %s %q is not relative", inst.InstanceID, field, p)
			}
		}
		if real, _ := filepath.EvalSymlinks(filepath.Join(out, inst.Repo)); real != mustReal(t, g.Repo) {
			t.Errorf("%s: repo %q is not %s seen from %s", inst.InstanceID, inst.Repo, g.Repo, out)
		}
		for _, p := range []string{filepath.Join(out, inst.Workspace, "pyfix", "util.py"), filepath.Join(out, inst.SkeletonFiles)} {
			if _, err := os.Stat(p); err != nil {
				t.Errorf("%s: %v", inst.InstanceID, err)
			}
		}
		for _, v := range inst.VacuousDropped {
			if slices.Contains(inst.FailToPass, v) || !slices.Contains(inst.PassToPass, v) {
				t.Errorf("%s: vacuous %s in FAIL_TO_PASS %v or not in PASS_TO_PASS", inst.InstanceID, v, inst.FailToPass)
			}
		}
		if len(inst.Nodes) != len(inst.Functions) {
			t.Errorf("%s: %d node ids for %d functions", inst.InstanceID, len(inst.Nodes), len(inst.Functions))
		}
	}
}

func mustReal(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestConfigsAskForTheStepsFunctions: each generate config's query names
// every function its step stubs, and no other.
func TestConfigsAskForTheStepsFunctions(t *testing.T) {
	for lang, g := range fixtures(t) {
		t.Run(lang, func(t *testing.T) {
			_, _, out := exported(t, g)
			ej := loadExecJudge(t, out)
			insts := map[string]Instance{}
			for _, inst := range readInstances(t, out) {
				insts[inst.InstanceID] = inst
			}
			several := 0
			for _, c := range readConfigs(t, out) {
				if c.Intent != vocab.IntentGenerate {
					continue
				}
				want := slices.Sorted(slices.Values(insts[c.ID].Functions))
				if len(want) > 1 {
					several++
				}
				if d := cmp.Diff(want, slices.Sorted(slices.Values(ej.Asked(c)))); d != "" {
					t.Errorf("%s asks %q (-step's functions +asked):\n%s", c.ID, c.Turns[0].Query, d)
				}
			}
			if several == 0 {
				t.Errorf("no config of a step with several functions: the fixture does not check them")
			}
		})
	}
}

func loadExecJudge(t *testing.T, dir string) *ExecJudge {
	t.Helper()
	sb, err := sandbox.New(sandbox.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	ej, err := LoadExecJudge(dir, sb, "", zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	return ej
}

// scoreReference gives the execution judge the reference code of the
// functions config c asks for as the answer and returns its verdict.
func scoreReference(t *testing.T, ej *ExecJudge, c dialog.ChatConfig) dialog.Verdict {
	t.Helper()
	j, err := judge.New(judge.DefaultConfig(), nil, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	j.WithExecutor(ej)
	answer, err := ej.ReferenceAnswer(context.Background(), c, ej.Asked(c))
	if err != nil {
		t.Fatal(err)
	}
	prompt, err := ConfigPrompt(c)
	if err != nil {
		t.Fatal(err)
	}
	s := judge.Subject{Intent: c.Intent, Language: c.Language, Locale: c.Locale, ConfigID: c.ID, Query: c.Turns[0].Query,
		Messages: []dialog.Message{{Role: "user", Content: prompt}}}
	vs, err := j.Judge(context.Background(), s, []dialog.Candidate{{Member: "reference", Text: answer}})
	if err != nil {
		t.Fatal(err)
	}
	return vs[0]
}

// TestReferenceAnswersScore5: over every generate config of the fixtures,
// the reference code of the functions the config asks for, given as the
// answer, passes the step's tests in the sandbox and scores 5.
func TestReferenceAnswersScore5(t *testing.T) {
	for lang, g := range fixtures(t) {
		t.Run(lang, func(t *testing.T) {
			_, _, out := exported(t, g)
			ej := loadExecJudge(t, out)
			n := 0
			for _, c := range readConfigs(t, out) {
				if c.Intent != vocab.IntentGenerate {
					continue
				}
				n++
				v := scoreReference(t, ej, c)
				if v.Score != 5 || v.Execution == nil || !v.Execution.Passed {
					out := ""
					if v.Execution != nil {
						out = v.Execution.Output
					}
					t.Errorf("%s (%q): score %v, deductions %v\n%s", c.ID, c.Turns[0].Query, v.Score, v.Deductions, out)
				}
			}
			if n == 0 {
				t.Fatal("no generate config")
			}
			t.Logf("%d generate configs scored", n)
		})
	}
}

// TestOldInstancesStillRead: an instances.jsonl of the earlier format
// (repo absolute, workspace and skeleton_files relative to the directory
// the tool ran in: here `tasks build --out out/x` run in a directory R) is
// still read from R/out/x by a judge running elsewhere, and its instances
// are still judged.
func TestOldInstancesStillRead(t *testing.T) {
	g := traceGoFixture(t)
	_, _, out := exported(t, g)
	old := filepath.Join(t.TempDir(), "R", "out", "x")
	if err := os.MkdirAll(old, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(out, "steps"), filepath.Join(old, "steps")); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, inst := range readInstances(t, out) {
		inst.Workspace, inst.SkeletonFiles = "out/x/"+inst.Workspace, "out/x/"+inst.SkeletonFiles
		inst.Repo, inst.Nodes = g.Repo, nil
		b, _ := json.Marshal(inst)
		lines = append(lines, string(b))
	}
	if err := os.WriteFile(filepath.Join(old, "instances.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(filepath.Join(old, "graph.json"), g); err != nil {
		t.Fatal(err)
	}
	ej := loadExecJudge(t, old)
	cfgs := readConfigs(t, out)
	i := slices.IndexFunc(cfgs, func(c dialog.ChatConfig) bool { return c.Intent == vocab.IntentGenerate })
	if v := scoreReference(t, ej, cfgs[i]); v.Score != 5 {
		t.Errorf("%s read from the old format: score %v, deductions %v", cfgs[i].ID, v.Score, v.Deductions)
	}
}
