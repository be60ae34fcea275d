package main

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"dialogfarm/dataset"
	"dialogfarm/dialog"
)

// TestEveryNumericFlagHasARange walks every command: each numeric flag
// must have its range in flagRanges (so it is checked as it is parsed),
// and its default must lie in it (n's 0 means "required").
func TestEveryNumericFlagHasARange(t *testing.T) {
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if !numericFlag(f) {
				return
			}
			rv, ok := f.Value.(*rangedValue)
			if !ok {
				t.Errorf("%s --%s (%s) has no range in flagRanges", c.CommandPath(), f.Name, f.Value.Type())
				return
			}
			if f.Name != "n" && rv.check() != nil {
				t.Errorf("%s --%s: default %s is out of its own range %s", c.CommandPath(), f.Name, f.DefValue, rv.r.Range)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRoot(&app{}))
}

// TestNumbersOutOfRange feeds numbers out of range, NaN and infinities
// through the command line, environment variables and the config file,
// to every kind of numeric flag and to the judge's and the pool's params,
// and checks each is refused naming where it came from, the setting and
// its range.
func TestNumbersOutOfRange(t *testing.T) {
	dir := t.TempDir()
	file := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	export := []string{"export", "--in", filepath.Join(dir, "none.jsonl"), "--out", filepath.Join(dir, "o.jsonl")}
	plan := []string{"plan", "--profile", "default", "--out", filepath.Join(dir, "plan.json")}
	judgeArgs := []string{"judge", "--in", filepath.Join(dir, "none.jsonl"), "--out", filepath.Join(dir, "j.jsonl")}
	judgeYAML := file("judge.yaml", "judge:\n  max_retries: -3\n  params: {min_chars: -5, verbatim_share: 7}\n  rules: {too_long: {weight: -100}}\n")
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want []string
	}{
		{"min-score NaN", append(export, "--min-score", "NaN"), nil, []string{"--min-score is NaN, want 0 to 5", "judge scores are 1 to 5"}},
		{"min-score 9", append(export, "--min-score", "9"), nil, []string{"--min-score is 9, want 0 to 5"}},
		{"min-score Inf by env", export, map[string]string{"DIALOGFARM_MIN_SCORE": "+Inf"},
			[]string{`environment variable DIALOGFARM_MIN_SCORE="+Inf"`, "--min-score is +Inf, want 0 to 5"}},
		{"min-score by file", append(export, "--config", file("score.yaml", "min-score: 9\n")), nil,
			[]string{"config file " + filepath.Join(dir, "score.yaml"), "key min-score", "--min-score is 9, want 0 to 5"}},
		// A profile that does not exist: without the ceiling the command
		// fails at once for another reason, rather than planning 2e9.
		{"plan n ceiling", []string{"plan", "--profile", "no-such-profile", "--out", filepath.Join(dir, "p.json"), "--n", "2000000000"}, nil,
			[]string{"--n is 2000000000, want 1 to 1000000", "several runs"}},
		{"split 0", append(export, "--split", "0"), nil, []string{"--split is 0, want 0.01 to 1"}},
		{"dedup-near NaN", append(export, "--dedup-near", "nan"), nil, []string{"--dedup-near is NaN, want 0 to 1"}},
		{"max-tokens negative", append(export, "--max-tokens", "-1"), nil, []string{"--max-tokens is -1, want 0 to 2147483648"}},
		{"seed beyond 2^53", append(plan, "--n", "3", "--seed", "9007199254740993"), nil, []string{"--seed is 9007199254740993, want 0 to 9007199254740992"}},
		{"jobs 0", append(judgeArgs, "--jobs", "0"), nil, []string{"--jobs is 0, want 1 to 64"}},
		{"resamples", []string{"judge-eval", "--judged", "x", "--labels", "y", "--resamples", "10"}, nil, []string{"--resamples is 10, want 1000 to 1000000"}},
		{"duration 0", []string{"drive", "--configs", "x", "--out", dir, "--answer-timeout", "0s"}, nil, []string{"--answer-timeout is 0s, want 1s to 24h0m0s"}},
		{"start-spacing", []string{"drive", "--root", repoRoot, "--configs", repoRoot + "/examples/demo-configs.jsonl", "--out", filepath.Join(dir, "run"), "--start-spacing", "-1s"}, nil, []string{`--start-spacing "-1s": want auto, 0 or a duration`}},
		{"sessions", []string{"drive", "--configs", "x", "--out", filepath.Join(dir, "run"), "--sessions", "5000"}, nil, []string{"--sessions is 5000, want 0 to 64"}},
		{"judge params in the file", append(judgeArgs, "--config", judgeYAML), nil, []string{
			"config file " + judgeYAML, "judge config", "max_retries is -3, want 0 to 10", "params.min_chars is -5, want 0 to 100000",
			"params.verbatim_share is 7, want 0 to 1", "rules.too_long.weight is -100, want 0 to 5"}},
		{"judge param by env", judgeArgs, map[string]string{"DIALOGFARM_JUDGE_PARAMS_VERBATIM_SHARE": "NaN"},
			[]string{"environment variable DIALOGFARM_JUDGE_PARAMS_VERBATIM_SHARE", "params.verbatim_share is NaN, want 0 to 1"}},
		{"judge param by --set", append(judgeArgs, "--set", "judge.rules.near_empty.weight=-1"), nil,
			[]string{"--set judge.rules.near_empty.weight=-1", "rules.near_empty.weight is -1, want 0 to 5"}},
		{"pool param in the file", append(judgeArgs, "--config", file("pool.yaml", "pool:\n  retry: {max_attempts: 0}\n  members: [{name: a, base_url: 'http://127.0.0.1:1/v1', model: m, temperature: 9}]\n")), nil,
			[]string{"pool config", "retry.max_attempts is 0, want 1 to 100", "members.0.temperature is 9, want 0 to 2"}},
		{"judge endpoint by env", judgeArgs, map[string]string{"DIALOGFARM_JUDGE_ENDPOINT_MODEL": "j", "DIALOGFARM_JUDGE_ENDPOINT_BASE_URL": "https://api.openai.com/v1", "DIALOGFARM_JUDGE_ENDPOINT_MAX_CONCURRENCY": "-2"},
			[]string{"DIALOGFARM_JUDGE_ENDPOINT_MAX_CONCURRENCY", "endpoint: max_concurrency is -2, want 1 to 1024"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), c.args, &stdout, &stderr)
			if err == nil {
				t.Fatalf("dialogfarm %s succeeded, want an error", strings.Join(c.args, " "))
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// TestSingleFileExportAppliesMaxTokens exports the same dialogues to a
// single file and to a dataset folder with a --max-tokens that the
// longest records pass: both leave the same records out.
func TestSingleFileExportAppliesMaxTokens(t *testing.T) {
	in := fixtureDialogues(t)
	dir := filepath.Dir(in)
	args := func(out string, extra ...string) []string {
		return append([]string{"export", "--in", in, "--out", out, "--meta", "none", "--min-score", "1", "--dedup-exact=false", "--dedup-near", "0"}, extra...)
	}
	all := filepath.Join(dir, "all.jsonl")
	if _, err := runPoolCLI(t, args(all, "--max-tokens", "0")...); err != nil {
		t.Fatal(err)
	}
	tok, err := dataset.NewTokenizer(dataset.DefaultOptions().Tokenizer)
	if err != nil {
		t.Fatal(err)
	}
	var counts []int
	for _, line := range strings.Split(strings.TrimSpace(string(readTestFile(t, all))), "\n") {
		var rec struct{ Messages []dialog.Message }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		counts = append(counts, tok.CountMessages(rec.Messages))
	}
	limit := 0 // the smallest count: every longer record is dropped
	for i, n := range counts {
		if i == 0 || n < limit {
			limit = n
		}
	}
	longer := 0
	for _, n := range counts {
		if n > limit {
			longer++
		}
	}
	if longer == 0 {
		t.Fatalf("the fixture's %d records all have %d tokens", len(counts), limit)
	}
	single := filepath.Join(dir, "single.jsonl")
	text, err := runPoolCLI(t, args(single, "--max-tokens", itoa(limit))...)
	if err != nil {
		t.Fatal(err)
	}
	kept := len(counts) - longer
	if got := strings.Count(string(readTestFile(t, single)), "\n"); got != kept || !strings.Contains(text, "skipped "+itoa(longer)+": too_long") {
		t.Errorf("single file with --max-tokens %d: %d records, want %d; output:\n%s", limit, got, kept, text)
	}
	folder := filepath.Join(dir, "ds")
	text, err = runPoolCLI(t, args(folder, "--max-tokens", itoa(limit), "--split", "1")...)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(readTestFile(t, filepath.Join(folder, "train.jsonl"))), "\n"); got != kept || !strings.Contains(text, "dropped "+itoa(longer)+": too_long") {
		t.Errorf("dataset folder with --max-tokens %d: %d records, want %d; output:\n%s", limit, got, kept, text)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestUnknownDialogfarmVariables sets DIALOGFARM_* variables that name no
// setting: each is an error naming the closest setting. A variable an
// api_key_env names, and the project's own script variables, are not.
func TestUnknownDialogfarmVariables(t *testing.T) {
	plan := []string{"plan", "--profile", "default", "--n", "3", "--out", filepath.Join(t.TempDir(), "plan.json")}
	for typo, want := range map[string]string{
		"DIALOGFARM_JUGDE_ENDPOINT_MODEL": "environment variable DIALOGFARM_JUGDE_ENDPOINT_MODEL names no setting; did you mean DIALOGFARM_JUDGE_ENDPOINT_MODEL?",
		"DIALOGFARM_MIN_SCROE":            "did you mean DIALOGFARM_MIN_SCORE?",
		"DIALOGFARM_SESIONS":              "did you mean DIALOGFARM_SESSIONS?",
		"DIALOGFARM_WHATEVER":             "DIALOGFARM_WHATEVER names no setting (a flag --NAME",
	} {
		t.Run(typo, func(t *testing.T) {
			t.Setenv(typo, "4")
			if _, err := runPoolCLI(t, plan...); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: err = %v, want %q", typo, err, want)
			}
		})
	}
	t.Setenv("DIALOGFARM_CHAOS_KILLS", "2")
	t.Setenv("DIALOGFARM_MY_MODEL_KEY", "sk-x")
	cfg := writePoolYAML(t, "judge:\n  endpoint: {base_url: \"https://api.example/v1\", model: j, api_key_env: DIALOGFARM_MY_MODEL_KEY}\n")
	if _, err := runPoolCLI(t, append(plan, "--config", cfg)...); err != nil {
		t.Errorf("a script's variable and a key variable: %v", err)
	}
}

// rangesRE finds the generated ranges table of docs/configuration.md.
var rangesRE = regexp.MustCompile(`(?s)<!-- ranges -->\n(.*?)<!-- end ranges -->\n`)

// rangesTable renders flagRanges as a Markdown table, by flag name.
func rangesTable() string {
	ranges := flagRanges()
	var b strings.Builder
	b.WriteString("| flag | range | why |\n| --- | --- | --- |\n")
	for _, name := range slices.Sorted(maps.Keys(ranges)) {
		r := ranges[name]
		rng := r.Range.String()
		for _, w := range r.words {
			rng += ", or `" + w + "`"
		}
		b.WriteString("| `--" + name + "` | " + rng + " | " + r.why + " |\n")
	}
	return b.String()
}

// TestDocsRanges keeps the ranges table of docs/configuration.md in step
// with flagRanges (-update rewrites it).
func TestDocsRanges(t *testing.T) {
	path := repoRoot + "/docs/configuration.md"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := rangesRE.FindSubmatch(data)
	if m == nil {
		t.Fatalf("%s has no <!-- ranges --> table", path)
	}
	want := rangesTable()
	if string(m[1]) == want {
		return
	}
	if !*update {
		t.Fatalf("%s: the ranges table differs from flagRanges (run go test ./cmd/dialogfarm -run TestDocsRanges -update):\n got:\n%s\nwant:\n%s", path, m[1], want)
	}
	doc := rangesRE.ReplaceAll(data, []byte("<!-- ranges -->\n"+want+"<!-- end ranges -->\n"))
	if err := os.WriteFile(path, doc, 0o644); err != nil {
		t.Fatal(err)
	}
}
