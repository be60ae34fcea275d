package respond

import (
	"context"
	"path/filepath"
	"testing"

	"go.uber.org/zap/zaptest"

	"dialogfarm/adapter"
	"dialogfarm/capture"
	"dialogfarm/dialog"
	"dialogfarm/dialog/vocab"
	"dialogfarm/judge"
)

// subjects records the subjects it is asked to judge.
type subjects struct{ got []judge.Subject }

func (s *subjects) Judge(_ context.Context, subj judge.Subject, cands []dialog.Candidate) ([]dialog.Verdict, error) {
	s.got = append(s.got, subj)
	vs := make([]dialog.Verdict, len(cands))
	for i := range vs {
		vs[i] = dialog.Verdict{Candidate: i, Score: 5, Rank: i + 1}
	}
	return vs, nil
}

// The responder reads a request as the plugin of its session's config
// writes messages: Quill's Explain This sends code after its template,
// which is not the developer's words.
func TestResponderReadsRequestsByTheSessionsPlugin(t *testing.T) {
	ask, err := adapter.LoadForRecords(adapter.DefaultName)
	if err != nil {
		t.Fatal(err)
	}
	quill, err := adapter.LoadForRecords(filepath.Join("..", "internal", "testdata", "quill", "adapter.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := threeModelPool(t, map[string]string{"coder-a": "It counts words."})
	j := &subjects{}
	r := New(p, j, zaptest.NewLogger(t))
	r.Reader = adapter.Set{ask, quill}
	r.Lookup = func(session string) (dialog.ChatConfig, bool) {
		return dialog.ChatConfig{ID: session, Plugin: map[string]string{"q": "quill"}[session]}, true
	}
	explain := "Explain this code from textutil/textutil.go:\n\n" + goCode
	for _, session := range []string{"q", "a"} {
		if _, err := r.Respond(t.Context(), capture.Request{Session: session, Seq: 1, Messages: []capture.Message{{Role: "user", Content: explain}}}); err != nil {
			t.Fatal(err)
		}
	}
	if q := j.got[0]; q.Query != "" || q.Intent != vocab.IntentExplain {
		t.Errorf("quill session: query %q intent %q; want no words of the developer's, explain", q.Query, q.Intent)
	}
	// The ask format does not know this layout: all of it is the query.
	if a := j.got[1]; a.Query != explain {
		t.Errorf("ask session: query %q", a.Query)
	}
}
