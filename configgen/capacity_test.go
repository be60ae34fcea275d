package configgen

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dialogfarm/analyst"
	"dialogfarm/dialog/vocab"
	"dialogfarm/profiles"
)

// goJSPythonRepo copies the sample repository's Go, JavaScript and
// Python files (no Java, no TypeScript) into a new folder.
func goJSPythonRepo(tb testing.TB) string {
	tb.Helper()
	dst := tb.TempDir()
	src := "../examples/sample-repo"
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		switch filepath.Ext(p) {
		case ".go", ".js", ".py":
		default:
			return nil
		}
		rel, _ := filepath.Rel(src, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(dst, filepath.Dir(rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		tb.Fatal(err)
	}
	return dst
}

// TestPlanFitsTheRepositories is issue 42's case end to end: `run --n 16`
// with the default profile on a repository with only Go, JavaScript and
// Python files. Planned blind, 6 of the 16 rows asked for Java or
// TypeScript and only 10 configs came out; planned on IndexRepos, all 16
// are made and nothing is unfulfilled.
func TestPlanFitsTheRepositories(t *testing.T) {
	ctx := context.Background()
	cfg := DefaultConfig()
	cfg.Repos, cfg.Seed = []string{goJSPythonRepo(t)}, 42
	p := defaultPlan(t, 16, 42)
	blind, err := Generate(ctx, p, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if blind.Stats.Configs == 16 {
		t.Fatal("the blind plan made 16 configs: the fixture no longer shows the issue")
	}
	ix, _, err := IndexRepos(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if ix.Files["java"] != 0 || ix.Files["typescript"] != 0 || ix.Files["go"] == 0 {
		t.Fatalf("index %+v", ix.Files)
	}
	prof := defaultProfile(t)
	pl, err := analyst.PlanForRepos(prof, ix, analyst.PlanConfig{N: 16, Seed: 42})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Generate(ctx, pl, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stats.Configs != 16 || len(res.Stats.Unfulfilled) > 0 {
		t.Fatalf("fitted plan: %d configs, unfulfilled %v; want 16, none", res.Stats.Configs, res.Stats.Unfulfilled)
	}
	var moved []string
	for _, m := range pl.Fit.Moves {
		moved = append(moved, m.Value)
	}
	if got := strings.Join(moved, " "); !strings.Contains(got, "java") || !strings.Contains(got, "typescript") {
		t.Errorf("moves %v do not name java and typescript", moved)
	}
	t.Logf("blind: %d configs (unfulfilled %v); fitted: %d", blind.Stats.Configs, blind.Stats.Unfulfilled, res.Stats.Configs)
}

// TestIndexReposCapacity: a repository with one small Go function holds
// a few targets; the plan is cut to them and says so in one line, and
// every planned config is made.
func TestIndexReposCapacity(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := "package a\n\n// Add adds.\nfunc Add(a, b int) int {\n\treturn a + b\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Repos, cfg.Seed = []string{dir}, 42
	ix, _, err := IndexRepos(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if ix.Files["go"] != 1 || ix.OpenFiles["go"] {
		t.Fatalf("index %+v", ix)
	}
	if ix.Realises("go", vocab.CursorPartialBlock) {
		t.Error("a one-statement body has a partial block")
	}
	pl, err := analyst.PlanForRepos(defaultProfile(t), ix, analyst.PlanConfig{N: 16, Seed: 42})
	if err != nil {
		t.Fatal(err)
	}
	line := pl.Fit.CapacityLine()
	if pl.N >= 16 || pl.N != pl.Fit.Capacity || !strings.Contains(line, "not the 16 asked") {
		t.Fatalf("n %d, capacity %d, line %q", pl.N, pl.Fit.Capacity, line)
	}
	res, err := Generate(ctx, pl, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stats.Configs != pl.N {
		t.Errorf("%d configs for a plan of %d (unfulfilled %v)", res.Stats.Configs, pl.N, res.Stats.Unfulfilled)
	}
	t.Log(line)
}

func defaultProfile(tb testing.TB) *profiles.Profile {
	tb.Helper()
	p, err := profiles.Builtin("default")
	if err != nil {
		tb.Fatal(err)
	}
	return p
}
