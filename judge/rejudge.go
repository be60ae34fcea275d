package judge

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"dialogfarm/dialog"
)

// Rejudge judges again every turn of d that has candidates (with this
// judge's model, rubrics and rules) and returns d with the new verdicts.
// The answer each turn showed stays: it is part of the recorded dialogue,
// and the next turn's request holds it.
func (j *Judge) Rejudge(ctx context.Context, d dialog.Dialogue) (dialog.Dialogue, error) {
	d.Turns = slices.Clone(d.Turns)
	for i := range d.Turns {
		t := &d.Turns[i]
		if len(t.Candidates) == 0 {
			continue
		}
		req, err := dialog.ParseChatRequest(t.Request)
		if err != nil {
			return d, fmt.Errorf("rejudge %s turn %d: %w", d.ConfigID, i+1, err)
		}
		vs, err := j.Judge(ctx, NewSubject(req, &d.Config, j.reader), t.Candidates)
		if err != nil {
			return d, fmt.Errorf("rejudge %s turn %d: %w", d.ConfigID, i+1, err)
		}
		t.Verdicts = vs
	}
	return d, nil
}

// TurnID names a dialogue's turn (1-based) for judge-eval: "<config id>#<n>".
func TurnID(configID string, turn int) string { return fmt.Sprintf("%s#%d", configID, turn) }

// TurnScores lists every turn of d that has candidates as a judge-eval
// line: its TurnID, the final score of the verdict on the answer the plugin
// was shown (0 when there is none, which judge-eval reports as unscored),
// and the turn's intent, language and locale (what the config leaves empty
// is read from the request by r; see NewSubject).
func TurnScores(d dialog.Dialogue, r MessageReader) []Scored {
	var out []Scored
	for i, t := range d.Turns {
		if len(t.Candidates) == 0 {
			continue
		}
		s := Scored{ID: TurnID(d.ConfigID, i+1), Intent: d.Config.Intent, Language: d.Config.Language, Locale: d.Config.Locale}
		if req, err := dialog.ParseChatRequest(t.Request); err == nil {
			// The config's dimensions, as the profile names them; what
			// it leaves empty is read from the request.
			subj := NewSubject(req, &d.Config, r)
			s.Intent = cmp.Or(d.Config.Intent, subj.Intent)
			s.Language = cmp.Or(d.Config.Language, subj.Language)
			s.Locale = cmp.Or(d.Config.Locale, subj.Locale)
		}
		if v, ok := ShownVerdict(t.Exchange); ok {
			s.Score = v.Score
		}
		out = append(out, s)
	}
	return out
}

// ShownVerdict is the verdict on the candidate the plugin was shown (the
// best-ranked among those whose text is the exchange's answer).
func ShownVerdict(ex dialog.Exchange) (dialog.Verdict, bool) {
	var best dialog.Verdict
	found := false
	for _, v := range ex.Verdicts {
		if v.Candidate < 0 || v.Candidate >= len(ex.Candidates) || ex.Candidates[v.Candidate].Text != ex.Answer {
			continue
		}
		if !found || v.Rank < best.Rank {
			best, found = v, true
		}
	}
	return best, found
}
