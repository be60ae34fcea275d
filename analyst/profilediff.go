package analyst

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"dialogfarm/dialog/vocab"
	"dialogfarm/profiles"
)

// ProfileDiff compares two profiles dimension by dimension: each value's
// share in A and in B, the JSD between them, and the quota the plan of
// each for N dialogues gives the value.
type ProfileDiff struct {
	A, B       string
	N          int
	Dimensions []DimDiff `json:"dimensions"`
	// PlanA and PlanB are the ids of the two plans; ErrA and ErrB say why
	// one could not be made.
	PlanA, PlanB string `json:",omitempty"`
	ErrA, ErrB   string `json:",omitempty"`
	// Constraints lists the constraints only one profile has.
	OnlyA, OnlyB []string `json:",omitempty"`
}

// DimDiff is one dimension of a ProfileDiff.
type DimDiff struct {
	Dim    string      `json:"dim"`
	JSD    float64     `json:"jsd"`
	Values []ValueDiff `json:"values"`
}

// ValueDiff is one value of a dimension in both profiles.
type ValueDiff struct {
	Value  string  `json:"value"`
	ShareA float64 `json:"share_a"`
	ShareB float64 `json:"share_b"`
	QuotaA int     `json:"quota_a"`
	QuotaB int     `json:"quota_b"`
}

// DiffProfiles compares a and b; plan makes the plan of each for the
// comparison of quotas (MakePlan, or PlanForRepos for repositories).
func DiffProfiles(a, b *profiles.Profile, n int, plan func(*profiles.Profile) (*profiles.Plan, error)) *ProfileDiff {
	d := &ProfileDiff{A: a.Name, B: b.Name, N: n}
	pa, errA := plan(a)
	pb, errB := plan(b)
	if errA != nil {
		d.ErrA = errA.Error()
	} else {
		d.PlanA = pa.ID
	}
	if errB != nil {
		d.ErrB = errB.Error()
	} else {
		d.PlanB = pb.ID
	}
	for _, dim := range vocab.Dimensions() {
		ta, tb := a.Target(dim), b.Target(dim)
		dd := DimDiff{Dim: dim, JSD: JSD(ta, tb)}
		if math.IsNaN(dd.JSD) {
			dd.JSD = 1
		}
		seen := map[string]bool{}
		var order []string
		for _, p := range []*profiles.Profile{a, b} {
			for _, w := range p.Dimensions[dim] {
				if !seen[w.Value] {
					seen[w.Value] = true
					order = append(order, w.Value)
				}
			}
		}
		for _, v := range order {
			vd := ValueDiff{Value: v, ShareA: ta[v], ShareB: tb[v]}
			if pa != nil {
				vd.QuotaA = pa.Quotas[dim][v]
			}
			if pb != nil {
				vd.QuotaB = pb.Quotas[dim][v]
			}
			dd.Values = append(dd.Values, vd)
		}
		d.Dimensions = append(d.Dimensions, dd)
	}
	key := func(c profiles.Constraint) string { return c.String() }
	in := func(cs []profiles.Constraint, c profiles.Constraint) bool {
		for _, x := range cs {
			if key(x) == key(c) {
				return true
			}
		}
		return false
	}
	for _, c := range a.Constraints {
		if !in(b.Constraints, c) {
			d.OnlyA = append(d.OnlyA, c.String())
		}
	}
	for _, c := range b.Constraints {
		if !in(a.Constraints, c) {
			d.OnlyB = append(d.OnlyB, c.String())
		}
	}
	return d
}

// WriteTable prints the diff for a terminal: per dimension its JSD, then
// each value's shares and quotas side by side, changed values marked.
func (d *ProfileDiff) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "A: %s\nB: %s\nplans for n=%d: A %s, B %s\n\n", d.A, d.B, d.N, orErr(d.PlanA, d.ErrA), orErr(d.PlanB, d.ErrB))
	fmt.Fprintln(tw, "dimension\tJSD\tvalue\tA\tB\tplan A\tplan B\t")
	for _, dim := range d.Dimensions {
		for i, v := range dim.Values {
			name, j := "", ""
			if i == 0 {
				name, j = dim.Dim, fmt.Sprintf("%.4f", dim.JSD)
			}
			mark := ""
			if math.Abs(v.ShareA-v.ShareB) >= 0.0005 {
				mark = "*"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%.1f%%\t%.1f%%\t%d\t%d\t%s\n", name, j, v.Value, 100*v.ShareA, 100*v.ShareB, v.QuotaA, v.QuotaB, mark)
		}
	}
	for _, c := range d.OnlyA {
		fmt.Fprintf(tw, "\nonly in A: %s", c)
	}
	for _, c := range d.OnlyB {
		fmt.Fprintf(tw, "\nonly in B: %s", c)
	}
	if len(d.OnlyA)+len(d.OnlyB) > 0 {
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

func orErr(id, err string) string {
	if err != "" {
		return "none (" + err + ")"
	}
	return id
}
