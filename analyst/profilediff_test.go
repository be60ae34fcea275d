package analyst

import (
	"bytes"
	"strings"
	"testing"

	"dialogfarm/dialog/vocab"
	"dialogfarm/profiles"
)

// TestDiffProfiles: two profiles that differ only in intent weights
// differ only in intent (JSD > 0 there, 0 elsewhere), each side's quotas
// are its own plan's (summing to n), and the table marks the changed
// values.
func TestDiffProfiles(t *testing.T) {
	a := defaultProfile(t)
	b := cloneProfile(a)
	for i, w := range b.Dimensions[vocab.DimIntent] {
		if w.Value == vocab.IntentExplain {
			b.Dimensions[vocab.DimIntent][i].Weight = 0.40
		}
	}
	b.Name = "more-explain"
	plan := func(p *profiles.Profile) (*profiles.Plan, error) { return MakePlan(p, PlanConfig{N: 50, Seed: 3}) }
	d := DiffProfiles(a, b, 50, plan)
	for _, dd := range d.Dimensions {
		qa, qb := 0, 0
		for _, v := range dd.Values {
			qa += v.QuotaA
			qb += v.QuotaB
		}
		if qa != 50 || qb != 50 {
			t.Errorf("%s: quotas sum to %d and %d, want 50", dd.Dim, qa, qb)
		}
		if (dd.Dim == vocab.DimIntent) != (dd.JSD > 0) {
			t.Errorf("%s: JSD %.4f", dd.Dim, dd.JSD)
		}
		for _, v := range dd.Values {
			if dd.Dim == vocab.DimIntent && v.Value == vocab.IntentExplain && (v.QuotaB <= v.QuotaA || v.ShareB <= v.ShareA) {
				t.Errorf("explain: A %.3f (%d), B %.3f (%d)", v.ShareA, v.QuotaA, v.ShareB, v.QuotaB)
			}
		}
	}
	var out bytes.Buffer
	if err := d.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "explain") || strings.Count(out.String(), "*") != 8 {
		t.Errorf("table marks %d changed values, want the 8 intents:\n%s", strings.Count(out.String(), "*"), out.String())
	}
}
