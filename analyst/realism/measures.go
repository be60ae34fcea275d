package realism

// The measures of one set of queries and the distances between two: the
// tokens, distinct-n, compression, the length KS statistic, the
// vocabulary and the typo lexicon, locale shares and their JSD, and the
// character 3-gram embedding with its centroid and spread.

import (
	"bytes"
	"compress/gzip"
	"hash/fnv"
	"math"
	"slices"
	"strings"
	"unicode"

	"dialogfarm/dialog/vocab"
)

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
