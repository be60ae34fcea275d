package configgen

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"

	"dialogfarm/configgen/coherence"
	"dialogfarm/dialog"
)

// ErrNoFollowUp is returned by FollowUpWriter.Next when the dialogue
// already has every turn its config asks for.
var ErrNoFollowUp = errors.New("configgen: the config asks for no further follow-up")

// FollowUpWriter writes the follow-up turns of a dialogue at run time,
// after the plugin has shown an answer: with a model it plays the
// developer (a user simulator prompted with the conversation so far, the
// config's locale and style, and the follow-up kind the config's policy
// names for this turn); without one it uses the kind's template in the
// config's locale. Safe for concurrent use.
type FollowUpWriter struct {
	chat Model
	t    *templater
}

// NewFollowUpWriter builds a writer that asks m; a nil m gives a template
// writer.
func NewFollowUpWriter(m Model) *FollowUpWriter {
	return &FollowUpWriter{t: newTemplater(), chat: m}
}

// Source says who writes the follow-ups: dialog.QuerySourceLLM or
// dialog.QuerySourceTemplate.
func (w *FollowUpWriter) Source() string {
	if w.chat != nil {
		return dialog.QuerySourceLLM
	}
	return dialog.QuerySourceTemplate
}

// Next returns the developer's next message, given the turns done so far
// (the pre-written ones first). It returns ErrNoFollowUp when the policy
// has no more turns, and the model's error (never a silent template) when
// a configured model fails.
func (w *FollowUpWriter) Next(ctx context.Context, cfg dialog.ChatConfig, history []dialog.Turn) (string, error) {
	text, _, err := w.next(ctx, cfg, history)
	return text, err
}

// next returns the follow-up, and what its wording presupposes of the
// answer before it (nothing for a model's, which the prompt conditions).
func (w *FollowUpWriter) next(ctx context.Context, cfg dialog.ChatConfig, history []dialog.Turn) (string, coherence.Needs, error) {
	k := len(history) - len(cfg.Turns)
	if k < 0 {
		return "", coherence.Needs{}, fmt.Errorf("follow-up for %s: %d turns done, but %d are pre-written", cfg.ID, len(history), len(cfg.Turns))
	}
	if cfg.FollowUp == nil || k >= len(cfg.FollowUp.Kinds) || len(history) == 0 {
		return "", coherence.Needs{}, ErrNoFollowUp
	}
	kind := cfg.FollowUp.Kinds[k]
	if w.chat == nil {
		variants, ok := w.t.locale(cfg.Locale).followUps[kind]
		if !ok {
			return "", coherence.Needs{}, fmt.Errorf("follow-up for %s: unknown kind %q", cfg.ID, kind)
		}
		v := chooseFollowUp(variants, previousTurn(cfg, history), cfg.ID, k)
		return v.text, v.needs, nil
	}
	answer, err := w.chat.Complete(ctx, FollowUpMessages(cfg, history, kind))
	if err != nil {
		return "", coherence.Needs{}, fmt.Errorf("follow-up %d for %s: %w", k+1, cfg.ID, err)
	}
	text := cleanQuery(answer.Text)
	if text == "" {
		return "", coherence.Needs{}, fmt.Errorf("follow-up %d for %s: the model wrote an empty message", k+1, cfg.ID)
	}
	return text, coherence.Needs{}, nil
}

// previousTurn is the turn a follow-up answers: its intent (the config's
// for the first query, else the kind the follow-up before was written
// for) and the answer the plugin showed.
func previousTurn(cfg dialog.ChatConfig, history []dialog.Turn) coherence.Turn {
	last := history[len(history)-1]
	answer := last.Shown
	if answer == "" {
		answer = last.Answer
	}
	intent := cfg.Intent
	if k := len(history) - len(cfg.Turns) - 1; k >= 0 && cfg.FollowUp != nil && k < len(cfg.FollowUp.Kinds) {
		intent = cfg.FollowUp.Kinds[k]
	}
	return coherence.Turn{Intent: intent, Answer: answer}
}

