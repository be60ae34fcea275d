package configgen

import (
	"context"
	"errors"
	"fmt"
	"strings"

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
	k := len(history) - len(cfg.Turns)
	if k < 0 {
		return "", fmt.Errorf("follow-up for %s: %d turns done, but %d are pre-written", cfg.ID, len(history), len(cfg.Turns))
	}
	if cfg.FollowUp == nil || k >= len(cfg.FollowUp.Kinds) {
		return "", ErrNoFollowUp
	}
	kind := cfg.FollowUp.Kinds[k]
	if w.chat == nil {
		text, ok := w.t.locale(cfg.Locale).followUps[kind]
		if !ok {
			return "", fmt.Errorf("follow-up for %s: unknown kind %q", cfg.ID, kind)
		}
		return text, nil
	}
	answer, err := w.chat.Complete(ctx, FollowUpMessages(cfg, history, kind))
	if err != nil {
		return "", fmt.Errorf("follow-up %d for %s: %w", k+1, cfg.ID, err)
	}
	text := cleanQuery(answer.Text)
	if text == "" {
		return "", fmt.Errorf("follow-up %d for %s: the model wrote an empty message", k+1, cfg.ID)
	}
	return text, nil
}

// followUpGoal describes each follow-up kind to the user simulator.
func followUpGoal(kind string) string {
	switch kind {
	case "clarify":
		return "ask about something in the last answer that was unclear to you"
	case "request_change":
		return "ask for one specific change to the code or answer the assistant gave"
	case "ask_tests":
		return "ask for tests for the code being discussed"
	case "ask_example":
		return "ask for a short usage example"
	case "edge_cases":
		return "ask what happens in an edge case the answer did not cover"
	case "simplify":
		return "ask for a simpler or shorter version"
	case "explain_more":
		return "ask why the proposed approach is better, or for more detail on it"
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
	fmt.Fprintf(&b, "\nWrite the developer's next message. Its purpose: %s.", followUpGoal(kind))
	return []dialog.Message{
		{Role: "system", Content: system},
		{Role: "user", Content: b.String()},
	}
}

// followUpKinds returns the kinds that suit an intent, most typical first.
func followUpKinds(intent string) []string {
	switch intent {
	case "explain":
		return []string{"clarify", "explain_more", "ask_example"}
	case "generate":
		return []string{"request_change", "ask_tests", "edge_cases"}
	case "fix":
		return []string{"clarify", "request_change", "ask_tests", "edge_cases"}
	case "tests":
		return []string{"edge_cases", "request_change"}
	case "docs":
		return []string{"request_change", "simplify"}
	case "optimize":
		return []string{"clarify", "edge_cases", "request_change"}
	case "refactor":
		return []string{"request_change", "simplify", "ask_tests"}
	}
	return []string{"clarify", "ask_example", "explain_more"}
}
