package dialog

import (
	"slices"
	"testing"
)

func TestLatest(t *testing.T) {
	ds := []Dialogue{{ConfigID: "a", Status: StatusFailed}, {ConfigID: "b"}, {ConfigID: "a", Status: StatusOK}, {ConfigID: "c"}}
	got := Latest(ds)
	var ids []string
	for _, d := range got {
		ids = append(ids, d.ConfigID)
	}
	if !slices.Equal(ids, []string{"b", "a", "c"}) || got[1].Status != StatusOK {
		t.Errorf("Latest: %v (a's status %q), want b, a (ok), c", ids, got[1].Status)
	}
}

func TestVerdictMode(t *testing.T) {
	for _, c := range []struct {
		v    Verdict
		want string
	}{
		{Verdict{LLMScore: 5, JudgeModel: "m"}, JudgeLLM},
		{Verdict{RulesOnly: true}, JudgeRulesOnly},
		{Verdict{RulesOnly: true, JudgeError: "429"}, JudgeError},
		{Verdict{Unparsable: true}, JudgeUnparseable},
	} {
		if got := c.v.Mode(); got != c.want {
			t.Errorf("%+v: %s, want %s", c.v, got, c.want)
		}
	}
}

func TestKeepRate(t *testing.T) {
	var k KeepRate
	k.Add(3, 2)
	k.Add(1, 0)
	k.Add(2, 2)
	want := KeepRate{Turns: 6, KeptTurns: 4, TurnRate: 0.6667, Dialogues: 3, KeptDialogues: 2, DialogueRate: 0.6667}
	if k != want {
		t.Errorf("%+v, want %+v", k, want)
	}
	if s := k.String(); s != "turns 4 of 6 kept (66.7%), dialogues 2 of 3 with a kept turn (66.7%)" {
		t.Errorf("String() = %q", s)
	}
}

// TestShownVerdict: the verdict on the answer shown is the best-ranked
// among those on candidates with its text, not the best-ranked overall.
func TestShownVerdict(t *testing.T) {
	ex := Exchange{Answer: "shown", Candidates: []Candidate{{Text: "other"}, {Text: "shown"}},
		Verdicts: []Verdict{{Candidate: 0, Rank: 1, Score: 5}, {Candidate: 1, Rank: 2, Score: 4}, {Candidate: 7, Rank: 0}}}
	if v, ok := ex.ShownVerdict(); !ok || v.Candidate != 1 || v.Score != 4 {
		t.Errorf("ShownVerdict = %+v, %v", v, ok)
	}
	if _, ok := (Exchange{Answer: "x"}).ShownVerdict(); ok {
		t.Error("an exchange without verdicts has a shown verdict")
	}
}
