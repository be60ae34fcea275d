package tasks

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap/zaptest"
)

func tracePyFixture(t *testing.T) *Graph {
	t.Helper()
	if g := fixtureGraphs["tracePyFixture"]; g != nil {
		return g
	}
	g, err := Trace(context.Background(), "testdata/pyfix", TraceOptions{Log: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	fixtureGraphs["tracePyFixture"] = g
	return g
}

func TestTracePythonFixture(t *testing.T) {
	g := tracePyFixture(t)
	wantEdges := []string{
		"Worker.run -> square",
		"logged -> scale",
		"lookup -> normalize",
		"make_adder -> helper",
		"run_worker -> Worker.__init__",
		"run_worker -> Worker.run",
		"total -> Rect.area",
		"total -> Square.area",
		"total_countdown -> countdown",
	}
	if d := cmp.Diff(wantEdges, edgeNames(g, "")); d != "" {
		t.Errorf("edges (-want +got):\n%s", d)
	}
	wantCovers := map[string][]string{
		"tests/test_shapes.py::test_total":              {"Rect.__init__", "Rect.area", "Square.__init__", "Square.area", "total"},
		"tests/test_shapes.py::test_total_rejects_none": {"total"},
		"tests/test_util.py::test_adder":                {"helper", "make_adder"},
		"tests/test_util.py::test_countdown":            {"countdown", "total_countdown"},
		"tests/test_util.py::test_histogram":            {"histogram"},
		"tests/test_util.py::test_lookup":               {"lookup"},
		"tests/test_util.py::test_lookup_rejects_none":  {"lookup"},
		"tests/test_util.py::test_mixed":                {"Worker.__init__", "Worker.run", "countdown", "run_worker", "square", "total_countdown"},
		"tests/test_util.py::test_scale":                {"scale"},
		"tests/test_util.py::test_worker":               {"Worker.__init__", "Worker.run", "run_worker", "square"},
	}
	if d := cmp.Diff(wantCovers, coverNames(g, "")); d != "" {
		t.Errorf("covers (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]Dropped{{Test: "tests/test_util.py::test_flaky", Reason: "flaky", Detail: "fail,pass,fail"}}, g.Dropped); d != "" {
		t.Errorf("dropped (-want +got):\n%s", d)
	}
	var initNames []string
	for _, id := range g.InitNodes {
		n, _ := g.Node(id)
		initNames = append(initNames, n.Name)
	}
	slices.Sort(initNames)
	if d := cmp.Diff([]string{"build_registry", "logged", "normalize"}, initNames); d != "" {
		t.Errorf("init nodes (-want +got):\n%s", d)
	}
}

// TestTracePythonMonitoring traces the fixture again under Python ≥ 3.12,
// where the plugin uses sys.monitoring instead of setprofile, with
// Debian's pytest (pure Python) on PYTHONPATH; the graph must not change.
func TestTracePythonMonitoring(t *testing.T) {
	var py string
	for _, v := range []string{"3.13", "3.12"} {
		for _, p := range []string{"/usr/bin/python" + v, "/usr/local/bin/python" + v} {
			if _, err := os.Stat(p); err == nil && py == "" {
				py = p
			}
		}
		if m, _ := filepath.Glob("/root/.pyenv/versions/" + v + ".*/bin/python" + v); py == "" && len(m) > 0 {
			py = m[len(m)-1]
		}
	}
	if py == "" {
		t.Skip("no Python ≥ 3.12 on this machine")
	}
	dir := t.TempDir()
	for _, m := range []string{"_pytest", "pytest", "pluggy", "iniconfig", "packaging", "attr", "attrs", "py.py"} {
		if _, err := os.Stat("/usr/lib/python3/dist-packages/" + m); err == nil {
			if err := os.Symlink("/usr/lib/python3/dist-packages/"+m, filepath.Join(dir, m)); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Setenv("PYTHONPATH", dir)
	g, err := Trace(context.Background(), "testdata/pyfix", TraceOptions{Python: py, Runs: 1, Log: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	base := tracePyFixture(t)
	if d := cmp.Diff(edgeNames(base, ""), edgeNames(g, "")); d != "" {
		t.Errorf("edges under %s (-setprofile +sys.monitoring):\n%s", py, d)
	}
	got := coverNames(g, "")
	delete(got, "tests/test_util.py::test_flaky") // one run: not detected
	if d := cmp.Diff(coverNames(base, ""), got); d != "" {
		t.Errorf("covers under %s (-setprofile +sys.monitoring):\n%s", py, d)
	}
}

// TestDetectLanguage: a repository is Go with go.mod; Python with a
// packaging or pytest file, loose modules, or only a package at the top (a
// library as a distribution installs it, e.g. Debian's toolz/ with its
// tests/ inside); anything else is an error that names the folder.
func TestDetectLanguage(t *testing.T) {
	for _, c := range []struct {
		name  string
		files []string
		want  string
	}{
		{"go module", []string{"go.mod", "a.go"}, LangGo},
		{"pyproject", []string{"pyproject.toml"}, LangPython},
		{"loose module", []string{"calc.py"}, LangPython},
		{"package at the top", []string{"toolz/__init__.py", "toolz/tests/test_a.py"}, LangPython},
		{"neither", []string{"README.md", "docs/x/__init__.py"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range c.files {
				p := filepath.Join(dir, f)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := DetectLanguage(dir)
			if got != c.want || (err != nil) != (c.want == "") {
				t.Fatalf("DetectLanguage = %q, %v; want %q", got, err, c.want)
			}
			if err != nil && !strings.Contains(err.Error(), dir) {
				t.Errorf("error %q does not name the folder", err)
			}
		})
	}
}
