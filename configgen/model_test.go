package configgen

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.uber.org/zap"

	"dialogfarm/configgen/coherence"
	"dialogfarm/dialog"
	"dialogfarm/internal/llmtest"
	"dialogfarm/pool"
)

// modelConfig is a gateway member asking the fake server once per call.
func modelConfig(url string) *pool.Member {
	cfg := pool.DefaultMemberConfig()
	cfg.Name, cfg.BaseURL, cfg.Model, cfg.Stream = "writer", url, "writer", false
	m, err := pool.NewMember(cfg, pool.Policy{Retry: pool.RetryConfig{MaxAttempts: 1}}, nil, zap.NewNop())
	if err != nil {
		panic(err)
	}
	return m
}

func TestModelWrittenQueries(t *testing.T) {
	srv := llmtest.New(t, func(r llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: "Query: \"why is this locked twice?\""}
	})
	pl := testPlan([]string{"go"}, []string{"inside_function", "whole_function"}, 4)
	pl.Cells[1].Values["instruction"] = "slash_command"
	pl.Cells[1].Values["locale"] = "zh"
	cfg := DefaultConfig()
	cfg.Repos = []string{"testdata/repos/go"}
	cfg.Model = modelConfig(srv.URL)
	cfg.CachePath = filepath.Join(t.TempDir(), "queries.json")
	res := generate(t, pl, cfg)
	for _, c := range res.Configs {
		if c.QuerySource != dialog.QuerySourceLLM {
			t.Errorf("%s: source %s", c.ID, c.QuerySource)
		}
		want := "why is this locked twice?"
		if c.Instruction == dialog.InstructionSlash {
			want = "/explain " + want
		}
		if c.Turns[0].Query != want {
			t.Errorf("%s: query %q, want %q", c.ID, c.Turns[0].Query, want)
		}
	}
	reqs := srv.Requests()
	if len(reqs) == 0 || len(reqs) > 8 {
		t.Fatalf("%d requests for 8 configs", len(reqs))
	}
	var sawZh bool
	for _, r := range reqs {
		user := r.LastUser()
		if !strings.Contains(user, "Code in view") || !strings.Contains(user, "File: src/queue.go") {
			t.Errorf("prompt lacks the code in view:\n%s", user)
		}
		if strings.Contains(user, "Write it in Simplified Chinese") {
			sawZh = true
			if !strings.Contains(user, "slash command /explain") {
				t.Errorf("slash prompt lacks the command:\n%s", user)
			}
		}
	}
	if !sawZh {
		t.Error("no prompt asked for Chinese")
	}
	// A second run hits the cache: same queries, no requests.
	before := len(srv.Requests())
	again := generate(t, pl, cfg)
	if len(srv.Requests()) != before {
		t.Errorf("cached run sent %d requests", len(srv.Requests())-before)
	}
	for i := range again.Configs {
		if again.Configs[i].Turns[0].Query != res.Configs[i].Turns[0].Query {
			t.Errorf("config %d changed on the cached run", i)
		}
	}
}

func TestModelFailuresFallBackMarked(t *testing.T) {
	srv := llmtest.New(t, func(r llmtest.Request) llmtest.Reply {
		if r.Seq%2 == 0 {
			return llmtest.Reply{Status: 400, Text: "bad request"}
		}
		return llmtest.Reply{Text: "what does this do"}
	})
	cfg := DefaultConfig()
	cfg.Repos = []string{"testdata/repos/go"}
	cfg.Model = modelConfig(srv.URL)
	cfg.Concurrency = 1
	res := generate(t, testPlan([]string{"go"}, []string{"inside_function"}, 6), cfg)
	failed := len(srv.Requests()) / 2 // identical prompts are answered from the cache
	if failed == 0 || res.Stats.ModelFallbacks != failed || res.Stats.QuerySources["template"] != failed ||
		res.Stats.QuerySources["llm"] != 6-failed {
		t.Errorf("%d failed requests, stats %+v", failed, res.Stats)
	}
	all := llmtest.New(t, func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Status: 401, Text: "no key"} })
	cfg.Model = modelConfig(all.URL)
	if _, err := Generate(context.Background(), testPlan([]string{"go"}, []string{"idle"}, 2), cfg, nil); err == nil {
		t.Error("want an error when every model request fails")
	}
}

