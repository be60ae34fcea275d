package judge

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteText prints the report as tables: one row per group with n,
// Accuracy5, exact agreement and weighted kappa with its interval, then
// precision and recall per score, then the ids that could not be paired.
func (r Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "group\tn\taccuracy5\texact\tkappa (quadratic)\t95%% CI (bootstrap, %d resamples, seed %d)\n", r.Resamples, r.Seed)
	groups := append([]Agreement{r.Overall}, r.ByIntent...)
	groups = append(append(groups, r.ByLanguage...), r.ByLocale...)
	for _, a := range groups {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\n", a.Group, a.N, a.Accuracy5, a.Exact, num(a.Kappa), interval(a.KappaLow, a.KappaHigh))
	}
	fmt.Fprintln(tw)
	fmt.Fprint(tw, "group")
	for s := 1; s <= 5; s++ {
		fmt.Fprintf(tw, "\tP(%d)\tR(%d)", s, s)
	}
	fmt.Fprintln(tw)
	for _, a := range groups {
		fmt.Fprint(tw, a.Group)
		for _, s := range a.PerScore {
			fmt.Fprintf(tw, "\t%s\t%s", s.Precision, s.Recall)
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for _, l := range []struct {
		what string
		ids  []string
	}{
		{"ids only in the judged file", r.OnlyJudged},
		{"ids only in the labels file", r.OnlyLabels},
		{"judged ids without a 1..5 score (not paired)", r.Unscored},
		{"ids repeated in the judged file (last wins)", r.DuplicateJudged},
		{"ids repeated in the labels file (last wins)", r.DuplicateLabels},
	} {
		fmt.Fprintf(w, "%s: %d%s\n", l.what, len(l.ids), idList(l.ids))
	}
	return nil
}

// String is "hits/of = value", or "0/0 = n/a".
func (f Fraction) String() string {
	return fmt.Sprintf("%d/%d=%s", f.Hits, f.Of, num(f.Value))
}

func num(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.3f", *v)
}

func interval(lo, hi *float64) string {
	if lo == nil || hi == nil {
		return "n/a"
	}
	return fmt.Sprintf("[%.3f, %.3f]", *lo, *hi)
}

func idList(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	const show = 20
	if len(ids) > show {
		return " (" + strings.Join(ids[:show], ", ") + fmt.Sprintf(", … %d more)", len(ids)-show)
	}
	return " (" + strings.Join(ids, ", ") + ")"
}
