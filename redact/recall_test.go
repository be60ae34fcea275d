package redact_test

import (
	"context"
	"testing"

	"dialogfarm/redact"
	"dialogfarm/redact/internal/measure"
)

// recallFloor is the share of the labelled corpus's secrets that must be
// redacted (make bench-redact prints the figure and every miss).
const recallFloor = 0.99

// TestRecallCorpus sanitises the labelled corpus of fake secrets
// (testdata/recall: gitleaks' rule fixtures and dialogfarm's own, in
// UTF-16/32, with NUL bytes, CRLF, split across literals, in comments and
// credential files) as a run does and checks how many survive.
func TestRecallCorpus(t *testing.T) {
	d, err := redact.NewDetector()
	if err != nil {
		t.Fatal(err)
	}
	res, err := measure.Recall(context.Background(), redact.NewRedactor(d), "testdata/recall", "testdata/recall-labels.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if res.Secrets < 150 || res.Kinds < 40 {
		t.Errorf("corpus has %d secrets of %d kinds, want at least 150 of 40", res.Secrets, res.Kinds)
	}
	for _, m := range res.Missed {
		t.Logf("missed %s (%s) at %s:%d: %q left", m.Kind, m.Layout, m.Path, m.Line, m.Left)
	}
	t.Logf("recall %.4f: %d of %d secrets (%d kinds, %d files)", res.Recall(), res.Secrets-len(res.Missed), res.Secrets, res.Kinds, res.Files)
	if res.Recall() < recallFloor {
		t.Errorf("recall %.4f, want at least %.2f", res.Recall(), recallFloor)
	}
}