func TestFollowUpWriterTemplates(t *testing.T) {
	w := NewFollowUpWriter(nil)
	if w.Source() != dialog.QuerySourceTemplate {
		t.Errorf("source %s", w.Source())
	}
	cfg := dialog.ChatConfig{ID: "c1", Locale: "zh", Turns: []dialog.TurnSpec{{Query: "q"}},
		FollowUp: &dialog.FollowUpPolicy{Kinds: []string{"clarify", "ask_tests"}}}
	turn := dialog.Turn{Query: "q", Shown: "answer"}
	wordings := func(kind string) []string {
		var out []string
		for _, v := range texts()["zh"].followUps[kind] {
			out = append(out, v.text)
		}
		return out
	}
	got1, err := w.Next(context.Background(), cfg, []dialog.Turn{turn})
	if err != nil || !slices.Contains(wordings("clarify"), got1) {
		t.Errorf("first follow-up %q, %v", got1, err)
	}
	// After an answer without code, only the wording that presupposes
	// nothing: "how would I test this?", never "tests for your code".
	got2, err := w.Next(context.Background(), cfg, []dialog.Turn{turn, turn})
	if err != nil || got2 != wordings("ask_tests")[0] {
		t.Errorf("second follow-up %q, %v", got2, err)
	}
	if _, err := w.Next(context.Background(), cfg, []dialog.Turn{turn, turn, turn}); !errors.Is(err, ErrNoFollowUp) {
		t.Errorf("after the policy: %v", err)
	}
	if _, err := w.Next(context.Background(), cfg, nil); err == nil {
		t.Error("no error before the first turn")
	}
	for loc, lt := range texts() {
		for _, k := range FollowUpKinds() {
			if len(lt.followUps[k]) == 0 || lt.followUps[k][0].needs != (coherence.Needs{}) {
				t.Errorf("%s: no template for %s that presupposes nothing first", loc, k)
			}
		}
	}
}

func TestFollowUpWriterModel(t *testing.T) {
	srv := llmtest.New(t, llmtest.Fixed("\"Can you add a test for the empty queue?\"\n"))
	w := NewFollowUpWriter(modelConfig(srv.URL))
	long := strings.Repeat("x", 5000) + "THE END"
	cfg := dialog.ChatConfig{ID: "c2", File: "src/queue.go", Language: "go", Locale: "de", QueryStyle: "terse",
		Turns: []dialog.TurnSpec{{Query: "fix Pop"}}, FollowUp: &dialog.FollowUpPolicy{Kinds: []string{"ask_tests"}}}
	got, err := w.Next(context.Background(), cfg, []dialog.Turn{{Query: "fix Pop", Shown: long}})
	if err != nil || got != "Can you add a test for the empty queue?" {
		t.Fatalf("Next = %q, %v", got, err)
	}
	req := srv.Requests()[0]
	sys, user := req.Messages[0].Content, req.LastUser()
	for _, want := range []string{"src/queue.go", "Write in German", "a few words"} {
		if !strings.Contains(sys, want) {
			t.Errorf("system prompt lacks %q: %s", want, sys)
		}
	}
	for _, want := range []string{"Developer: fix Pop", "THE END", "ask for tests"} {
		if !strings.Contains(user, want) {
			t.Errorf("user prompt lacks %q", want)
		}
	}
	if strings.Count(user, "x") > maxAnswerChars+10 {
		t.Error("long answer not truncated")
	}
}

func TestQueryCacheSurvivesATornLine(t *testing.T) {
	srv := llmtest.New(t, func(r llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: "question " + r.LastUser()[len(r.LastUser())-12:]}
	})
	cfg := DefaultConfig()
	cfg.Repos = []string{"testdata/repos/python"}
	cfg.Model = modelConfig(srv.URL)
	cfg.CachePath = filepath.Join(t.TempDir(), "queries.jsonl")
	pl := testPlan([]string{"python"}, []string{"inside_function", "partial_block"}, 5)
	first := generate(t, pl, cfg)
	asked := len(srv.Requests())
	data, err := os.ReadFile(cfg.CachePath)
	if err != nil || bytes.Count(data, []byte("\n")) != asked {
		t.Fatalf("cache has %d lines for %d answers (%v)", bytes.Count(data, []byte("\n")), asked, err)
	}
	// Killed while appending the last answer: half a line.
	os.WriteFile(cfg.CachePath, data[:len(data)-20], 0o644)
	second := generate(t, pl, cfg)
	if n := len(srv.Requests()) - asked; n != 1 {
		t.Errorf("rerun sent %d requests, want 1 (the torn entry)", n)
	}
	if !bytes.Equal(encode(t, first.Configs), encode(t, second.Configs)) {
		t.Error("configs changed after the rerun")
	}
}

// TestIncoherentModelQueriesReplaced: a model query that names a file
// and a function the request does not show is replaced by the template
// query and counted; a coherent one is kept.
func TestIncoherentModelQueriesReplaced(t *testing.T) {
	srv := llmtest.New(t, func(r llmtest.Request) llmtest.Reply {
		if strings.Contains(r.LastUser(), "Push(") {
			return llmtest.Reply{Text: "why does this call parseHeader() from headers.go?"}
		}
		return llmtest.Reply{Text: "why is this locked twice?"}
	})
	pl := testPlan([]string{"go"}, []string{"whole_function"}, 6)
	cfg := DefaultConfig()
	cfg.Repos = []string{"testdata/repos/go"}
	cfg.Model = modelConfig(srv.URL)
	res := generate(t, pl, cfg)
	replaced := 0
	for _, c := range res.Configs {
		q := c.Turns[0].Query
		if strings.Contains(q, "parseHeader") {
			t.Errorf("%s: incoherent model query kept: %q", c.ID, q)
		}
		if c.QuerySource == dialog.QuerySourceTemplate {
			replaced++
		}
	}
	if replaced == 0 || res.Stats.ModelIncoherent != replaced || res.Stats.QuerySources["llm"] != len(res.Configs)-replaced {
		t.Errorf("replaced %d, stats %+v", replaced, res.Stats)
	}
}
