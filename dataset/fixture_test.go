package dataset

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dialogfarm/dialog"
)

// The fixture: the sft package's dialogues (testdata there; five of them
// give a record) plus dialogues planted for the gates, each answered by
// one pool member and scored 5.

const sysPrompt = "You are Ask, a coding assistant inside the VS Code editor. Use Markdown."

// planted builds a one-turn dialogue whose request holds msgs (the plugin's
// messages) and whose shown answer is answer.
func planted(tb testing.TB, id, intent, lang, locale string, msgs []dialog.Message, answer string) dialog.Dialogue {
	tb.Helper()
	body, err := json.Marshal(struct {
		Model    string           `json:"model"`
		Stream   bool             `json:"stream"`
		Messages []dialog.Message `json:"messages"`
	}{"ask-model", true, msgs})
	if err != nil {
		tb.Fatal(err)
	}
	user := ""
	if len(msgs) > 0 {
		user = msgs[len(msgs)-1].Content
	}
	return dialog.Dialogue{
		ConfigID: id, Status: dialog.StatusOK, Session: "sess-" + id,
		Config: dialog.ChatConfig{ID: id, Repo: "examples/sample-repo", Language: lang, Intent: intent, Locale: locale, Difficulty: "easy",
			QuerySource: dialog.QuerySourceLLM},
		Turns: []dialog.Turn{{Query: user, Shown: answer, Exchange: dialog.Exchange{
			Session: "sess-" + id, Seq: 1, Request: body, Answer: answer, Responder: "pool", Model: "model-a",
			Candidates: []dialog.Candidate{{Member: "a", Model: "model-a", Text: answer}},
			Verdicts:   []dialog.Verdict{{Candidate: 0, LLMScore: 5, Score: 5, Rank: 1, JudgeModel: "judge-model"}},
		}}},
	}
}

func ask(user string) []dialog.Message {
	return []dialog.Message{{Role: "system", Content: sysPrompt}, {Role: "user", Content: user}}
}

const pyCode = "def mean(xs):\n    return sum(xs) / len(xs)\n"

// plantedFixture are the dialogues planted for the gates; the comment on
// each says what the gates must do with it.
func plantedFixture(tb testing.TB) []dialog.Dialogue {
	tb.Helper()
	u := func(instr string) string {
		return "File: stats.py\nLanguage: python\nSelected code (lines 1-2):\n```python\n" + pyCode + "```\n\n" + instr
	}
	explain := "`mean` divides the sum of `xs` by its length, so it returns the arithmetic mean. " +
		"For an empty list `len(xs)` is 0 and the division raises `ZeroDivisionError`; guard it with " +
		"`if not xs: raise ValueError(\"mean of empty list\")` if you want a clearer error message."
	long := strings.Repeat("This sentence pads the answer far past the token limit of the test. ", 300)
	return []dialog.Dialogue{
		// Kept: distinct questions about the same file.
		planted(tb, "p01-explain", "explain", "python", "en", ask(u("What does this do?")), explain),
		planted(tb, "p02-tests", "tests", "python", "en", ask(u("Write pytest tests.")),
			"```python\nimport pytest\nfrom stats import mean\n\ndef test_mean():\n    assert mean([1, 2, 3]) == 2\n\ndef test_empty():\n    with pytest.raises(ZeroDivisionError):\n        mean([])\n```"),
		planted(tb, "p03-docs", "docs", "python", "de-DE", ask(u("Füge einen Docstring hinzu.")),
			"```python\ndef mean(xs):\n    \"\"\"Gibt den Mittelwert von xs zurück.\"\"\"\n    return sum(xs) / len(xs)\n```"),
		planted(tb, "p04-fix", "fix", "python", "en", ask(u("Fix the crash on empty input.")),
			"Return 0.0 for an empty list:\n\n```python\ndef mean(xs):\n    return sum(xs) / len(xs) if xs else 0.0\n```"),
		// Exact duplicate of p01 up to case and white space: dropped.
		planted(tb, "p05-exact", "explain", "python", "en", ask(strings.ToUpper(u("What does this do?"))),
			strings.ReplaceAll(explain, " ", "  ")),
		// Near duplicate of p01 (one word of the answer differs): dropped.
		planted(tb, "p06-near", "explain", "python", "en", ask(u("What does this do?")),
			strings.Replace(explain, "clearer", "better", 1)),
		// A "developer" role: dropped (unknown_role).
		planted(tb, "p07-developer", "explain", "python", "en",
			[]dialog.Message{{Role: "developer", Content: sysPrompt}, {Role: "user", Content: u("Explain briefly.")}}, "It averages xs."),
		// Two system messages: dropped (role_order).
		planted(tb, "p08-two-system", "explain", "python", "en",
			[]dialog.Message{{Role: "system", Content: sysPrompt}, {Role: "system", Content: "Answer in English."}, {Role: "user", Content: u("Explain in one line.")}},
			"It returns the average of the numbers."),
		// Blank user message: dropped (empty_turn).
		planted(tb, "p09-blank", "general", "python", "en", ask("  \n "), "Could you say what you need?"),
		// Over the token limit of the tests (2,000): dropped (too_long).
		planted(tb, "p10-long", "explain", "python", "en", ask(u("Explain at length.")), long),
		// No system prompt: kept (the system message is optional everywhere).
		planted(tb, "p11-nosystem", "general", "python", "zh-CN",
			[]dialog.Message{{Role: "user", Content: "Python 里 `sum` 的时间复杂度是多少？"}}, "`sum` 逐个相加，时间复杂度是 O(n)。"),
	}
}

// writeFixture writes the sft fixture and the planted dialogues to
// dir/dialogues.jsonl.
func writeFixture(tb testing.TB, dir string) string {
	tb.Helper()
	base, err := os.ReadFile(filepath.Join("..", "sft", "testdata", "dialogues.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	buf := bytes.NewBuffer(base)
	for _, d := range plantedFixture(tb) {
		enc := json.NewEncoder(buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(d); err != nil {
			tb.Fatal(err)
		}
	}
	path := filepath.Join(dir, "dialogues.jsonl")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// testOptions are the options the golden folders are built with.
func testOptions(format, meta string) Options {
	opt := DefaultOptions()
	opt.Export.Format, opt.Export.Meta = format, meta
	opt.Seed, opt.MaxTokens, opt.Split = 7, 2000, 0.8
	opt.Run = RunInfo{Version: "v0.0.0-test", Profile: "default", ProfileHash: "sha256:0123456789ab", RubricVersion: "sha256:ba9876543210",
		Redactions: map[string]any{"aws-access-token": 2, "generic-api-key": 1}}
	return opt
}
