package judge

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// handJudged and handLabels are the worked example of TestEvaluateByHand.
var (
	handJudged = []Scored{
		{ID: "a", Score: 5, Intent: "explain", Language: "go", Locale: "en"},
		{ID: "b", Score: 5, Intent: "explain", Language: "go", Locale: "zh"},
		{ID: "c", Score: 4, Intent: "fix", Language: "python", Locale: "en"},
		{ID: "d", Score: 3, Intent: "fix", Language: "python", Locale: "en"},
		{ID: "e", Score: 4.5, Intent: "tests", Language: "go", Locale: "en"}, // rounds to 5
		{ID: "f", Score: 2, Intent: "tests", Language: "go", Locale: "zh"},
		{ID: "only-judged", Score: 5},
		{ID: "unparseable", Score: 0},
	}
	handLabels = []Scored{
		{ID: "a", Score: 5}, {ID: "b", Score: 4}, {ID: "c", Score: 4},
		{ID: "d", Score: 3}, {ID: "e", Score: 3}, {ID: "f", Score: 2},
		{ID: "only-labels", Score: 1}, {ID: "unparseable", Score: 2},
	}
)

// TestEvaluateByHand checks every statistic against values worked by hand.
//
// Paired items (judge, human): a(5,5) b(5,4) c(4,4) d(3,3) e(5,3) f(2,2); N = 6.
//
// Accuracy5: the judge scored 5 on a, b, e; humans agree on a only: 1/3.
// Exact agreement: a, c, d, f: 4/6.
// Precision/recall: score 5: P = 1/3, R = 1/1 (humans gave 5 to a only);
// score 4: P = 1/1 (c), R = 1/2 (humans: b, c); score 3: P = 1/1 (d),
// R = 1/2 (humans: d, e); score 2: P = R = 1/1; score 1: 0/0 both.
//
// Quadratic-weighted kappa. With w_ij = (i−j)²/16 the 1/16 cancels, so use
// squared differences d² = (i−j)²:
//
//	observed Σ d² O_ij = b (5−4)² + e (5−3)² = 1 + 4 = 5
//	judge totals a_i: 2→1, 3→1, 4→1, 5→3; human totals b_j: 2→1, 3→2, 4→2, 5→1
//	Σ_j b_j d² for each judge score i:
//	  i=2: 3:2·1 + 4:2·4 + 5:1·9        = 19, × a_2=1 → 19
//	  i=3: 2:1·1 + 4:2·1 + 5:1·4        =  7, × a_3=1 →  7
//	  i=4: 2:1·4 + 3:2·1 + 5:1·1        =  7, × a_4=1 →  7
//	  i=5: 2:1·9 + 3:2·4 + 4:2·1        = 19, × a_5=3 → 57
//	expected Σ d² a_i b_j / N = (19+7+7+57) / 6 = 90 / 6 = 15
//	κ = 1 − 5/15 = 2/3 ≈ 0.6667
func TestEvaluateByHand(t *testing.T) {
	rep, err := Evaluate(handJudged, handLabels, DefaultEvalOptions())
	if err != nil {
		t.Fatal(err)
	}
	o := rep.Overall
	if o.N != 6 {
		t.Fatalf("n = %d, want 6", o.N)
	}
	checkFraction(t, "accuracy5", o.Accuracy5, 1, 3)
	checkFraction(t, "exact", o.Exact, 4, 6)
	want := [][4]int{ // score: precision hits/of, recall hits/of
		{0, 0, 0, 0}, {1, 1, 1, 1}, {1, 1, 1, 2}, {1, 1, 1, 2}, {1, 3, 1, 1},
	}
	for i, s := range o.PerScore {
		checkFraction(t, "precision", s.Precision, want[i][0], want[i][1])
		checkFraction(t, "recall", s.Recall, want[i][2], want[i][3])
	}
	if o.PerScore[0].Precision.Value != nil {
		t.Errorf("precision of an unused score should be n/a")
	}
	if o.Kappa == nil || math.Abs(*o.Kappa-2.0/3) > 1e-12 {
		t.Fatalf("kappa = %v, want 2/3", o.Kappa)
	}
	if o.KappaLow == nil || o.KappaHigh == nil || *o.KappaLow > *o.Kappa || *o.KappaHigh < *o.Kappa || *o.KappaHigh > 1 {
		t.Errorf("kappa interval [%v, %v] does not bracket %v", o.KappaLow, o.KappaHigh, *o.Kappa)
	}
	if strings.Join(rep.OnlyJudged, ",") != "only-judged" || strings.Join(rep.OnlyLabels, ",") != "only-labels" ||
		strings.Join(rep.Unscored, ",") != "unparseable" {
		t.Errorf("unpaired ids: judged %v labels %v unscored %v", rep.OnlyJudged, rep.OnlyLabels, rep.Unscored)
	}
	groups := map[string]Agreement{}
	for _, a := range append(append(rep.ByIntent, rep.ByLanguage...), rep.ByLocale...) {
		groups[a.Group] = a
	}
	// intent=explain: a(5,5) b(5,4): accuracy5 1/2. language=go: a b e f.
	checkFraction(t, "explain accuracy5", groups["intent=explain"].Accuracy5, 1, 2)
	if groups["language=go"].N != 4 || groups["language=python"].N != 2 || groups["locale=zh"].N != 2 {
		t.Errorf("breakdown sizes: %+v", groups)
	}
	// locale=zh: b(5,4) f(2,2): observed 1; totals judge 2→1 5→1, human 2→1 4→1;
	// expected (1 [5 vs 4] + 9 [5 vs 2] + 4 [2 vs 4] + 0 [2 vs 2]) / 2 = 7; κ = 1 − 1/7 = 6/7.
	if k := groups["locale=zh"].Kappa; k == nil || math.Abs(*k-6.0/7) > 1e-12 {
		t.Errorf("locale=zh kappa = %v, want 6/7", k)
	}
}

