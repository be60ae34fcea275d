package judge

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"sort"
	"strings"

	"dialogfarm/dialog/vocab"
	"dialogfarm/internal/jsonl"
)

// Scored is one line of a judge-eval input file: an item's id and score,
// with the judged file's optional breakdown keys.
type Scored struct {
	ID       string  `json:"id"`
	Score    float64 `json:"score"`
	Intent   string  `json:"intent,omitempty"`
	Language string  `json:"language,omitempty"`
	Locale   string  `json:"locale,omitempty"`
}

// ReadScored reads a JSONL file of Scored lines; ids may be strings or
// numbers, intents any spelling vocab reads (written canonical). Blank
// lines are skipped; a line without an id is an error.
func ReadScored(r io.Reader, name string) ([]Scored, error) {
	var out []Scored
	err := jsonl.Each(r, name, func(_ int, line []byte) error {
		var raw struct {
			ID    json.RawMessage `json:"id"`
			Score *float64        `json:"score"`
			Scored
		}
		if err := json.Unmarshal(line, &raw); err != nil {
			return err
		}
		id := strings.Trim(string(raw.ID), `"`)
		if id == "" || id == "null" {
			return errors.New("no id")
		}
		if raw.Score == nil {
			return fmt.Errorf("id %s: no score", id)
		}
		s := raw.Scored
		s.ID, s.Score = id, *raw.Score
		if n := vocab.Intent(s.Intent); n != "" {
			s.Intent = n // older files spell optimize "optimise", question "general"
		}
		out = append(out, s)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read scores: %w", err)
	}
	return out, nil
}

// EvalOptions configures the bootstrap.
type EvalOptions struct {
	Resamples int    // at least 1000
	Seed      uint64 // the same seed gives the same intervals
}

// DefaultEvalOptions: 2000 resamples, seed 1.
func DefaultEvalOptions() EvalOptions { return EvalOptions{Resamples: 2000, Seed: 1} }

// Fraction is a ratio with its counts; Value is null when Of is 0.
type Fraction struct {
	Hits  int      `json:"hits"`
	Of    int      `json:"of"`
	Value *float64 `json:"value"`
}

func fraction(hits, of int) Fraction {
	f := Fraction{Hits: hits, Of: of}
	if of > 0 {
		v := float64(hits) / float64(of)
		f.Value = &v
	}
	return f
}

// ScoreStat is the judge's precision and recall for one score: of the items
// the judge gave this score, the share humans gave it too; of the items
// humans gave it, the share the judge gave it too.
type ScoreStat struct {
	Score     int      `json:"score"`
	Precision Fraction `json:"precision"`
	Recall    Fraction `json:"recall"`
}

// Agreement is the judge–human agreement over one group of items.
type Agreement struct {
	Group string `json:"group"`
	N     int    `json:"n"`
	// Accuracy5 as DialogAgent defines it: of the items the judge scored
	// 5, the share humans also scored 5 (the precision of score 5).
	Accuracy5 Fraction    `json:"accuracy5"`
	Exact     Fraction    `json:"exact_agreement"`
	PerScore  []ScoreStat `json:"per_score"`
	// Kappa is quadratic-weighted Cohen's kappa on the 1..5 scale, with a
	// percentile bootstrap 95% interval; null when undefined (fewer than
	// two items, or every item in one category for both raters), printed
	// as n/a.
	Kappa     *float64 `json:"kappa"`
	KappaLow  *float64 `json:"kappa_ci_low"`
	KappaHigh *float64 `json:"kappa_ci_high"`
}

// Report is the judge audit: overall, by intent, language and locale, and
// every id that could not be paired.
type Report struct {
	Resamples  int         `json:"resamples"`
	Seed       uint64      `json:"seed"`
	Overall    Agreement   `json:"overall"`
	ByIntent   []Agreement `json:"by_intent"`
	ByLanguage []Agreement `json:"by_language"`
	ByLocale   []Agreement `json:"by_locale"`
	// OnlyJudged and OnlyLabels are ids present in one file only.
	OnlyJudged []string `json:"only_judged"`
	OnlyLabels []string `json:"only_labels"`
	// Unscored are judged ids whose score is outside 1..5 (an unparseable
	// verdict's 0); they are not paired.
	Unscored []string `json:"unscored"`
	// Duplicates are ids that appear more than once in a file; the last
	// line wins.
	DuplicateJudged []string `json:"duplicate_judged"`
	DuplicateLabels []string `json:"duplicate_labels"`
}

// pair is one item scored by both.
type pair struct {
	judge, human int
	item         Scored
}

// Evaluate pairs judged items with human labels by id and computes the
// agreement report. Scores are rounded to the nearest integer (half up).
// A label outside 1..5 is an error.
func Evaluate(judged, labels []Scored, opt EvalOptions) (Report, error) {
	if opt.Resamples < 1000 {
		return Report{}, fmt.Errorf("judge-eval: %d bootstrap resamples, need at least 1000", opt.Resamples)
	}
	rep := Report{Resamples: opt.Resamples, Seed: opt.Seed}
	human := map[string]int{}
	for _, l := range labels {
		s := roundScore(l.Score)
		if s < 1 || s > 5 {
			return Report{}, fmt.Errorf("judge-eval: label %s has score %v, outside 1..5", l.ID, l.Score)
		}
		if _, dup := human[l.ID]; dup {
			rep.DuplicateLabels = append(rep.DuplicateLabels, l.ID)
		}
		human[l.ID] = s
	}
	last := map[string]Scored{}
	var order []string
	for _, j := range judged {
		if _, dup := last[j.ID]; dup {
			rep.DuplicateJudged = append(rep.DuplicateJudged, j.ID)
		} else {
			order = append(order, j.ID)
		}
		last[j.ID] = j
	}
	var pairs []pair
	for _, id := range order {
		j := last[id]
		h, ok := human[id]
		switch s := roundScore(j.Score); {
		case !ok:
			rep.OnlyJudged = append(rep.OnlyJudged, id)
		case s < 1 || s > 5:
			rep.Unscored = append(rep.Unscored, id)
		default:
			pairs = append(pairs, pair{judge: s, human: h, item: j})
		}
	}
	for id := range human {
		if _, ok := last[id]; !ok {
			rep.OnlyLabels = append(rep.OnlyLabels, id)
		}
	}
	for _, ids := range [][]string{rep.OnlyJudged, rep.OnlyLabels, rep.Unscored, rep.DuplicateJudged, rep.DuplicateLabels} {
		sort.Strings(ids)
	}
	rep.Overall = agreement("overall", pairs, opt)
	rep.ByIntent = breakdown("intent", pairs, opt, func(s Scored) string { return s.Intent })
	rep.ByLanguage = breakdown("language", pairs, opt, func(s Scored) string { return s.Language })
	rep.ByLocale = breakdown("locale", pairs, opt, func(s Scored) string { return s.Locale })
	return rep, nil
}

func roundScore(s float64) int { return int(math.Floor(s + 0.5)) }

// breakdown computes the agreement per value of key, sorted by value; an
// empty value is "(none)".
func breakdown(dim string, pairs []pair, opt EvalOptions, key func(Scored) string) []Agreement {
	groups := map[string][]pair{}
	for _, p := range pairs {
		k := key(p.item)
		if k == "" {
			k = "(none)"
		}
		groups[k] = append(groups[k], p)
	}
	names := make([]string, 0, len(groups))
	for k := range groups {
		names = append(names, k)
	}
	sort.Strings(names)
	out := make([]Agreement, 0, len(names))
	for _, k := range names {
		out = append(out, agreement(dim+"="+k, groups[k], opt))
	}
	return out
}

// agreement computes every statistic for one group.
func agreement(group string, pairs []pair, opt EvalOptions) Agreement {
	a := Agreement{Group: group, N: len(pairs)}
	var exact int
	var judgeN, humanN, both [6]int
	for _, p := range pairs {
		judgeN[p.judge]++
		humanN[p.human]++
		if p.judge == p.human {
			exact++
			both[p.judge]++
		}
	}
	a.Exact = fraction(exact, len(pairs))
	a.Accuracy5 = fraction(both[5], judgeN[5])
	for s := 1; s <= 5; s++ {
		a.PerScore = append(a.PerScore, ScoreStat{Score: s, Precision: fraction(both[s], judgeN[s]), Recall: fraction(both[s], humanN[s])})
	}
	k, ok := quadraticKappa(pairs)
	if !ok {
		return a
	}
	a.Kappa = &k
	lo, hi, ok := bootstrapKappa(pairs, opt.Resamples, groupSeed(opt.Seed, group))
	if ok {
		a.KappaLow, a.KappaHigh = &lo, &hi
	}
	return a
}

// quadraticKappa is Cohen's kappa with quadratic weights on the 1..5 scale:
//
//	κ = 1 − Σ w_ij O_ij / Σ w_ij E_ij,  w_ij = (i−j)² / (5−1)²,  E_ij = a_i b_j / N
//
// where O is the judge×human count matrix and a, b its row and column
// totals. It reports false when the expected disagreement is 0, and for
// fewer than two items: one item has no chance agreement to correct for
// (its κ is 1 or 0 by construction, never a measurement).
func quadraticKappa(pairs []pair) (float64, bool) {
	var judgeN, humanN [6]float64
	var observed float64
	for _, p := range pairs {
		judgeN[p.judge]++
		humanN[p.human]++
		d := float64(p.judge - p.human)
		observed += d * d
	}
	n := float64(len(pairs))
	var expected float64
	for i := 1; i <= 5; i++ {
		for j := 1; j <= 5; j++ {
			d := float64(i - j)
			expected += d * d * judgeN[i] * humanN[j] / n
		}
	}
	if n < 2 || expected == 0 {
		return 0, false
	}
	// The weights' common factor 1/16 cancels in the ratio.
	return 1 - observed/expected, true
}

// bootstrapKappa is the percentile 95% interval of kappa over resamples of
// the pairs drawn with replacement; resamples where kappa is undefined are
// skipped.
func bootstrapKappa(pairs []pair, resamples int, seed uint64) (lo, hi float64, ok bool) {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	ks := make([]float64, 0, resamples)
	sample := make([]pair, len(pairs))
	for range resamples {
		for i := range sample {
			sample[i] = pairs[rng.IntN(len(pairs))]
		}
		if k, ok := quadraticKappa(sample); ok {
			ks = append(ks, k)
		}
	}
	if len(ks) == 0 {
		return 0, 0, false
	}
	sort.Float64s(ks)
	return quantile(ks, 0.025), quantile(ks, 0.975), true
}

// quantile of sorted xs with linear interpolation between order statistics
// (R's type 7).
func quantile(xs []float64, q float64) float64 {
	h := q * float64(len(xs)-1)
	i := int(math.Floor(h))
	if i+1 >= len(xs) {
		return xs[len(xs)-1]
	}
	return xs[i] + (h-float64(i))*(xs[i+1]-xs[i])
}

// groupSeed derives a group's bootstrap seed, so a group's interval does
// not depend on which other groups exist.
func groupSeed(seed uint64, group string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(group))
	return seed ^ h.Sum64()
}