// chooseFollowUp draws, stably for the config and turn, one of the
// wordings whose presuppositions the previous turn meets (the first
// wording of every kind presupposes nothing).
func chooseFollowUp(variants []followUpText, prev coherence.Turn, id string, k int) followUpText {
	var ok []followUpText
	for _, v := range variants {
		if prev.Met(v.needs) {
			ok = append(ok, v)
		}
	}
	if len(ok) == 0 {
		ok = variants[:1]
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%d", id, k)
	return ok[h.Sum64()%uint64(len(ok))]
}

// followUpGoal describes each follow-up kind to the user simulator.
func followUpGoal(kind string, prev coherence.Turn) string {
	switch kind {
	case "clarify":
		return "ask about something in the last answer that was unclear to you"
	case "request_change":
		if prev.HasCode() {
			return "ask for one specific change to the code the assistant gave"
		}
		return "ask for one specific change to the code being discussed"
	case "ask_tests":
		return "ask for tests for the code being discussed"
	case "ask_example":
		return "ask for a short usage example"
	case "edge_cases":
		return "ask what happens in an edge case the answer did not cover"
	case "simplify":
		if prev.HasCode() {
			return "ask for a simpler or shorter version of the code the assistant gave"
		}
		return "ask for a simpler explanation"
	case "explain_more":
		if prev.Changed() {
			return "ask why the proposed change is better than the code before it, or for more detail on it"
		}
		return "ask for more detail on the answer (it changed no code: do not compare it with an original)"
	}
	return "continue the conversation naturally"
}

// maxAnswerChars bounds how much of each earlier answer the simulator sees.
const maxAnswerChars = 3000

// FollowUpMessages is the user-simulator prompt for the follow-up of the
// given kind: a system message casting the model as the developer (file,
// language, locale, style) and one user message with the conversation so
// far (each answer as the plugin showed it, long ones cut to their last
// 3000 characters) and the purpose of the next message.
func FollowUpMessages(cfg dialog.ChatConfig, history []dialog.Turn, kind string) []dialog.Message {
	style := "one or two plain sentences"
	switch strings.TrimSuffix(cfg.QueryStyle, "_code") {
	case "terse":
		style = "a few words, like a busy developer"
	case "verbose":
		style = "a few sentences with some background"
	}
	system := fmt.Sprintf("You play a software developer chatting with an AI code assistant in their editor about %s (%s). "+
		"Write only the developer's next message: no quotes, no preamble, never the assistant's part. "+
		"Write in %s. Keep it to %s.", cfg.File, cfg.Language, localeName(cfg.Locale), style)
	var b strings.Builder
	b.WriteString("Conversation so far:\n")
	for _, t := range history {
		answer := t.Shown
		if answer == "" {
			answer = t.Answer
		}
		if r := []rune(answer); len(r) > maxAnswerChars {
			answer = "…" + string(r[len(r)-maxAnswerChars:])
		}
		fmt.Fprintf(&b, "\nDeveloper: %s\n\nAssistant: %s\n", t.Query, answer)
	}
	fmt.Fprintf(&b, "\nWrite the developer's next message. Its purpose: %s.", followUpGoal(kind, previousTurn(cfg, history)))
	return []dialog.Message{
		{Role: "system", Content: system},
		{Role: "user", Content: b.String()},
	}
}

// followUpKinds returns the kinds that can follow a turn of the given
// intent, or one written for the given follow-up kind, most typical
// first: a developer asks for tests after code was written, for more
// detail after an explanation.
func followUpKinds(prev string) []string {
	switch prev {
	case "explain":
		return []string{"clarify", "explain_more", "ask_example", "edge_cases"}
	case "generate":
		return []string{"request_change", "ask_tests", "edge_cases", "simplify", "ask_example"}
	case "fix":
		return []string{"clarify", "request_change", "ask_tests", "edge_cases", "explain_more"}
	case "tests":
		return []string{"edge_cases", "request_change", "clarify"}
	case "docs":
		return []string{"request_change", "simplify", "clarify"}
	case "optimize":
		return []string{"explain_more", "edge_cases", "request_change", "clarify"}
	case "refactor":
		return []string{"explain_more", "request_change", "simplify", "ask_tests"}
	case "clarify":
		return []string{"ask_example", "explain_more", "edge_cases"}
	case "explain_more":
		return []string{"ask_example", "clarify", "edge_cases"}
	case "ask_example":
		return []string{"clarify", "edge_cases", "request_change"}
	case "request_change":
		return []string{"ask_tests", "edge_cases", "simplify", "explain_more"}
	case "ask_tests":
		return []string{"edge_cases", "request_change"}
	case "edge_cases":
		return []string{"request_change", "ask_tests", "clarify"}
	case "simplify":
		return []string{"explain_more", "ask_tests", "edge_cases"}
	}
	return []string{"clarify", "ask_example", "explain_more"}
}
