// Package realism measures how far generated queries sit from real ones:
// the queries of a run's configs against those of interaction logs (the
// logs a profile was fitted from, or any reference set). Nothing is
// downloaded: every measure is computed from the texts.
//
// Measures, over a set of queries (Stats):
//
//   - length: word units (a CJK character half a word, vocab.Words) of
//     the whole query; two sets are compared with the two-sample
//     Kolmogorov–Smirnov statistic (the largest gap between the two
//     empirical distribution functions, 0 to 1);
//   - distinct-1/2/3: distinct n-grams over all n-grams of the set
//     (tokens: words, and each CJK character); lower is more repetitive;
//   - compression ratio: the set's text over its gzip size; higher is
//     more repetitive (templates compress well);
//   - vocabulary: Jaccard overlap of the two sets' word types, and the
//     coverage of the reference's tokens by the generated vocabulary;
//   - code share: queries that paste code (vocab.QueryStyleOf);
//   - locale mix: the Jensen–Shannon divergence (bits) of the locales
//     vocab.DetectLocale reads;
//   - terse rate: queries of at most six words; typo rate: queries with a
//     word of five or more letters seen once in both sets together that
//     is one edit (a swap, a drop, a doubled letter) from a word seen
//     three times or more — a typo is rare, its correct form is not;
//   - embedding spread (the centroid distance is flagged for the whole
//     set only: a small cell's centroid moves with every query): each query's character 3-grams hashed into a
//     512-dimension vector (the hashing trick, L2-normalised); the spread
//     is the mean pairwise cosine distance within the set (diversity),
//     and the centroid distance the cosine distance between the sets'
//     mean vectors.
//
// Compare computes them for all queries and per cell (intent × locale:
// the generated queries' from their configs, the reference's from
// vocab.IntentOf and vocab.DetectLocale), and flags a cell whose
// generated queries are far from the reference (Thresholds; cells with
// fewer than MinCell queries on either side are measured but not
// flagged).
package realism

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Query is one query and its cell.
type Query struct {
	Text   string `json:"text"`
	Intent string `json:"intent"`
	Locale string `json:"locale"`
}

// Thresholds say when a cell's generated queries are flagged as far from
// the reference.
type Thresholds struct {
	KS            float64 `json:"ks"`             // length distributions: KS statistic above
	Distinct2     float64 `json:"distinct_2"`     // |distinct-2 generated − reference| above
	Compression   float64 `json:"compression"`    // compression ratio generated / reference above
	CodeShare     float64 `json:"code_share"`     // |code share difference| above
	TerseRate     float64 `json:"terse_rate"`     // |terse rate difference| above
	TypoRate      float64 `json:"typo_rate"`      // |typo rate difference| above
	SpreadRatio   float64 `json:"spread_ratio"`   // embedding spread generated / reference below
	Centroid      float64 `json:"centroid"`       // centroid cosine distance above
	LocaleJSD     float64 `json:"locale_jsd"`     // overall locale mix JSD (bits) above
	VocabCoverage float64 `json:"vocab_coverage"` // coverage of the reference's tokens below
}

// DefaultThresholds: chosen so that two random halves of the hand-written
// reference logs (testdata) raise no flag, and the templates before the
// paraphrase banks raise several (see the package's tests).
func DefaultThresholds() Thresholds {
	return Thresholds{KS: 0.35, Distinct2: 0.25, Compression: 1.6, CodeShare: 0.25, TerseRate: 0.35, TypoRate: 0.15,
		SpreadRatio: 0.75, Centroid: 0.3, LocaleJSD: 0.1, VocabCoverage: 0.4}
}

// MinCell is the fewest queries a cell needs on each side to be flagged.
const MinCell = 12

// Stats are the measures of one set of queries.
type Stats struct {
	N           int     `json:"n"`
	MeanLength  float64 `json:"mean_length"`
	Distinct1   float64 `json:"distinct_1"`
	Distinct2   float64 `json:"distinct_2"`
	Distinct3   float64 `json:"distinct_3"`
	Compression float64 `json:"compression"`
	CodeShare   float64 `json:"code_share"`
	TerseRate   float64 `json:"terse_rate"`
	TypoRate    float64 `json:"typo_rate"`
	Spread      float64 `json:"spread"`
}

// Comparison compares generated queries with reference ones.
type Comparison struct {
	Cell          string  `json:"cell"`
	Generated     Stats   `json:"generated"`
	Reference     Stats   `json:"reference"`
	KS            float64 `json:"ks"`
	Jaccard       float64 `json:"vocab_jaccard"`
	VocabCoverage float64 `json:"vocab_coverage"`
	Centroid      float64 `json:"centroid"`
	// Flags name the measures beyond their threshold.
	Flags []string `json:"flags,omitempty"`
}

// Report is the realism section of a fidelity report.
type Report struct {
	// Reference names the reference set (a log file).
	Reference  string       `json:"reference"`
	Thresholds Thresholds   `json:"thresholds"`
	Overall    Comparison   `json:"overall"`
	LocaleJSD  float64      `json:"locale_jsd"`
	Locales    LocaleMix    `json:"locales"`
	Cells      []Comparison `json:"cells"`
	// Flagged counts the flags of every comparison.
	Flagged int `json:"flagged"`
}

// LocaleMix is the share of each locale in both sets.
type LocaleMix struct {
	Generated map[string]float64 `json:"generated"`
	Reference map[string]float64 `json:"reference"`
}

