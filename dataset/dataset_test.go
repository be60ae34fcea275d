package dataset

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"gopkg.in/yaml.v3"

	"dialogfarm/internal/golden"
	"dialogfarm/sft"
)

// combos are every format and metadata placement.
var combos = []struct{ format, meta string }{
	{sft.FormatOpenAI, sft.MetaNone}, {sft.FormatOpenAI, sft.MetaInline}, {sft.FormatOpenAI, sft.MetaSidecar},
	{sft.FormatShareGPT, sft.MetaNone}, {sft.FormatShareGPT, sft.MetaInline}, {sft.FormatShareGPT, sft.MetaSidecar},
}

// built holds the fixture's dataset folders, built once per test binary
// (TestMain removes them).
var built struct {
	sync.Mutex
	root string
	dirs map[string]string
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.root != "" {
		_ = os.RemoveAll(built.root)
	}
	os.Exit(code)
}

// buildAll builds the fixture's dataset folder for every combo, keyed by
// "format_meta". Tests only read them.
func buildAll(tb testing.TB) map[string]string {
	tb.Helper()
	built.Lock()
	defer built.Unlock()
	if built.dirs != nil {
		return built.dirs
	}
	root, err := os.MkdirTemp("", "dataset-test-")
	if err != nil {
		tb.Fatal(err)
	}
	built.root = root
	in := writeFixture(tb, root)
	out := map[string]string{}
	for _, c := range combos {
		name := c.format + "_" + c.meta
		dir := filepath.Join(root, name)
		if _, err := BuildFiles(context.Background(), in, dir, testOptions(c.format, c.meta)); err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
		out[name] = dir
	}
	built.dirs = out
	return out
}

func TestGoldenFolders(t *testing.T) {
	for name, dir := range buildAll(t) {
		t.Run(name, func(t *testing.T) {
			want := filepath.Join("testdata", name)
			got, _ := os.ReadDir(dir)
			var names []string
			for _, e := range got {
				names = append(names, e.Name())
				data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
				golden.Check(t, filepath.Join(want, e.Name()), data)
			}
			wantFiles, _ := os.ReadDir(want)
			for _, e := range wantFiles {
				if !slices.Contains(names, e.Name()) {
					t.Errorf("%s was not written", e.Name())
				}
			}
		})
	}
}

func TestStatsAndDrops(t *testing.T) {
	in := writeFixture(t, t.TempDir())
	st, err := BuildFiles(context.Background(), in, t.TempDir(), testOptions(sft.FormatOpenAI, sft.MetaInline))
	if err != nil {
		t.Fatal(err)
	}
	wantDropped := map[string]int{DropUnknownRole: 1, DropRoleOrder: 1, DropEmptyTurn: 1, DropTooLong: 1, DropExactDup: 1, DropNearDuplicate: 1}
	for r, n := range wantDropped {
		if st.Dropped[r] != n {
			t.Errorf("dropped %s: %d, want %d (all: %v)", r, st.Dropped[r], n, st.Dropped)
		}
	}
	// 5 sft records + 11 planted, of which 6 dropped.
	if st.Dialogues != 22 || st.Selected != 16 || st.Records != 10 {
		t.Errorf("dialogues %d, selected %d, records %d; want 22, 16, 10", st.Dialogues, st.Selected, st.Records)
	}
	if st.Splits[SplitTrain]+st.Splits[SplitValidation] != st.Records || st.Splits[SplitValidation] != 2 {
		t.Errorf("splits %v: want 8 train and 2 validation (0.8 of 10)", st.Splits)
	}
	if st.Tokens.Min <= 0 || st.Tokens.Max > 2000 || st.Tokens.Total < st.Tokens.Max {
		t.Errorf("tokens %+v", st.Tokens)
	}
}

