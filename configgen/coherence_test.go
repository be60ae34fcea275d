package configgen

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"dialogfarm/analyst"
	"dialogfarm/configgen/coherence"
	"dialogfarm/dialog"
	"dialogfarm/dialog/vocab"
	"dialogfarm/profiles"
)

// uniformPlan plans n dialogues over the default profile with every
// locale, query style and turn count (up to 4) equally likely, so that
// every template of every locale is drawn.
func uniformPlan(tb testing.TB, n int, seed int64) *profiles.Plan {
	tb.Helper()
	p, err := profiles.Builtin("default")
	if err != nil {
		tb.Fatal(err)
	}
	for _, dim := range []string{vocab.DimLocale, vocab.DimQueryStyle} {
		var ws []profiles.Weight
		for _, v := range vocab.Values(dim) {
			ws = append(ws, profiles.Weight{Value: v, Weight: 1})
		}
		p.Dimensions[dim] = ws
	}
	p.Dimensions[vocab.DimTurns] = []profiles.Weight{{Value: "1", Weight: 1}, {Value: "2", Weight: 1}, {Value: "3", Weight: 1}, {Value: "4", Weight: 1}}
	pl, err := analyst.MakePlan(p, analyst.PlanConfig{N: n, Seed: seed})
	if err != nil {
		tb.Fatal(err)
	}
	return pl
}

// coherenceRepos are the repositories the checker test draws from: five
// languages, files that import each other, and a single-file repository.
var coherenceRepos = []string{"../examples/sample-repo", "testdata/repos/go", "testdata/repos/java",
	"testdata/repos/javascript", "testdata/repos/python", "testdata/repos/typescript"}

// contextOf rebuilds, independently of Generate, what the plugin sends
// with a config's first query (coherence.ContextOf on the file as it is
// on disk), with every other file of the repository as a file the query
// may quote. repos caches the files read, by repository.
func contextOf(tb testing.TB, c dialog.ChatConfig, contextLines int, repos map[string]map[string]string) coherence.Context {
	tb.Helper()
	files, ok := repos[c.Repo]
	if !ok {
		files = map[string]string{}
		err := filepath.WalkDir(c.Repo, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || extLanguage(p) == "" {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(c.Repo, p)
			files[filepath.ToSlash(rel)] = string(data)
			return nil
		})
		if err != nil {
			tb.Fatal(err)
		}
		repos[c.Repo] = files
	}
	src, ok := files[c.File]
	if !ok {
		tb.Fatalf("%s: file %s not in %s", c.ID, c.File, c.Repo)
	}
	ctx := coherence.ContextOf(c, src, contextLines)
	ctx.Files = files // the open file among them changes nothing: it is ctx.File
	return ctx
}

// answers are the answers a follow-up may follow: one that shows code
// (and, for an intent that changes code, changes it) and one of prose.
var answers = []string{
	"Here is a version that does it:\n```\nresult = compute(values)\n```\nIt keeps the behaviour.",
	"It walks the list once and returns the total; nothing in it needs to change.",
}

// TestCoherence10k: over 10,000 generated configs in every locale,
// reference and query style, the checker, given the context rebuilt from
// the files, finds nothing in any first query, and nothing in any
// follow-up the template writer writes after an answer with code or
// without; and Generate had nothing to regenerate or drop.
func TestCoherence10k(t *testing.T) {
	n := 10000
	if raceEnabled {
		n = 2500 // `make test` runs the 10,000 without the race detector too
	}
	cfg := DefaultConfig()
	cfg.Repos = coherenceRepos
	res := generate(t, uniformPlan(t, n, 11), cfg)
	if len(res.Configs) < n*95/100 {
		t.Fatalf("%d configs for %d planned", len(res.Configs), n)
	}
	files := map[string]map[string]string{}
	byRule := map[string]int{}
	examples := map[string][]string{}
	note := func(c dialog.ChatConfig, f coherence.Finding) {
		byRule[f.Rule]++
		if len(examples[f.Rule]) < 3 {
			examples[f.Rule] = append(examples[f.Rule], fmt.Sprintf("%s (%s, %s, %s): %s", c.ID, c.Locale, c.Reference, c.QueryStyle, f))
		}
	}
	w := NewFollowUpWriter(nil)
	followUps := 0
	checked := map[string][]coherence.Finding{}
	for _, c := range res.Configs {
		ctx := contextOf(t, c, cfg.ContextLines, files)
		for _, f := range coherence.CheckQuery(c.Turns[0].Query, ctx) {
			note(c, f)
		}
		if c.FollowUp == nil {
			continue
		}
		for _, answer := range answers {
			history := []dialog.Turn{{Query: c.Turns[0].Query, Shown: answer}}
			prevIntent := c.Intent
			for k := range c.FollowUp.Kinds {
				text, needs, err := w.next(context.Background(), c, history)
				if errors.Is(err, ErrNoFollowUp) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				followUps++
				// The same wording after the same kind of turn is checked once.
				key := fmt.Sprint(prevIntent, "\x00", answer, "\x00", text, "\x00", needs)
				found, ok := checked[key]
				if !ok {
					found = coherence.CheckFollowUp(coherence.Turn{Intent: prevIntent, Answer: answer}, text, needs)
					checked[key] = found
				}
				for _, f := range found {
					note(c, f)
				}
				prevIntent = c.FollowUp.Kinds[k]
				history = append(history, dialog.Turn{Query: text, Shown: answer})
			}
		}
	}
	t.Logf("%d configs, %d template follow-ups checked; generation stats: incoherent %v, regenerated %d, dropped %d",
		len(res.Configs), followUps, res.Stats.Incoherent, res.Stats.Regenerated, res.Stats.IncoherentDropped)
	for _, rule := range slices.Sorted(maps.Keys(byRule)) {
		t.Errorf("%s: %d findings, e.g.:\n  %s", rule, byRule[rule], strings.Join(examples[rule], "\n  "))
	}
	if res.Stats.Regenerated+res.Stats.IncoherentDropped > 0 {
		t.Errorf("Generate regenerated %d and dropped %d template queries: the templates are not coherent by construction",
			res.Stats.Regenerated, res.Stats.IncoherentDropped)
	}
}