// Compare measures generated queries against reference ones, overall and
// per intent × locale cell.
func Compare(reference string, gen, ref []Query, th Thresholds) *Report {
	r := &Report{Reference: reference, Thresholds: th}
	lx := newLexicon(gen, ref)
	r.Overall = compare("all", gen, ref, th, lx)
	genLoc, refLoc := localeShares(gen), localeShares(ref)
	r.Locales = LocaleMix{Generated: genLoc, Reference: refLoc}
	r.LocaleJSD = jsd(genLoc, refLoc)
	if r.LocaleJSD > th.LocaleJSD {
		r.Overall.Flags = append(r.Overall.Flags, "locale_jsd")
	}
	cells := map[string][2][]Query{}
	for _, q := range gen {
		k := q.Intent + "/" + q.Locale
		c := cells[k]
		c[0] = append(c[0], q)
		cells[k] = c
	}
	for _, q := range ref {
		k := q.Intent + "/" + q.Locale
		c := cells[k]
		c[1] = append(c[1], q)
		cells[k] = c
	}
	keys := make([]string, 0, len(cells))
	for k := range cells {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		c := cells[k]
		if len(c[0]) == 0 || len(c[1]) == 0 {
			continue
		}
		r.Cells = append(r.Cells, compare(k, c[0], c[1], th, lx))
	}
	r.Flagged = len(r.Overall.Flags)
	for _, c := range r.Cells {
		r.Flagged += len(c.Flags)
	}
	return r
}

func compare(cell string, gen, ref []Query, th Thresholds, lx lexicon) Comparison {
	c := Comparison{Cell: cell, Generated: stats(gen, lx), Reference: stats(ref, lx)}
	c.KS = ks(lengths(gen), lengths(ref))
	gv, rv := vocabulary(gen), vocabulary(ref)
	inter, cover, total := 0, 0, 0
	for w := range gv {
		if rv[w] > 0 {
			inter++
		}
	}
	for w, n := range rv {
		total += n
		if gv[w] > 0 {
			cover += n
		}
	}
	if union := len(gv) + len(rv) - inter; union > 0 {
		c.Jaccard = float64(inter) / float64(union)
	}
	if total > 0 {
		c.VocabCoverage = float64(cover) / float64(total)
	}
	c.Centroid = 1 - cosine(centroid(gen), centroid(ref))
	if len(gen) < MinCell || len(ref) < MinCell {
		return c
	}
	flag := func(name string, far bool) {
		if far {
			c.Flags = append(c.Flags, name)
		}
	}
	g, r := c.Generated, c.Reference
	flag("ks", c.KS > th.KS)
	flag("distinct_2", math.Abs(g.Distinct2-r.Distinct2) > th.Distinct2)
	flag("compression", r.Compression > 0 && g.Compression/r.Compression > th.Compression)
	flag("code_share", math.Abs(g.CodeShare-r.CodeShare) > th.CodeShare)
	flag("terse_rate", math.Abs(g.TerseRate-r.TerseRate) > th.TerseRate)
	flag("typo_rate", math.Abs(g.TypoRate-r.TypoRate) > th.TypoRate)
	flag("spread", r.Spread > 0 && g.Spread/r.Spread < th.SpreadRatio)
	// The centroid of a small cell moves with every query (CJK 3-grams
	// above all): it is flagged for the whole set only.
	flag("centroid", cell == "all" && c.Centroid > th.Centroid)
	flag("vocab_coverage", c.VocabCoverage < th.VocabCoverage)
	return c
}

// Summary renders the overall comparison and the flagged cells for a
// terminal.
func (r *Report) Summary() string {
	var b strings.Builder
	o := r.Overall
	fmt.Fprintf(&b, "query realism against %s (%d generated, %d reference queries):\n", r.Reference, o.Generated.N, o.Reference.N)
	fmt.Fprintf(&b, "  %-16s %10s %10s\n", "", "generated", "reference")
	row := func(name string, g, ref float64) { fmt.Fprintf(&b, "  %-16s %10.3f %10.3f\n", name, g, ref) }
	row("mean length", o.Generated.MeanLength, o.Reference.MeanLength)
	row("distinct-1", o.Generated.Distinct1, o.Reference.Distinct1)
	row("distinct-2", o.Generated.Distinct2, o.Reference.Distinct2)
	row("distinct-3", o.Generated.Distinct3, o.Reference.Distinct3)
	row("compression", o.Generated.Compression, o.Reference.Compression)
	row("code share", o.Generated.CodeShare, o.Reference.CodeShare)
	row("terse rate", o.Generated.TerseRate, o.Reference.TerseRate)
	row("typo rate", o.Generated.TypoRate, o.Reference.TypoRate)
	row("spread", o.Generated.Spread, o.Reference.Spread)
	fmt.Fprintf(&b, "  length KS %.3f, vocabulary Jaccard %.3f, coverage %.3f, centroid distance %.3f, locale JSD %.4f bits\n",
		o.KS, o.Jaccard, o.VocabCoverage, o.Centroid, r.LocaleJSD)
	fmt.Fprintf(&b, "  flags: %d", r.Flagged)
	if len(o.Flags) > 0 {
		fmt.Fprintf(&b, " (all: %s)", strings.Join(o.Flags, ", "))
	}
	b.WriteString("\n")
	for _, c := range r.Cells {
		if len(c.Flags) > 0 {
			fmt.Fprintf(&b, "  %s (%d vs %d): %s\n", c.Cell, c.Generated.N, c.Reference.N, strings.Join(c.Flags, ", "))
		}
	}
	return b.String()
}
