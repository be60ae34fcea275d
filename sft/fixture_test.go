package sft

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"dialogfarm/dialog"
	"dialogfarm/internal/golden"
)

// The fixture: dialogues as the driver records them, with request bodies
// built the way the reference plugin builds them. It is written to
// testdata/dialogues.jsonl (a golden file itself, so it can be read and fed
// to the CLI by hand).

const systemPrompt = "You are Ask, a coding assistant inside the VS Code editor. Use Markdown."

// pluginBody is a request body in the plugin's key order.
func pluginBody(tb testing.TB, history []dialog.Message, user string) json.RawMessage {
	tb.Helper()
	msgs := append([]dialog.Message{{Role: "system", Content: systemPrompt}}, history...)
	msgs = append(msgs, dialog.Message{Role: "user", Content: user})
	body, err := json.Marshal(struct {
		Model       string           `json:"model"`
		Stream      bool             `json:"stream"`
		Temperature float64          `json:"temperature"`
		Messages    []dialog.Message `json:"messages"`
	}{"ask-model", true, 0.2, msgs})
	if err != nil {
		tb.Fatal(err)
	}
	return body
}

func userMsg(file, lang, code, instruction string) string {
	return "File: " + file + "\nLanguage: " + lang + "\nCursor: line 2, column 5\nSelected code (lines 1-3):\n```" +
		lang + "\n" + code + "\n```\n\n" + instruction
}

// turn is one exchange: the shown answer and its verdict score, plus a
// rival candidate scored rival.
type turn struct {
	user, answer string
	score, rival float64
	// shownRank2 makes the shown answer rank 2 (as after a re-judge).
	shownRank2 bool
	rulesOnly  bool
	// judgeErr makes the shown answer's verdict a rules-only fallback
	// after the judge model failed.
	judgeErr string
	err      string
	// history overrides the history the plugin sent (nil: the kept turns).
	history []dialog.Message
}

func build(tb testing.TB, id, intent, lang, locale string, turns ...turn) dialog.Dialogue {
	tb.Helper()
	d := dialog.Dialogue{
		ConfigID: id, Status: dialog.StatusOK, Session: "sess-" + id,
		Config: dialog.ChatConfig{ID: id, Repo: "examples/sample-repo", Language: lang, Intent: intent, Locale: locale, Difficulty: "medium",
			QuerySource: dialog.QuerySourceTemplate},
		StartedAt: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC),
	}
	var history []dialog.Message
	for i, t := range turns {
		h := history
		if t.history != nil {
			h = t.history
		}
		ex := dialog.Exchange{
			Session: d.Session, Seq: i + 1, Request: pluginBody(tb, h, t.user), Answer: t.answer,
			Responder: "pool", Model: "model-a", Error: t.err,
			Candidates: []dialog.Candidate{
				{Member: "a", Model: "model-a", Text: t.answer, PromptTokens: 120, CompletionTokens: 40},
				{Member: "b", Model: "model-b", Text: "rival answer " + t.answer, PromptTokens: 120, CompletionTokens: 44},
			},
			Received: d.StartedAt.Add(time.Duration(i) * time.Minute),
		}
		shown := dialog.Verdict{Candidate: 0, LLMScore: int(t.score), Score: t.score, Rank: 1, RulesOnly: t.rulesOnly, JudgeModel: "judge-model"}
		rival := dialog.Verdict{Candidate: 1, LLMScore: int(t.rival), Score: t.rival, Rank: 2, JudgeModel: "judge-model"}
		if t.rulesOnly || t.judgeErr != "" {
			shown.LLMScore, shown.JudgeModel, shown.RulesOnly, shown.JudgeError = 0, "", true, t.judgeErr
		}
		if t.score < 5 && t.score > 0 {
			shown.LLMScore = 5
			shown.Deductions = []dialog.Deduction{{Rule: "missing_code_block", Weight: 5 - t.score, Reason: "intent needs code but the answer has no code block"}}
		}
		if t.shownRank2 {
			shown.Rank, rival.Rank = 2, 1
		}
		if t.score == 0 {
			shown = dialog.Verdict{Candidate: 0, Unparsable: true, LLMReason: "unparseable judge output", Rank: 2}
		}
		ex.Verdicts = []dialog.Verdict{shown, rival}
		d.Turns = append(d.Turns, dialog.Turn{Query: t.user, Exchange: ex, Shown: t.answer})
		history = append(append(history, dialog.Message{Role: "user", Content: t.user}), dialog.Message{Role: "assistant", Content: t.answer})
	}
	return d
}

