package realism

import (
	"os"
	"strings"
	"testing"

	"dialogfarm/dialog/vocab"
)

// reference reads the hand-written reference queries (first queries
// only), labelled as Compare's callers label logs.
func reference(tb testing.TB) []Query {
	tb.Helper()
	data, err := os.ReadFile("../testdata/reference/queries.txt")
	if err != nil {
		tb.Fatal(err)
	}
	var out []Query
	for _, line := range strings.Split(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "+") {
			continue
		}
		parts := strings.SplitN(line, "|", 3)
		text := strings.ReplaceAll(parts[2], `\n`, "\n")
		loc, _ := vocab.DetectLocale(text)
		out = append(out, Query{Text: text, Intent: vocab.IntentOf(text), Locale: loc})
	}
	return out
}

func TestKS(t *testing.T) {
	if d := ks([]float64{1, 2, 3}, []float64{1, 2, 3}); d != 0 {
		t.Errorf("same samples: %v", d)
	}
	if d := ks([]float64{1, 2}, []float64{5, 6}); d != 1 {
		t.Errorf("disjoint samples: %v", d)
	}
	if d := ks([]float64{1, 2, 3, 4}, []float64{3, 4, 5, 6}); d != 0.5 {
		t.Errorf("half overlap: %v", d)
	}
}

func TestMeasures(t *testing.T) {
	same := []Query{{Text: "fix this"}, {Text: "fix this"}, {Text: "fix this"}, {Text: "fix this"}}
	lx := newLexicon(same)
	s := stats(same, lx)
	if s.Distinct1 != 0.25 || s.Spread > 1e-9 || s.TerseRate != 1 || s.CodeShare != 0 {
		t.Errorf("a repeated query: %+v", s)
	}
	varied := []Query{{Text: "what does this function return"}, {Text: "the function returns nothing"},
		{Text: "why does the function fail"}, {Text: "the fucntion is slow"}, {Text: "paste\n```go\nx := 1\n```"}}
	lx = newLexicon(varied)
	if !hasTypo("the fucntion is slow", lx) || hasTypo("what does this function return", lx) {
		t.Error("typo: want fucntion (a swap of function, seen 3 times) and nothing else")
	}
	if s := stats(varied, lx); s.CodeShare != 0.2 || s.TypoRate != 0.2 || s.Spread <= 0.3 {
		t.Errorf("varied: %+v", s)
	}
}

// TestHalvesOfTheReferenceAreClose: two halves of the reference set (odd
// and even lines) raise no flag; the same queries with one wording each
// (every query replaced by the first of its cell) raise several.
func TestHalvesOfTheReferenceAreClose(t *testing.T) {
	ref := reference(t)
	if len(ref) < 300 {
		t.Fatalf("%d reference queries", len(ref))
	}
	var a, b []Query
	for i, q := range ref {
		if i%2 == 0 {
			a = append(a, q)
		} else {
			b = append(b, q)
		}
	}
	r := Compare("halves", a, b, DefaultThresholds())
	if r.Flagged != 0 {
		t.Errorf("halves flagged %d:\n%s", r.Flagged, r.Summary())
	}
	first := map[string]string{}
	var templated []Query
	for _, q := range a {
		k := q.Intent + "/" + q.Locale
		if _, ok := first[k]; !ok {
			first[k] = q.Text
		}
		templated = append(templated, Query{Text: first[k], Intent: q.Intent, Locale: q.Locale})
	}
	r = Compare("templated", templated, b, DefaultThresholds())
	if r.Flagged < 3 || !strings.Contains(r.Summary(), "flags") {
		t.Errorf("one wording per cell flagged only %d:\n%s", r.Flagged, r.Summary())
	}
	t.Logf("one wording per cell:\n%s", r.Summary())
}