func TestCardFrontMatter(t *testing.T) {
	for name, dir := range buildAll(t) {
		data, err := os.ReadFile(filepath.Join(dir, CardFile))
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		if !strings.HasPrefix(text, "---\n") {
			t.Fatalf("%s: card does not start with front-matter", name)
		}
		front, _, ok := strings.Cut(text[4:], "\n---\n")
		if !ok {
			t.Fatalf("%s: front-matter is not closed", name)
		}
		var meta struct {
			License        string   `yaml:"license"`
			TaskCategories []string `yaml:"task_categories"`
			SizeCategories []string `yaml:"size_categories"`
			Language       []string `yaml:"language"`
			Configs        []struct {
				ConfigName string                         `yaml:"config_name"`
				DataFiles  []struct{ Split, Path string } `yaml:"data_files"`
			} `yaml:"configs"`
			Dialogfarm map[string]any `yaml:"dialogfarm"`
		}
		dec := yaml.NewDecoder(strings.NewReader(front))
		dec.KnownFields(false)
		if err := dec.Decode(&meta); err != nil {
			t.Fatalf("%s: front-matter is not YAML: %v", name, err)
		}
		if meta.License != LicenseUnknown || !slices.Equal(meta.TaskCategories, []string{"text-generation"}) ||
			!slices.Equal(meta.SizeCategories, []string{"n<1K"}) || !slices.Equal(meta.Language, []string{"de", "en", "zh"}) {
			t.Errorf("%s: card metadata %+v", name, meta)
		}
		if len(meta.Configs) != 1 || len(meta.Configs[0].DataFiles) != 2 {
			t.Fatalf("%s: configs %+v", name, meta.Configs)
		}
		for i, split := range []string{SplitTrain, SplitValidation} {
			f := meta.Configs[0].DataFiles[i]
			if f.Split != split {
				t.Errorf("%s: data file %d is split %q, want %q", name, i, f.Split, split)
			}
			if _, err := os.Stat(filepath.Join(dir, f.Path)); err != nil {
				t.Errorf("%s: data file %s: %v", name, f.Path, err)
			}
		}
		for _, key := range []string{"version", "profile", "profile_hash", "judge_rubric_version", "redactions", "records", "keep", "provenance", "warnings", "dropped", "skipped", "splits"} {
			if _, ok := meta.Dialogfarm[key]; !ok {
				t.Errorf("%s: front-matter dialogfarm has no %s", name, key)
			}
		}
		if fmt.Sprint(meta.Dialogfarm["records"]) != "10" || fmt.Sprint(meta.Dialogfarm["judge_rubric_version"]) != "sha256:ba9876543210" {
			t.Errorf("%s: dialogfarm section %v", name, meta.Dialogfarm)
		}
	}
}

func TestDedupPlanted(t *testing.T) {
	in := writeFixture(t, t.TempDir())
	dir := t.TempDir()
	if _, err := BuildFiles(context.Background(), in, dir, testOptions(sft.FormatOpenAI, sft.MetaSidecar)); err != nil {
		t.Fatal(err)
	}
	ids := readIDs(t, dir)
	for _, id := range []string{"p01-explain", "p02-tests", "p03-docs", "p04-fix", "p11-nosystem", "d01-multi", "d02-zh", "d06-dup", "d07-cut", "d08-rejudged"} {
		if !ids[id] {
			t.Errorf("%s was dropped; it is distinct and valid", id)
		}
	}
	for _, id := range []string{"p05-exact", "p06-near"} {
		if ids[id] {
			t.Errorf("%s was kept; it duplicates p01-explain", id)
		}
	}
	// With near-duplicate removal off, p06 stays and p05 still goes.
	opt := testOptions(sft.FormatOpenAI, sft.MetaSidecar)
	opt.Dedup.Near = 0
	dir = t.TempDir()
	if _, err := BuildFiles(context.Background(), in, dir, opt); err != nil {
		t.Fatal(err)
	}
	ids = readIDs(t, dir)
	if !ids["p06-near"] || ids["p05-exact"] {
		t.Errorf("with --near-dup 0: p06 kept %v (want true), p05 kept %v (want false)", ids["p06-near"], ids["p05-exact"])
	}
}

// readIDs reads the ids of every record of a sidecar-metadata folder, and
// fails when an id is in more than one split.
func readIDs(tb testing.TB, dir string) map[string]bool {
	tb.Helper()
	ids := map[string]bool{}
	for _, f := range []string{TrainMeta, ValidationMeta} {
		for _, row := range readLines(tb, filepath.Join(dir, f)) {
			id := row["id"].(string)
			if ids[id] {
				tb.Errorf("%s is in more than one split", id)
			}
			ids[id] = true
		}
	}
	return ids
}

