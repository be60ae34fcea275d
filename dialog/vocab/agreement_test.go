package vocab_test

import (
	"context"
	"testing"

	"dialogfarm/analyst"
	"dialogfarm/dialog"
	"dialogfarm/dialog/vocab"
	"dialogfarm/judge"
)

// TestAnalystAndJudgeAgree: the analyst (fitting a profile from logs,
// with no model) and the judge (reading a captured request no config
// describes) label every query of the table with the same intent and
// locale, the one vocab gives. Before the one vocabulary, "write tests
// for this bug" was fix to the analyst and tests to the judge, and the
// judge read every Latin-script query as en.
func TestAnalystAndJudgeAgree(t *testing.T) {
	for _, q := range vocab.Queries {
		t.Run(q.Query, func(t *testing.T) {
			labels, err := analyst.KeywordClassifier{}.Classify(context.Background(), []analyst.Item{{Query: q.Query}})
			if err != nil {
				t.Fatal(err)
			}
			obs := analyst.Observe(analyst.Session{First: analyst.Record{Query: q.Query}, Turns: 1})
			s := judge.NewSubject(dialog.ChatRequest{Messages: []dialog.Message{{Role: "user", Content: q.Query}}}, nil, nil)
			if labels[0].Intent != q.Intent || s.Intent != q.Intent {
				t.Errorf("intent: analyst %q, judge %q; want %q", labels[0].Intent, s.Intent, q.Intent)
			}
			wantAnalyst := q.Locale
			if wantAnalyst == "" {
				wantAnalyst = "en" // a profile's locale needs a value; no letters read as en
			}
			if obs.Locale != wantAnalyst || s.Locale != q.Locale {
				t.Errorf("locale: analyst %q, judge %q; want %q", obs.Locale, s.Locale, q.Locale)
			}
		})
	}
}
