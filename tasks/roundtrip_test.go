package tasks

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap/zaptest"
)

// fixtureGraphs memoizes the (slow) fixture traces across the tests of
// this package; tests never modify a graph.
var fixtureGraphs = map[string]*Graph{}

// stepNames renders a plan as one line per step: its node names and tests.
func stepNames(g *Graph, p *Plan, trim string) []string {
	var out []string
	for _, s := range p.Steps {
		var ns []string
		for _, id := range s.Nodes {
			n, _ := g.Node(id)
			ns = append(ns, strings.TrimPrefix(n.Name, trim))
		}
		var ts []string
		for _, id := range s.Tests {
			ts = append(ts, id[strings.LastIndexAny(id, ".:")+1:])
		}
		line := strings.Join(ns, ",") + " <- " + strings.Join(ts, ",")
		if len(s.Merged) > 0 {
			line += " (merged " + strings.Join(s.Merged, ",")[strings.LastIndexAny(strings.Join(s.Merged, ","), ".:")+1:] + ")"
		}
		out = append(out, line)
	}
	return out
}

// builds memoizes buildAndAudit per graph; scratch holds its output and
// is removed by TestMain.
var (
	builds  = map[*Graph]builtFixture{}
	scratch string
)

type builtFixture struct {
	b   *Build
	a   *Audit
	out string
}

func TestMain(m *testing.M) {
	var err error
	if scratch, err = os.MkdirTemp("", "dialogfarm-tasks-test-"); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(scratch)
	os.Exit(code)
}