func TestDedupTexts(t *testing.T) {
	para := "The scheduler keeps a queue of ready tasks, picks the one with the earliest deadline, " +
		"runs it until it blocks or its slice ends, and then puts it back with its remaining budget."
	mk := func(id, user, answer string) *sample {
		s := &sample{}
		s.Meta.ID = id
		s.Messages = ask(user)
		s.Messages = append(s.Messages, sampleMsg("assistant", answer))
		return s
	}
	samples := []*sample{
		mk("a", "How does the scheduler work?", para),
		mk("b", "How does the scheduler work?", strings.Replace(para, "earliest", "nearest", 1)),
		mk("c", "How does the allocator work?", "The allocator hands out fixed-size blocks from per-size free lists and returns whole pages to the OS when a list empties."),
		mk("d", "How does  the Scheduler work?", para+" "),
	}
	drop := dedup(samples, DefaultDedup())
	want := map[int]string{1: DropNearDuplicate, 3: DropExactDup}
	if fmt.Sprint(drop) != fmt.Sprint(want) {
		t.Errorf("dedup %v, want %v", drop, want)
	}
	opt := DefaultDedup()
	opt.Near = 0.999
	if drop := dedup(samples, opt); drop[1] != "" {
		t.Errorf("at threshold 0.999 b is %q; it differs in one word", drop[1])
	}
}

func TestReadRunInfo(t *testing.T) {
	run := t.TempDir()
	if ri, err := ReadRunInfo(run); err != nil || ri.Profile != "" || ri.Redactions != nil {
		t.Fatalf("empty run folder: %+v, %v", ri, err)
	}
	must := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	must(filepath.Join(run, "run.json"), `{"profile":"p.yaml","profile_hash":"abc","n":3}`)
	must(filepath.Join(run, "sanitised", "redactions.json"), `{"secrets":2,"occurrences":3,"per_rule":{"aws-access-token":2}}`)
	ri, err := ReadRunInfo(run)
	if err != nil || ri.Profile != "p.yaml" || ri.ProfileHash != "abc" || fmt.Sprint(ri.Redactions["secrets"]) != "2" {
		t.Errorf("%+v, %v", ri, err)
	}
	must(filepath.Join(run, "redactions.json"), `{"repos":[{"source":"/home/me/private","dir":"/out/workspace/private"}],"total":{"secrets":4,"per_rule":{"jwt":4}}}`)
	if ri, _ := ReadRunInfo(run); fmt.Sprint(ri.Redactions["secrets"]) != "4" || ri.Redactions["repos"] != nil {
		t.Errorf("a run's redactions.json should give its total only: %+v", ri.Redactions)
	}
	must(filepath.Join(run, "report.json"), `{"redactions":{"secrets":5}}`)
	if ri, _ := ReadRunInfo(run); fmt.Sprint(ri.Redactions["secrets"]) != "5" {
		t.Errorf("report.json's redactions should come first: %+v", ri.Redactions)
	}
	must(filepath.Join(run, "run.json"), `{"profile":`)
	if _, err := ReadRunInfo(run); err == nil || !strings.Contains(err.Error(), "run.json") {
		t.Errorf("a broken run.json: %v", err)
	}
}

// TestFolderIsPrivate: the folder holds private code, so it is 0700 and
// its files 0600, as every run file (internal/runfiles).
func TestFolderIsPrivate(t *testing.T) {
	for _, dir := range buildAll(t) {
		info, err := os.Stat(dir)
		if err != nil || info.Mode().Perm() != 0o700 {
			t.Fatalf("%s: %v %v", dir, info.Mode(), err)
		}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if fi, _ := e.Info(); fi.Mode().Perm() != 0o600 {
				t.Errorf("%s/%s is %v", dir, e.Name(), fi.Mode().Perm())
			}
		}
	}
}

// TestBuildCancelled: a cancelled build returns the context's error and
// writes nothing.
func TestBuildCancelled(t *testing.T) {
	in := writeFixture(t, t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := filepath.Join(t.TempDir(), "ds")
	if _, err := BuildFiles(ctx, in, dir, testOptions(sft.FormatOpenAI, sft.MetaNone)); !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("a cancelled build wrote %s: %v", dir, err)
	}
}
