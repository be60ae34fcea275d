package analyst

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"dialogfarm/dialog/vocab"
	"dialogfarm/profiles"
)

// moveTolerance is the smallest change of a share reported as a move.
const moveTolerance = 5e-4

// FitToRepos fits the profile to what the repositories can realise (ix,
// from configgen.IndexRepos) and says what moved. The rule, one
// dimension at a time, keeps every other dimension's shares and
// re-normalises the unrealisable dimension's mass over its realisable
// values (the projection with least Kullback–Leibler divergence from the
// profile's shares onto the realisable values):
//
//  1. a language with no usable file gets weight 0; its share goes to the
//     other languages in proportion to their weights;
//  2. a cursor behaviour no file of the remaining languages can take gets
//     weight 0, likewise; so does the open_files reference when no
//     repository has a second file to open;
//  3. a language whose files take only some cursor behaviours (or cannot
//     open a second file) gets a constraint saying so, and any value the
//     constraints then leave without a combination gets weight 0;
//  4. if the constraints make the shares of the linked dimensions
//     unreachable, those dimensions take the nearest reachable shares:
//     the marginals of the iterative-proportional-fitting joint over the
//     combinations left (the same joint MakePlan draws from).
//
// Fit.Capacity counts the distinct targets (a cursor or selection on a
// file) in the language × cursor cells left.
func FitToRepos(p *profiles.Profile, ix *profiles.RepoIndex) (*profiles.Profile, *profiles.Fit, error) {
	fitted := cloneProfile(p)
	before := map[string]map[string]float64{}
	for _, dim := range vocab.Dimensions() {
		before[dim] = p.Target(dim)
	}
	reasons := map[string]map[string]string{}
	zero := func(dim, value, reason string) {
		for i, w := range fitted.Dimensions[dim] {
			if w.Value == value && w.Weight > 0 {
				fitted.Dimensions[dim][i].Weight = 0
				if reasons[dim] == nil {
					reasons[dim] = map[string]string{}
				}
				reasons[dim][value] = reason
			}
		}
	}
	langs := positive(fitted, vocab.DimLanguage)
	for _, lang := range langs {
		if ix.LanguageTargets(lang) == 0 {
			zero(vocab.DimLanguage, lang, "no usable "+lang+" file in the repositories")
		}
	}
	if langs = positive(fitted, vocab.DimLanguage); len(langs) == 0 {
		return nil, nil, fmt.Errorf("fit profile %s to the repositories: no usable file in any language it asks for (%s); the repositories hold: %s",
			p.Name, strings.Join(positive(p, vocab.DimLanguage), ", "), ix.Describe())
	}
	for _, c := range positive(fitted, vocab.DimCursor) {
		if !slices.ContainsFunc(langs, func(l string) bool { return ix.Realises(l, c) }) {
			zero(vocab.DimCursor, c, "no usable file can take a "+c+" cursor")
		}
	}
	if slices.Contains(positive(fitted, vocab.DimReference), vocab.RefOpenFiles) &&
		!slices.ContainsFunc(langs, func(l string) bool { return ix.OpenFiles[l] }) {
		zero(vocab.DimReference, vocab.RefOpenFiles, "no repository has a second file to open")
	}
	var added []profiles.Constraint
	cursors := positive(fitted, vocab.DimCursor)
	openFiles := slices.Contains(positive(fitted, vocab.DimReference), vocab.RefOpenFiles)
	for _, lang := range langs {
		can := slices.DeleteFunc(slices.Clone(cursors), func(c string) bool { return !ix.Realises(lang, c) })
		if len(can) < len(cursors) {
			added = append(added, profiles.Constraint{Name: "repos: " + lang + " files take only these cursors",
				When: map[string][]string{vocab.DimLanguage: {lang}}, Require: map[string][]string{vocab.DimCursor: can}})
		}
		if openFiles && !ix.OpenFiles[lang] {
			added = append(added, profiles.Constraint{Name: "repos: no second file next to " + lang + " files",
				When: map[string][]string{vocab.DimLanguage: {lang}}, Exclude: map[string][]string{vocab.DimReference: {vocab.RefOpenFiles}}})
		}
	}
	fitted.Constraints = append(fitted.Constraints, added...)
	if err := dropUnreachable(fitted, zero); err != nil {
		return nil, nil, fmt.Errorf("fit profile %s to the repositories (%s): %w", p.Name, ix.Describe(), err)
	}
	if len(added) > 0 || len(reasons) > 0 {
		if err := nearestReachable(fitted); err != nil {
			return nil, nil, fmt.Errorf("fit profile %s to the repositories (%s): %w", p.Name, ix.Describe(), err)
		}
	}
	fit := &profiles.Fit{Targets: map[string]map[string]float64{}, Constraints: added, Index: ix}
	for _, dim := range vocab.Dimensions() {
		fit.Targets[dim] = fitted.Target(dim)
	}
	fit.Moves = moves(before, fit.Targets, reasons)
	for _, lang := range positive(fitted, vocab.DimLanguage) {
		for _, c := range positive(fitted, vocab.DimCursor) {
			fit.Capacity += ix.Targets[lang][c]
		}
	}
	return fitted, fit, nil
}

