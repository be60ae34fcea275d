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
	"bytes"
	"compress/gzip"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strings"
	"unicode"

	"dialogfarm/dialog/vocab"
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

func stats(qs []Query, lx lexicon) Stats {
	s := Stats{N: len(qs)}
	if len(qs) == 0 {
		return s
	}
	var all []string
	for _, q := range qs {
		all = append(all, q.Text)
		s.MeanLength += vocab.Words(q.Text)
		style := vocab.QueryStyleOf(q.Text)
		if strings.HasSuffix(style, "_code") {
			s.CodeShare++
		}
		if strings.HasPrefix(style, vocab.StyleTerse) {
			s.TerseRate++
		}
		if hasTypo(q.Text, lx) {
			s.TypoRate++
		}
	}
	n := float64(len(qs))
	s.MeanLength /= n
	s.CodeShare /= n
	s.TerseRate /= n
	s.TypoRate /= n
	s.Distinct1, s.Distinct2, s.Distinct3 = distinct(qs, 1), distinct(qs, 2), distinct(qs, 3)
	s.Compression = compression(strings.Join(all, "\n"))
	s.Spread = spread(qs)
	return s
}

// tokens splits a text into words (lower case) and CJK characters.
func tokens(text string) []string {
	var out []string
	var word []rune
	flush := func() {
		if len(word) > 0 {
			out = append(out, strings.ToLower(string(word)))
			word = word[:0]
		}
	}
	for _, r := range text {
		switch {
		case vocab.IsCJK(r):
			flush()
			out = append(out, string(r))
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '\'':
			word = append(word, r)
		default:
			flush()
		}
	}
	flush()
	return out
}

func distinct(qs []Query, n int) float64 {
	seen := map[string]bool{}
	total := 0
	for _, q := range qs {
		t := tokens(q.Text)
		for i := 0; i+n <= len(t); i++ {
			seen[strings.Join(t[i:i+n], " ")] = true
			total++
		}
	}
	if total == 0 {
		return 0
	}
	return float64(len(seen)) / float64(total)
}

func compression(text string) float64 {
	if text == "" {
		return 0
	}
	var b bytes.Buffer
	w, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	w.Write([]byte(text))
	w.Close()
	return float64(len(text)) / float64(b.Len())
}

func lengths(qs []Query) []float64 {
	out := make([]float64, len(qs))
	for i, q := range qs {
		out[i] = vocab.Words(q.Text)
	}
	slices.Sort(out)
	return out
}

// ks is the two-sample Kolmogorov–Smirnov statistic of sorted samples.
func ks(a, b []float64) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 1
	}
	i, j, d := 0, 0, 0.0
	for i < len(a) && j < len(b) {
		x := min(a[i], b[j])
		for i < len(a) && a[i] <= x {
			i++
		}
		for j < len(b) && b[j] <= x {
			j++
		}
		d = max(d, math.Abs(float64(i)/float64(len(a))-float64(j)/float64(len(b))))
	}
	return d
}

func vocabulary(qs []Query) map[string]int {
	m := map[string]int{}
	for _, q := range qs {
		for _, t := range tokens(q.Text) {
			m[t]++
		}
	}
	return m
}

// lexicon is the words of all the queries compared, with their counts,
// and the words one letter short of a frequent word (three or more).
type lexicon struct {
	counts map[string]int
	short  map[string]bool
}

func newLexicon(sets ...[]Query) lexicon {
	lx := lexicon{counts: map[string]int{}, short: map[string]bool{}}
	for _, qs := range sets {
		for _, q := range qs {
			prose, _ := vocab.SplitCode(q.Text)
			for _, t := range tokens(prose) {
				lx.counts[t]++
			}
		}
	}
	for w, n := range lx.counts {
		if r := []rune(w); n >= 3 && len(r) >= 6 {
			for i := range r {
				lx.short[string(slices.Delete(slices.Clone(r), i, i+1))] = true
			}
		}
	}
	return lx
}

