package tasks

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap/zaptest"
)

const leakGo = `package leakmod

import "slices"

// Average is the mean of xs, 0 for none.
func Average(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// Mean is Average under its new name.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// Median of xs (not empty).
func Median(xs []float64) float64 {
	s := slices.Clone(xs) // do not sort the caller's slice
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
`

const leakNotes = "# Notes\n\nThe median, as the code has it:\n\n" +
	"    s := slices.Clone(xs); slices.Sort(s)\n" +
	"    if len(s)%2 == 1 { return s[len(s)/2] }\n" +
	"    return (s[len(s)/2-1] + s[len(s)/2]) / 2\n"

// TestLeaksFailTheAudit: a stubbed function's body found where it cannot
// be stubbed is a leak, and its step fails the audit naming file:line:
// the same body in a function an earlier step implements (Mean after
// Average), the body reformatted, without its comment, in a Markdown file
// (Median). A body that is only in functions stubbed with it is none
// (Average while Mean is stubbed too).
func TestLeaksFailTheAudit(t *testing.T) {
	repo := t.TempDir()
	for name, src := range map[string]string{"go.mod": "module leakmod\n\ngo 1.22\n", "stats.go": leakGo, "docs/notes.md": leakNotes} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(repo, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	node := func(line, end int, name string) Node {
		return Node{ID: "stats.go:" + strconv.Itoa(line) + ":" + name, File: "stats.go", Line: line, EndLine: end, Name: "leakmod." + name, Pkg: "leakmod"}
	}
	avg, mean, median := node(6, 15, "Average"), node(18, 27, "Mean"), node(30, 37, "Median")
	g := &Graph{Repo: repo, Language: LangGo, Nodes: []Node{avg, mean, median}}
	p := &Plan{Repo: repo, Language: LangGo, Steps: []Step{{N: 1, Nodes: []string{avg.ID}}, {N: 2, Nodes: []string{mean.ID}}, {N: 3, Nodes: []string{median.ID}}}}
	b, err := BuildTasks(context.Background(), g, p, t.TempDir(), BuildOptions{Log: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	var got [][]Leak
	for _, task := range b.Tasks {
		got = append(got, task.Leaks)
	}
	want := [][]Leak{
		nil,
		// line 4 of the skeleton, whose unused slices import is pruned
		{{Function: "leakmod.Mean", File: "stats.go", Line: 4, How: "twin: Average is implemented by an earlier step"}},
		{{Function: "leakmod.Median", File: "docs/notes.md", Line: 5, How: "copy"}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("leaks per step (-want +got):\n%s", d)
	}
	a, err := AuditBuild(context.Background(), b, AuditOptions{Runner: NewRunner(g, "", 0), Log: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	var passed []bool
	for _, s := range a.Steps {
		passed = append(passed, s.Passed)
	}
	if d := cmp.Diff([]bool{true, false, false}, passed); d != "" {
		t.Errorf("audit passed per step (-want +got):\n%s", d)
	}
	if r := strings.Join(a.Steps[2].Reasons, "; "); !strings.Contains(r, "leak: the solution is in the workspace: leakmod.Median at docs/notes.md:5 (copy)") {
		t.Errorf("step 3's reasons: %s", r)
	}
	if a.Leaks != 2 {
		t.Errorf("audit counts %d leaks, want 2", a.Leaks)
	}
}