// PlanForRepos fits the profile to the repositories (FitToRepos) and plans
// cfg.N dialogues on the fit, or as many as the repositories hold distinct
// targets when that is fewer (Fit.CapacityLine says so). The plan names
// the profile as given, with its targets; the quotas follow Fit.Targets.
func PlanForRepos(p *profiles.Profile, ix *profiles.RepoIndex, cfg PlanConfig) (*profiles.Plan, error) {
	if cfg.N <= 0 {
		return nil, fmt.Errorf("plan: n must be positive, got %d", cfg.N)
	}
	fitted, fit, err := FitToRepos(p, ix)
	if err != nil {
		return nil, err
	}
	fit.Asked = cfg.N
	if fit.Capacity == 0 {
		return nil, fmt.Errorf("plan for %s: the repositories hold no target for this profile (%s)", p.Name, ix.Describe())
	}
	cfg.N = min(cfg.N, fit.Capacity)
	pl, err := MakePlan(fitted, cfg)
	if err != nil {
		return nil, err
	}
	pl.Profile, pl.ProfileHash, pl.Fit = p.Name, p.Hash(), fit
	for _, dim := range vocab.Dimensions() {
		pl.Targets[dim] = p.Target(dim)
	}
	return pl, nil
}

// dropUnreachable gives weight 0 to every value of a constrained
// dimension that no valid combination takes, until none is left.
func dropUnreachable(p *profiles.Profile, zero func(dim, value, reason string)) error {
	for range len(vocab.Dimensions()) * 8 {
		s := profiles.Compile(p)
		for _, dim := range s.Dims {
			if len(positive(p, dim)) == 0 {
				return fmt.Errorf("no value of %s is left", dim)
			}
		}
		cells, err := s.Cells()
		if err != nil {
			return err
		}
		if len(cells) == 0 {
			return fmt.Errorf("%w: no combination is left", ErrUnsatisfiable)
		}
		dropped := false
		for _, d := range s.Constrained {
			seen := make([]bool, len(s.Values[d]))
			for _, c := range cells {
				seen[c[d]] = true
			}
			for v, ok := range seen {
				if !ok {
					zero(s.Dims[d], s.Values[d][v], "no combination the repositories can realise allows it")
					dropped = true
				}
			}
		}
		if !dropped {
			return nil
		}
	}
	return fmt.Errorf("%w: the fit did not settle", ErrUnsatisfiable)
}

// nearestReachable sets the linked dimensions' weights to the marginals
// of the fitted joint when the constraints leave the shares out of reach
// (a gap above the half-point MakePlan's quotas can absorb).
func nearestReachable(p *profiles.Profile) error {
	s := profiles.Compile(p)
	cells, err := s.Cells()
	if err != nil {
		return err
	}
	joint, worst := s.Joint(cells)
	if math.Abs(worst.Target-worst.Achieved) <= 0.005 {
		return nil
	}
	total := 0.0
	for _, x := range joint {
		total += x
	}
	for _, d := range s.Constrained {
		m := map[string]float64{}
		for i, c := range cells {
			m[s.Values[d][c[d]]] += joint[i] / total
		}
		dim := s.Dims[d]
		for i, w := range p.Dimensions[dim] {
			if w.Weight > 0 {
				p.Dimensions[dim][i].Weight = m[w.Value]
			}
		}
	}
	return dropUnreachable(p, func(string, string, string) {})
}

// moves lists the values whose share changed, largest change first
// within each dimension (dimensions in canonical order).
func moves(before, after map[string]map[string]float64, reasons map[string]map[string]string) []profiles.Move {
	var out []profiles.Move
	for _, dim := range vocab.Dimensions() {
		var lost []string
		for _, v := range slices.Sorted(maps.Keys(reasons[dim])) {
			lost = append(lost, v)
		}
		var ms []profiles.Move
		for _, v := range slices.Sorted(maps.Keys(before[dim])) {
			from, to := before[dim][v], after[dim][v]
			if math.Abs(from-to) < moveTolerance {
				continue
			}
			why := reasons[dim][v]
			switch {
			case why != "":
			case to > from && len(lost) > 0:
				why = "takes a share of " + strings.Join(lost, ", ")
			default:
				why = "nearest share the repositories' combinations can reach"
			}
			ms = append(ms, profiles.Move{Dim: dim, Value: v, From: from, To: to, Reason: why})
		}
		slices.SortStableFunc(ms, func(a, b profiles.Move) int {
			return -compareFloat(math.Abs(a.From-a.To), math.Abs(b.From-b.To))
		})
		out = append(out, ms...)
	}
	return out
}

func compareFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// positive lists dim's values with a positive weight, in profile order.
func positive(p *profiles.Profile, dim string) []string {
	var out []string
	for _, w := range p.Dimensions[dim] {
		if w.Weight > 0 {
			out = append(out, w.Value)
		}
	}
	return out
}

// cloneProfile deep-copies the weights and constraints.
func cloneProfile(p *profiles.Profile) *profiles.Profile {
	q := *p
	q.Dimensions = map[string][]profiles.Weight{}
	for dim, ws := range p.Dimensions {
		q.Dimensions[dim] = slices.Clone(ws)
	}
	q.Constraints = slices.Clone(p.Constraints)
	return &q
}

// WriteMoves prints what the fit moved as a table, after a line naming
// what the repositories hold; nothing when the fit moved nothing.
func WriteMoves(w io.Writer, fit *profiles.Fit) error {
	if fit == nil || len(fit.Moves) == 0 && fit.CapacityLine() == "" {
		return nil
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	if line := fit.CapacityLine(); line != "" {
		fmt.Fprintln(tw, line)
	}
	if len(fit.Moves) > 0 {
		where := "the repositories"
		if fit.Index != nil {
			where += " (" + fit.Index.Describe() + ")"
		}
		fmt.Fprintf(tw, "moved to fit %s:\n", where)
		fmt.Fprintln(tw, "dimension\tvalue\tprofile\tplanned\twhy")
		for _, m := range fit.Moves {
			fmt.Fprintf(tw, "%s\t%s\t%.1f%%\t%.1f%%\t%s\n", m.Dim, m.Value, 100*m.From, 100*m.To, m.Reason)
		}
	}
	return tw.Flush()
}
