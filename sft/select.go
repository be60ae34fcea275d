package sft

import (
	"slices"

	"dialogfarm/dialog"
)

// Reasons a dialogue contributes no record, as counted in Summary.Skipped.
const (
	SkipSuperseded = "superseded"      // a later line has the same config id
	SkipFailed     = "failed"          // the driver did not complete it
	SkipOffline    = "offline"         // answered by the offline stand-in
	SkipNoTurns    = "no_turns"        // it recorded no turn
	SkipError      = "turn_error"      // its first turn's exchange failed
	SkipBelowMin   = "below_min_score" // its first turn scored below the minimum
	SkipBadRequest = "bad_request"     // its first turn's captured request is unreadable
	SkipHistory    = "foreign_history" // its first request already carries a conversation
	SkipTorn       = "torn_last_line"  // the partial last line of a run killed mid-write
	SkipTooLong    = "too_long"        // more tokens than Options.MaxTokens
)

// TurnMeta describes one kept turn's chosen answer and how it was judged:
// JudgeMode is dialog.JudgeLLM when a judge model (JudgeModel) scored it,
// dialog.JudgeRulesOnly or dialog.JudgeError when only the rule
// deductions did (the score is then 5 minus them), dialog.JudgeNone when
// nothing did.
type TurnMeta struct {
	Score      float64            `json:"score"`
	Model      string             `json:"model"`
	Member     string             `json:"member"`
	RulesOnly  bool               `json:"rules_only"`
	JudgeMode  string             `json:"judge_mode"`
	JudgeModel string             `json:"judge_model"`
	Deductions []dialog.Deduction `json:"deductions"`
}

// Metadata describes one record. Every key is written on every line (an
// empty string when unknown), so a file has one key set.
type Metadata struct {
	ID         string `json:"id"`
	ConfigID   string `json:"config_id"`
	Intent     string `json:"intent"`
	Language   string `json:"language"`
	Locale     string `json:"locale"`
	Difficulty string `json:"difficulty"`
	// QuerySource says who wrote the first query: a model, a template or
	// a plugin command (dialog.QuerySource*).
	QuerySource string     `json:"query_source"`
	Offline     bool       `json:"offline"`
	Turns       []TurnMeta `json:"turns"`
}

// Sample is what one dialogue contributes to an export: the conversation
// to train on, its metadata and the provenance of its kept turns.
type Sample struct {
	Messages   []dialog.Message
	Meta       Metadata
	Provenance dialog.Provenance
	cut        bool // the history check ended it early
}

// selectTurns works out a dialogue's sample, or why it has none.
func selectTurns(d dialog.Dialogue, opt Options) (Sample, string) {
	offline := d.IsOffline()
	switch {
	case d.Status != dialog.StatusOK:
		return Sample{}, SkipFailed
	case offline && !opt.AllowOffline:
		return Sample{}, SkipOffline
	case len(d.Turns) == 0:
		return Sample{}, SkipNoTurns
	}
	s := Sample{Meta: Metadata{
		ID: d.ConfigID, ConfigID: d.ConfigID, Intent: d.Config.Intent, Language: d.Config.Language,
		Locale: d.Config.Locale, Difficulty: d.Config.Difficulty, QuerySource: d.Config.QuerySource, Offline: offline,
	}}
	var history []dialog.Message // user and assistant messages of the kept turns
	var last dialog.ChatRequest
	for i, t := range d.Turns {
		reason := ""
		req, err := dialog.ParseChatRequest(t.Request)
		tm := chosen(t.Exchange)
		switch {
		case t.Error != "":
			reason = SkipError
		case err != nil:
			reason = SkipBadRequest
		case tm.Score < opt.MinScore:
			reason = SkipBelowMin
		case !continues(req, history):
			s.cut = true
		}
		if s.cut && i == 0 {
			return Sample{}, SkipHistory
		}
		if reason != "" && i == 0 {
			return Sample{}, reason
		}
		if reason != "" || s.cut {
			break
		}
		last = req
		history = append(conversation(req.Messages), dialog.Message{Role: "assistant", Content: t.Answer})
		s.Meta.Turns = append(s.Meta.Turns, tm)
	}
	s.Messages = append(slices.Clone(last.Messages), dialog.Message{Role: "assistant", Content: d.Turns[len(s.Meta.Turns)-1].Answer})
	s.Provenance.Add(d, len(s.Meta.Turns))
	return s, ""
}

// conversation is msgs without system (and other non-chat) messages.
func conversation(msgs []dialog.Message) []dialog.Message {
	var out []dialog.Message
	for _, m := range msgs {
		if m.Role == "user" || m.Role == "assistant" {
			out = append(out, m)
		}
	}
	return out
}

// continues reports whether req's conversation is history followed by one
// user message: the plugin replayed exactly the kept turns.
func continues(req dialog.ChatRequest, history []dialog.Message) bool {
	conv := conversation(req.Messages)
	return len(conv) == len(history)+1 && conv[len(conv)-1].Role == "user" && slices.Equal(conv[:len(history)], history)
}

// chosen describes the verdict on the answer the plugin was shown
// (dialog.Exchange.ShownVerdict). With no such verdict the score is 0.
func chosen(ex dialog.Exchange) TurnMeta {
	tm := TurnMeta{Model: ex.Model, JudgeMode: dialog.JudgeNone, Deductions: []dialog.Deduction{}}
	best, ok := ex.ShownVerdict()
	if !ok {
		return tm
	}
	c := ex.Candidates[best.Candidate]
	tm.Score, tm.Member, tm.RulesOnly = best.Score, c.Member, best.RulesOnly
	tm.JudgeMode, tm.JudgeModel = best.Mode(), best.JudgeModel
	if c.Model != "" {
		tm.Model = c.Model
	}
	if best.Deductions != nil {
		tm.Deductions = best.Deductions
	}
	return tm
}

// KeptTurns is how many turns of d an export with opt keeps: the rule
// export applies, for reports that count kept turns.
func KeptTurns(d dialog.Dialogue, opt Options) int {
	s, skip := selectTurns(d, opt)
	if skip != "" {
		return 0
	}
	return len(s.Meta.Turns)
}
