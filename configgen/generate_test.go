package configgen

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"dialogfarm/analyst"
	"dialogfarm/dialog"
	"dialogfarm/dialog/vocab"
	"dialogfarm/profiles"
)

func sampleConfig() Config {
	cfg := DefaultConfig()
	cfg.Repos = []string{"../examples/sample-repo"}
	return cfg
}

func defaultPlan(tb testing.TB, n int, seed int64) *profiles.Plan {
	tb.Helper()
	p, err := profiles.Builtin("default")
	if err != nil {
		tb.Fatal(err)
	}
	pl, err := analyst.MakePlan(p, analyst.PlanConfig{N: n, Seed: seed})
	if err != nil {
		tb.Fatal(err)
	}
	return pl
}

func encode(tb testing.TB, configs []dialog.ChatConfig) []byte {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "configs.jsonl")
	if err := WriteConfigs(path, configs); err != nil {
		tb.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

func TestDeterministicBySeed(t *testing.T) {
	pl := defaultPlan(t, 300, 7)
	cfg := sampleConfig()
	cfg.Seed = 7
	a := encode(t, generate(t, pl, cfg).Configs)
	b := encode(t, generate(t, pl, cfg).Configs)
	if !bytes.Equal(a, b) {
		t.Fatal("same plan and seed gave different configs")
	}
	cfg.Seed = 8
	c := encode(t, generate(t, pl, cfg).Configs)
	if bytes.Equal(a, c) {
		t.Error("a different seed gave the same configs")
	}
	if n := bytes.Count(a, []byte("\n")); n != 300 {
		t.Errorf("%d lines, want 300", n)
	}
}

func TestConfigsMatchPlanCells(t *testing.T) {
	pl := defaultPlan(t, 400, 3)
	res := generate(t, pl, sampleConfig())
	rows := pl.Rows()
	if len(res.Configs) != len(rows) {
		t.Fatalf("%d configs for %d planned", len(res.Configs), len(rows))
	}
	for i, c := range res.Configs {
		if got, want := profiles.ConfigValues(c), rows[i]; !cmp.Equal(got, want) {
			t.Fatalf("config %d: cell %v, planned %v", i, got, want)
		}
		if c.PlanCell != profiles.CellKey(rows[i]) {
			t.Errorf("config %d: plan_cell %q", i, c.PlanCell)
		}
		q := c.Turns[0].Query
		switch c.Instruction {
		case dialog.InstructionCommand:
			if c.QuerySource != dialog.QuerySourceCommand || q != profiles.PluginCommands()[c.Intent] {
				t.Errorf("%s: command query %q (%s)", c.ID, q, c.QuerySource)
			}
		case dialog.InstructionSlash:
			if !strings.HasPrefix(q, profiles.SlashCommands()[c.Intent]) || c.QuerySource != dialog.QuerySourceTemplate {
				t.Errorf("%s: slash query %q for intent %s", c.ID, q, c.Intent)
			}
		default:
			if strings.HasPrefix(q, "/") || q == "" || c.QuerySource != dialog.QuerySourceTemplate {
				t.Errorf("%s: free-text query %q (%s)", c.ID, q, c.QuerySource)
			}
		}
		if strings.HasSuffix(c.QueryStyle, "_code") && c.Instruction != dialog.InstructionCommand && !strings.Contains(q, "```") {
			t.Errorf("%s: style %s but no code pasted: %q", c.ID, c.QueryStyle, q)
		}
		if c.Reference == vocab.RefOpenFiles && len(c.OpenFiles) == 0 {
			t.Errorf("%s: open_files reference without open files", c.ID)
		}
		if c.TotalTurns() != atoi(rows[i][vocab.DimTurns]) {
			t.Errorf("%s: %d turns, planned %s", c.ID, c.TotalTurns(), rows[i][vocab.DimTurns])
		}
	}
}

func atoi(s string) int {
	n := 0
	for _, r := range s {
		n = n*10 + int(r-'0')
	}
	return n
}

func TestSkipsAndCounts(t *testing.T) {
	repo := t.TempDir()
	if err := os.CopyFS(repo, os.DirFS("testdata/skips")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(repo, "web", "blob.js"), []byte("var x = 1;\x00\x01\x02\n"), 0o644)
	big := strings.Repeat("function f() {\n  return 1;\n}\n", 400)
	os.WriteFile(filepath.Join(repo, "web", "big.js"), []byte(big), 0o644)
	os.Mkdir(filepath.Join(repo, ".git"), 0o755)
	os.WriteFile(filepath.Join(repo, ".git", "hook.py"), []byte("x = 1\n"), 0o644)
	os.Symlink(filepath.Join(repo, "web", "ok.ts"), filepath.Join(repo, "web", "link.ts"))
	cfg := DefaultConfig()
	cfg.Repos = []string{repo}
	cfg.MaxFileBytes = 8 << 10
	res := generate(t, testPlan([]string{"typescript"}, []string{"whole_function"}, 5), cfg)
	wantFiles := map[string]int{SkipGenerated: 2, SkipMinified: 2, SkipBinary: 1, SkipOversized: 1, SkipSymlink: 1}
	if diff := cmp.Diff(wantFiles, res.Stats.SkippedFiles); diff != "" {
		t.Errorf("skipped files (-want +got):\n%s", diff)
	}
	wantDirs := map[string]int{SkipVendored: 2, SkipHidden: 1}
	if diff := cmp.Diff(wantDirs, res.Stats.SkippedDirs); diff != "" {
		t.Errorf("skipped dirs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"typescript": 1}, res.Stats.Indexed); diff != "" {
		t.Errorf("indexed (-want +got):\n%s", diff)
	}
	for _, c := range res.Configs {
		if c.File != "web/ok.ts" {
			t.Errorf("config on skipped file %s", c.File)
		}
	}
	if sum := res.Stats.Summary(); !strings.Contains(sum, "generated 2") || strings.Contains(sum, "map[") {
		t.Errorf("summary: %s", res.Stats.Summary())
	}
}

func TestUnfulfilledAndNoConfigs(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Repos = []string{"testdata/repos/go"}
	res := generate(t, testPlan([]string{"go", "java"}, []string{"inside_function"}, 3), cfg)
	if len(res.Configs) != 3 || res.Stats.Unfulfilled["java/inside_function"] != 3 {
		t.Errorf("configs %d, unfulfilled %v", len(res.Configs), res.Stats.Unfulfilled)
	}
	_, err := Generate(t.Context(), testPlan([]string{"java"}, []string{"idle"}, 2), cfg, nil)
	if !errors.Is(err, ErrNoConfigs) {
		t.Errorf("err = %v, want ErrNoConfigs", err)
	}
}

func TestFollowUpPolicy(t *testing.T) {
	pl := testPlan([]string{"go"}, []string{"inside_function"}, 20)
	for i := range pl.Cells {
		pl.Cells[i].Values["turns"] = "4"
		pl.Cells[i].Values["intent"] = "fix"
	}
	cfg := DefaultConfig()
	cfg.Repos = []string{"testdata/repos/go"}
	for _, c := range generate(t, pl, cfg).Configs {
		if c.FollowUp == nil || len(c.FollowUp.Kinds) != 3 || len(c.Turns) != 1 {
			t.Fatalf("%s: follow-up %+v, turns %d", c.ID, c.FollowUp, len(c.Turns))
		}
		// Each kind suits the turn before it: the fix, then the kind
		// before it; none twice in a row.
		prev := "fix"
		for _, k := range c.FollowUp.Kinds {
			if !slices.Contains(followUpKinds(prev), k) || k == prev {
				t.Errorf("%s: kind %q does not suit %s", c.ID, k, prev)
			}
			prev = k
		}
	}
}

func TestWriteConfigsIsJSONL(t *testing.T) {
	res := generate(t, defaultPlan(t, 20, 1), sampleConfig())
	data := encode(t, res.Configs)
	for i, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var c dialog.ChatConfig
		if err := json.Unmarshal(line, &c); err != nil || c.ID != res.Configs[i].ID {
			t.Fatalf("line %d: %v", i+1, err)
		}
	}
}