const goCode = "func Sum(xs []int) int {\n\ttotal := 0\n\tfor _, x := range xs {\n\t\ttotal += x\n\t}\n\treturn total\n}"

// fixture is the dialogues file's content, in an unsorted order.
func fixture(tb testing.TB) []dialog.Dialogue {
	tb.Helper()
	u := func(instruction string) string { return userMsg("mathx/sum.go", "go", goCode, instruction) }
	a1 := "It adds up every element of `xs` and returns the total; an empty slice gives 0."
	a2 := "Yes: for a nil slice `range` does no iteration, so `total` stays 0.\n\n```go\nfmt.Println(Sum(nil)) // 0\n```"
	offline := build(tb, "d04-offline", "explain", "go", "en", turn{user: u("Explain."), answer: "[offline placeholder] you asked about mathx/sum.go", score: 0})
	offline.Offline, offline.Turns[0].Offline, offline.Turns[0].Responder = true, true, "offline"
	offline.Turns[0].Candidates, offline.Turns[0].Verdicts = nil, nil
	failed := build(tb, "d05-failed", "fix", "go", "en", turn{user: u("Fix it."), answer: "Fixed.", score: 5})
	failed.Status, failed.Error, failed.FailedStep = dialog.StatusFailed, "answer never finished streaming", "wait_answer"
	multi := build(tb, "d01-multi", "explain", "go", "en",
		turn{user: u("What does this do?"), answer: a1, score: 5, rival: 4},
		turn{user: "Does it work for a nil slice?", answer: a2, score: 5, rival: 5},
		turn{user: "Make it generic.", answer: "Use generics.", score: 3, rival: 4},
	)
	multi.Config.QuerySource = dialog.QuerySourceLLM
	return []dialog.Dialogue{
		build(tb, "d06-dup", "explain", "go", "en", turn{user: u("Explain."), answer: "Sums the numbers.", score: 3, rival: 2}),
		multi,
		build(tb, "d02-zh", "generate", "go", "zh", turn{
			user:   userMsg("mathx/sum.go", "go", goCode, "写一个函数，返回切片中所有 x < 10 && x > 0 的元素之和。"),
			answer: "可以这样写：\n\n```go\nfunc SumSmall(xs []int) int {\n\ttotal := 0\n\tfor _, x := range xs {\n\t\tif x < 10 && x > 0 {\n\t\t\ttotal += x\n\t\t}\n\t}\n\treturn total\n}\n```",
			score:  5, rival: 5, rulesOnly: true,
		}),
		build(tb, "d03-low", "fix", "go", "en", turn{user: u("Fix the overflow."), answer: "Use int64.", score: 4, rival: 3}),
		offline,
		failed,
		build(tb, "d06-dup", "explain", "go", "en", turn{user: u("Explain."), answer: "It returns the sum of the slice's elements, 0 when it is empty.", score: 5, rival: 2}),
		build(tb, "d07-cut", "explain", "go", "en",
			turn{user: u("Explain."), answer: "It sums xs.\n\nNothing else happens.", score: 5, rival: 4},
			turn{user: "And for negatives?", answer: "Negatives are added like any other number.", score: 5, rival: 4,
				history: []dialog.Message{{Role: "user", Content: u("Explain.")}, {Role: "assistant", Content: "It sums xs."}}},
		),
		build(tb, "d08-rejudged", "explain", "go", "en", turn{user: u("Explain briefly."), answer: "Returns the total of xs.", score: 5, rival: 5, shownRank2: true,
			judgeErr: "judge model: 429 Too Many Requests"}),
		build(tb, "d09-unparseable", "explain", "go", "en", turn{user: u("Explain."), answer: "Sums.", score: 0, rival: 4}),
		build(tb, "d10-error", "explain", "go", "en", turn{user: u("Explain."), answer: "", score: 5, err: "responder pool: no pool member answered"}),
	}
}

// writeFixture writes the fixture as JSONL to path and checks it against
// testdata/dialogues.jsonl (rewriting that with -update).
func writeFixture(tb testing.TB, dir string) string {
	tb.Helper()
	var buf bytes.Buffer
	for _, d := range fixture(tb) {
		if err := writeJSONLine(&buf, d); err != nil {
			tb.Fatal(err)
		}
	}
	golden.Check(tb, filepath.Join("testdata", "dialogues.jsonl"), buf.Bytes())
	path := filepath.Join(dir, "dialogues.jsonl")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}