func buildAndAudit(t *testing.T, g *Graph) (*Build, *Audit, string) {
	t.Helper()
	if f, ok := builds[g]; ok {
		return f.b, f.a, f.out
	}
	ctx := context.Background()
	out, err := os.MkdirTemp(scratch, "build-")
	if err != nil {
		t.Fatal(err)
	}
	p := MakePlan(g)
	b, err := BuildTasks(ctx, g, p, out, BuildOptions{Log: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	a, err := AuditBuild(ctx, b, AuditOptions{Runner: NewRunner(g, "", 0), Log: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	var buf strings.Builder
	a.Print(&buf)
	t.Log("\n" + buf.String())
	builds[g] = builtFixture{b, a, out}
	return b, a, out
}

// stepOf returns the index of the step that implements the node named name.
func stepOf(t *testing.T, b *Build, name string) int {
	t.Helper()
	for i, st := range b.Tasks {
		for _, n := range st.Nodes {
			if n.Name == name {
				return i
			}
		}
	}
	t.Fatalf("no step implements %s", name)
	return -1
}

func TestRoundTripGo(t *testing.T) {
	g := traceGoFixture(t)
	b, a, _ := buildAndAudit(t, g)
	want := []string{
		"calc.Lookup <- TestLookup",
		"calc.Apply <- TestApply",
		"calc.worker,calc.Parallel <- TestParallel",
		"gen.Sum,gen.add <- TestSum",
		"shapes.Square.Area,shapes.Describe <- TestDescribe",
		"calc.double,calc.DoubleAll <- TestDoubleAll,TestMixed (merged TestMixed)",
		"gen.SumInts <- TestSumInts",
		"gen.(*Stack).Push,gen.(*Stack).Pop,gen.Drain <- TestStack",
		"shapes.(*Rect).Area,shapes.mul,shapes.Total <- TestTotal",
	}
	if d := cmp.Diff(want, stepNames(g, b.Plan, "gofix/")); d != "" {
		t.Errorf("plan (-want +got):\n%s", d)
	}
	if a.StepsPassed != len(want) || a.VacuousF2P != 0 || a.MissedEdges != 0 || a.Leaks != 0 {
		t.Errorf("audit: %d/%d passed, %d vacuous, %d missed, %d leaks; want all passed", a.StepsPassed, a.StepsTotal, a.VacuousF2P, a.MissedEdges, a.Leaks)
	}
	// the Describe step stubs Describe, the last function of shapes.go:
	// its patch ends at the file's last line, and still applies.
	describe := stepOf(t, b, "gofix/shapes.Describe")
	patch, _ := os.ReadFile(b.Tasks[describe].Patch)
	if !strings.Contains(string(patch), `-	panic("TODO: implement Describe")`) || !strings.Contains(string(patch), `+	return fmt.Sprintf("area %d", s.Area())`) {
		t.Errorf("Describe's patch does not restore Describe:\n%s", patch)
	}
	// cumulative: step 1's skeleton has every later step stubbed too
	skel, _ := os.ReadFile(filepath.Join(b.Tasks[0].SkeletonDir, "shapes", "shapes.go"))
	for _, fn := range []string{"Describe", "Total", "(*Rect).Area", "Square.Area", "mul"} {
		if !strings.Contains(string(skel), `panic("TODO: implement `+fn+`")`) {
			t.Errorf("step 1 skeleton does not stub %s", fn)
		}
	}
	if strings.Contains(string(skel), `"fmt"`) {
		t.Errorf("step 1 skeleton keeps the unused fmt import:\n%s", skel)
	}
	if !strings.Contains(string(skel), "// Describe says a shape's area.") {
		t.Errorf("doc comment lost:\n%s", skel)
	}
	checkTwins(t, b)
	checkExport(t, b, len(want))
}

// checkTwins: gen_old.go (//go:build !go1.18, left out of every build
// here) holds non-generic copies of gen's functions; each skeleton stubs
// the copies of the functions it stubs and no others.
func checkTwins(t *testing.T, b *Build) {
	t.Helper()
	old := func(i int) string {
		src, ok := b.States[i]["gen/gen_old.go"]
		if !ok {
			return ""
		}
		return string(src)
	}
	stack := stepOf(t, b, "gofix/gen.Drain")
	for _, fn := range []string{"Sum", "add", "SumInts", "(*Stack).Push", "(*Stack).Pop", "Drain"} {
		if !strings.Contains(old(0), `panic("TODO: implement `+fn+`")`) {
			t.Errorf("step 1 does not stub the build-tag twin of %s:\n%s", fn, old(0))
		}
	}
	if got := len(b.Tasks[0].Copies); got != 6 {
		t.Errorf("step 1 stubbed copies %v, want the 6 of gen_old.go", b.Tasks[0].Copies)
	}
	for _, fn := range []string{"Sum", "add", "SumInts"} {
		if strings.Contains(old(stack), `panic("TODO: implement `+fn+`")`) {
			t.Errorf("step %d (Stack) still stubs the twin of %s, implemented earlier", stack+1, fn)
		}
	}
	if !strings.Contains(old(stack), `panic("TODO: implement (*Stack).Pop")`) {
		t.Errorf("step %d does not stub the twin of (*Stack).Pop:\n%s", stack+1, old(stack))
	}
	if old(stack+1) != "" && strings.Contains(old(stack+1), "TODO: implement") {
		t.Errorf("step %d's skeleton stubs twins of functions no longer stubbed:\n%s", stack+2, old(stack+1))
	}
}

func TestRoundTripPython(t *testing.T) {
	g := tracePyFixture(t)
	b, a, _ := buildAndAudit(t, g)
	want := []string{
		"total <- test_total_rejects_none",
		"lookup <- test_lookup,test_lookup_rejects_none",
		"histogram <- test_histogram",
		"scale <- test_scale",
		"countdown,total_countdown <- test_countdown",
		"helper,make_adder <- test_adder",
		"square,Worker.__init__,Worker.run,run_worker <- test_mixed,test_worker (merged test_mixed)",
		"Square.__init__,Square.area,Rect.__init__,Rect.area <- test_total",
	}
	if d := cmp.Diff(want, stepNames(g, b.Plan, "")); d != "" {
		t.Errorf("plan (-want +got):\n%s", d)
	}
	var passed []bool
	for _, s := range a.Steps {
		passed = append(passed, s.Passed)
		if !s.PatchApplies || !s.PatchExact {
			t.Errorf("step %d: patch applies %v, exact %v", s.Step, s.PatchApplies, s.PatchExact)
		}
	}
	// step 1's only test passes on the stub (pytest.raises(Exception));
	// step 2 has a vacuous test beside a real one.
	if d := cmp.Diff([]bool{false, true, true, true, true, true, true, true}, passed); d != "" {
		t.Errorf("audit passed per step (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"tests/test_shapes.py::test_total_rejects_none"}, a.Steps[0].Vacuous); d != "" {
		t.Errorf("vacuous (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"tests/test_util.py::test_lookup_rejects_none"}, a.Steps[1].Vacuous); d != "" {
		t.Errorf("vacuous of step 2 (-want +got):\n%s", d)
	}
	// pyfix/_vendor/textstats.py holds histogram's body under another
	// name: stubbed while histogram is, restored after.
	histogram := stepOf(t, b, "histogram")
	if d := cmp.Diff([]string{"pyfix/_vendor/textstats.py:5 word_counts"}, b.Tasks[histogram].Copies); d != "" {
		t.Errorf("copies stubbed with histogram (-want +got):\n%s", d)
	}
	if v := string(b.States[histogram]["pyfix/_vendor/textstats.py"]); !strings.Contains(v, `raise NotImplementedError("TODO: implement word_counts")`) {
		t.Errorf("the vendored copy is not stubbed:\n%s", v)
	}
	if _, ok := b.States[histogram+1]["pyfix/_vendor/textstats.py"]; ok {
		t.Errorf("the vendored copy stays stubbed after histogram's step")
	}
	if a.Leaks != 0 {
		t.Errorf("leaks: %d, want 0", a.Leaks)
	}
	// shapes.py has no trailing newline and total is its last function.
	patch, _ := os.ReadFile(b.Tasks[0].Patch)
	if !strings.Contains(string(patch), `\ No newline at end of file`) {
		t.Errorf("step 1 patch lacks the no-newline marker:\n%s", patch)
	}
	skel, _ := os.ReadFile(filepath.Join(b.Tasks[0].SkeletonDir, "pyfix", "util.py"))
	for _, keep := range []string{"@logged\ndef scale(x, k):\n    \"\"\"Multiply x by k.\"\"\"\n    raise NotImplementedError(\"TODO: implement scale\")",
		"def make_adder(k):\n    raise NotImplementedError", "REGISTRY = build_registry()", "def normalize(s):\n    return s.lower()"} {
		if !strings.Contains(string(skel), keep) {
			t.Errorf("step 1 skeleton of util.py lacks %q:\n%s", keep, skel)
		}
	}
	checkExport(t, b, 7)
}

func checkExport(t *testing.T, b *Build, wantInstances int) {
	t.Helper()
	_, _, out := exported(t, b.Graph)
	insts := readInstances(t, out)
	if len(insts) != wantInstances {
		t.Errorf("exported %d instances, want %d", len(insts), wantInstances)
	}
	for _, inst := range insts {
		if len(inst.FailToPass) == 0 || inst.Patch == "" || len(inst.Functions) == 0 {
			t.Errorf("instance %s incomplete: %+v", inst.InstanceID, inst)
		}
	}
	if len(readConfigs(t, out)) == 0 {
		t.Errorf("no chat configs exported")
	}
}