func checkFraction(t *testing.T, what string, f Fraction, hits, of int) {
	t.Helper()
	if f.Hits != hits || f.Of != of {
		t.Errorf("%s = %d/%d, want %d/%d", what, f.Hits, f.Of, hits, of)
	}
	if of > 0 && (f.Value == nil || math.Abs(*f.Value-float64(hits)/float64(of)) > 1e-12) {
		t.Errorf("%s value = %v, want %d/%d", what, f.Value, hits, of)
	}
}

func TestKappaExtremes(t *testing.T) {
	cases := []struct {
		name    string
		pairs   []pair
		want    float64
		defined bool
	}{
		{"perfect", []pair{{judge: 1, human: 1}, {judge: 3, human: 3}, {judge: 5, human: 5}}, 1, true},
		// observed 16+16 = 32; expected (16·1·1 + 16·1·1)/2 = 16; κ = 1 − 32/16 = −1
		{"reversed", []pair{{judge: 1, human: 5}, {judge: 5, human: 1}}, -1, true},
		{"one category", []pair{{judge: 4, human: 4}, {judge: 4, human: 4}}, 0, false},
		{"empty", nil, 0, false},
		// One item: expected disagreement (5−4)²·1·1/1 = 1 = observed, so
		// the formula gives 0, which measures nothing: n/a.
		{"one item", []pair{{judge: 5, human: 4}}, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k, ok := quadraticKappa(c.pairs)
			if ok != c.defined || (ok && math.Abs(k-c.want) > 1e-12) {
				t.Errorf("kappa = %v, %v; want %v, %v", k, ok, c.want, c.defined)
			}
		})
	}
}

func TestBootstrapSeeded(t *testing.T) {
	opt := EvalOptions{Resamples: 1000, Seed: 7}
	a, err := Evaluate(handJudged, handLabels, opt)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Evaluate(handJudged, handLabels, opt)
	if *a.Overall.KappaLow != *b.Overall.KappaLow || *a.Overall.KappaHigh != *b.Overall.KappaHigh {
		t.Error("the same seed gave different intervals")
	}
	c, _ := Evaluate(handJudged, handLabels, EvalOptions{Resamples: 1000, Seed: 8})
	if *a.Overall.KappaLow == *c.Overall.KappaLow && *a.Overall.KappaHigh == *c.Overall.KappaHigh {
		t.Error("a different seed gave the same interval")
	}
	if _, err := Evaluate(handJudged, handLabels, EvalOptions{Resamples: 999}); err == nil {
		t.Error("fewer than 1000 resamples accepted")
	}
}

func TestEvaluateRejectsBadLabel(t *testing.T) {
	if _, err := Evaluate(nil, []Scored{{ID: "x", Score: 6}}, DefaultEvalOptions()); err == nil {
		t.Error("label score 6 accepted")
	}
}

func TestReadScoredAndReport(t *testing.T) {
	in := `{"id":"a","score":5,"intent":"explain"}

{"id":17,"score":"x"}`
	if _, err := ReadScored(strings.NewReader(in), "judged.jsonl"); err == nil || !strings.Contains(err.Error(), "judged.jsonl:3: ") {
		t.Errorf("bad score line: err = %v, want it to name line 3", err)
	}
	got, err := ReadScored(strings.NewReader(`{"id":17,"score":4,"intent":"optimise"}`+"\n"+`{"id":"a","score":5,"locale":"zh","intent":"general"}`), "x")
	if err != nil || len(got) != 2 || got[0].ID != "17" || got[1].Locale != "zh" {
		t.Fatalf("ReadScored = %+v, %v", got, err)
	}
	// A file the judge wrote before the one vocabulary breaks down by the
	// intents of today's.
	if got[0].Intent != "optimize" || got[1].Intent != "question" {
		t.Errorf("older intent spellings read as %q and %q, want optimize and question", got[0].Intent, got[1].Intent)
	}
	rep, err := Evaluate(handJudged, handLabels, DefaultEvalOptions())
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"overall", "1/3=0.333", "0.667", "intent=explain", "locale=zh",
		"ids only in the judged file: 1 (only-judged)", "ids only in the labels file: 1 (only-labels)"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}
	js, err := json.Marshal(rep)
	if err != nil || !bytes.Contains(js, []byte(`"accuracy5":{"hits":1,"of":3,"value":0.3333333333333333}`)) {
		t.Errorf("json report: %s, %v", js, err)
	}
}