// hasTypo: a prose word of five or more letters seen once in all the
// queries that is one edit (two letters swapped, one dropped, one extra)
// from a word seen three times or more.
func hasTypo(text string, lx lexicon) bool {
	prose, _ := vocab.SplitCode(text)
	for _, w := range tokens(prose) {
		r := []rune(w)
		if len(r) < 5 || lx.counts[w] != 1 || !allLetters(r) {
			continue
		}
		if lx.short[w] {
			return true // a letter dropped
		}
		for i := range r {
			if i+1 < len(r) {
				s := slices.Clone(r)
				s[i], s[i+1] = s[i+1], s[i]
				if lx.counts[string(s)] >= 3 {
					return true // two letters swapped
				}
			}
			if lx.counts[string(slices.Delete(slices.Clone(r), i, i+1))] >= 3 {
				return true // a letter too many
			}
		}
	}
	return false
}

func allLetters(r []rune) bool {
	for _, c := range r {
		if !unicode.IsLetter(c) {
			return false
		}
	}
	return true
}

func localeShares(qs []Query) map[string]float64 {
	m := map[string]float64{}
	for _, q := range qs {
		m[q.Locale]++
	}
	for k := range m {
		m[k] /= float64(len(qs))
	}
	return m
}

// jsd is the Jensen–Shannon divergence of two distributions, in bits.
func jsd(p, q map[string]float64) float64 {
	keys := map[string]bool{}
	for k := range p {
		keys[k] = true
	}
	for k := range q {
		keys[k] = true
	}
	d := 0.0
	for k := range keys {
		m := (p[k] + q[k]) / 2
		if p[k] > 0 {
			d += p[k] / 2 * math.Log2(p[k]/m)
		}
		if q[k] > 0 {
			d += q[k] / 2 * math.Log2(q[k]/m)
		}
	}
	return d
}

// dims is the embedding's size.
const dims = 512

// embed hashes a text's character 3-grams into a unit vector.
func embed(text string) []float64 {
	v := make([]float64, dims)
	r := []rune(" " + strings.ToLower(strings.Join(strings.Fields(text), " ")) + " ")
	for i := 0; i+3 <= len(r); i++ {
		h := fnv.New32a()
		h.Write([]byte(string(r[i : i+3])))
		v[h.Sum32()%dims]++
	}
	norm := 0.0
	for _, x := range v {
		norm += x * x
	}
	if norm > 0 {
		norm = math.Sqrt(norm)
		for i := range v {
			v[i] /= norm
		}
	}
	return v
}

func cosine(a, b []float64) float64 {
	dot, na, nb := 0.0, 0.0, 0.0
	for i := range a {
		dot += a[i] * b[i]
		na += a[i] * a[i]
		nb += b[i] * b[i]
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

func centroid(qs []Query) []float64 {
	c := make([]float64, dims)
	for _, q := range sample(qs) {
		for i, x := range embed(q.Text) {
			c[i] += x
		}
	}
	return c
}

// maxSpread bounds the queries the spread is computed on (the first
// ones, in order: the pairs grow with the square).
const maxSpread = 400

func sample(qs []Query) []Query {
	if len(qs) <= maxSpread {
		return qs
	}
	out := make([]Query, 0, maxSpread)
	step := float64(len(qs)) / maxSpread
	for i := range maxSpread {
		out = append(out, qs[int(float64(i)*step)])
	}
	return out
}

// spread is the mean pairwise cosine distance of the queries' vectors.
func spread(qs []Query) float64 {
	s := sample(qs)
	vs := make([][]float64, len(s))
	for i, q := range s {
		vs[i] = embed(q.Text)
	}
	sum, n := 0.0, 0
	for i := range vs {
		for j := i + 1; j < len(vs); j++ {
			sum += 1 - cosine(vs[i], vs[j])
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
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
