package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"

	"dialogfarm/analyst"
	"dialogfarm/profiles"
	"dialogfarm/sft"
)

// copyLanguages copies the sample repository's files with the given
// extensions into a new folder.
func copyLanguages(tb testing.TB, exts ...string) string {
	tb.Helper()
	dst, src := tb.TempDir(), sampleRepo(tb)
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		keep := false
		for _, e := range exts {
			keep = keep || filepath.Ext(p) == e
		}
		if !keep {
			return nil
		}
		rel, _ := filepath.Rel(src, p)
		data, err := os.ReadFile(p)
		if err == nil {
			err = os.MkdirAll(filepath.Join(dst, filepath.Dir(rel)), 0o755)
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(dst, rel), data, 0o644)
		}
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return dst
}

// TestRunFitsThePlanToTheRepositories: run --n 16 with the default
// profile on a repository with only Go, JavaScript and Python files makes
// 16 configs (blind, it made 10), prints what moved, and the report
// carries the moves; a second run folder given the first one's plan as
// --plan makes the same configs.
func TestRunFitsThePlanToTheRepositories(t *testing.T) {
	ctx := context.Background()
	repo := copyLanguages(t, ".go", ".js", ".py")
	out := t.TempDir()
	var table bytes.Buffer
	o := DefaultOptions{Profile: "default", N: 16, Repos: []string{repo}, Export: sft.DefaultOptions()}
	_, err := RunDefault(ctx, o, RunEnv{Out: out, Table: &table, Log: zaptest.NewLogger(t), BeforeNode: feedRecorded(t)})
	if err != nil {
		t.Fatal(err)
	}
	configs, err := readConfigsFile(filepath.Join(out, ConfigsFile))
	if err != nil || len(configs) != 16 {
		t.Fatalf("%d configs (err %v), want 16", len(configs), err)
	}
	for _, c := range configs {
		if c.Language == "java" || c.Language == "typescript" {
			t.Errorf("config %s in %s", c.ID, c.Language)
		}
	}
	if !strings.Contains(table.String(), "no usable java file in the repositories") {
		t.Errorf("the run did not say what moved:\n%s", table.String())
	}
	var r analyst.Report
	data, err := os.ReadFile(filepath.Join(out, ReportFile))
	if err == nil {
		err = json.Unmarshal(data, &r)
	}
	if err != nil || r.Fit == nil || len(r.Fit.Moves) == 0 {
		t.Fatalf("report fit %+v, err %v", r.Fit, err)
	}

	// run --plan: the plan file is used as it is.
	out2 := t.TempDir()
	o2 := DefaultOptions{Profile: "default", N: 16, Repos: []string{repo}, Export: sft.DefaultOptions(), PlanFile: filepath.Join(out, PlanFile)}
	if _, err := RunDefault(ctx, o2, RunEnv{Out: out2, Log: zaptest.NewLogger(t), BeforeNode: feedRecorded(t)}); err != nil {
		t.Fatal(err)
	}
	a, _ := profiles.ReadPlan(filepath.Join(out, PlanFile))
	b, err := profiles.ReadPlan(filepath.Join(out2, PlanFile))
	if err != nil || a.ID != b.ID {
		t.Fatalf("run --plan: plan %v (err %v), want %s", b, err, a.ID)
	}
	configs2, _ := readConfigsFile(filepath.Join(out2, ConfigsFile))
	if len(configs2) != 16 || configs2[0].File != configs[0].File {
		t.Errorf("run --plan made %d configs", len(configs2))
	}
	// A plan for another profile is refused, naming both.
	o3 := o2
	o3.Profile = writeProfile(t, func(s string) string { return strings.Replace(s, "explain: 0.22    #", "explain: 0.50    #", 1) })
	_, err = RunDefault(ctx, o3, RunEnv{Out: t.TempDir(), Log: zaptest.NewLogger(t), BeforeNode: feedRecorded(t)})
	if err == nil || !strings.Contains(err.Error(), "was made for another profile") {
		t.Fatalf("a plan of another profile: err %v", err)
	}
}

// writeProfile writes the default profile, edited, to a file.
func writeProfile(tb testing.TB, edit func(string) string) string {
	tb.Helper()
	data, err := os.ReadFile("../profiles/default.yaml")
	if err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(tb.TempDir(), "edited.yaml")
	if err := os.WriteFile(path, []byte(edit(string(data))), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}
