package redact

import (
	"math"
	"regexp"
	"strings"
	"unicode"
)

var (
	wordRun    = regexp.MustCompile(`[A-Z]?[a-z]{2,}|[A-Z]{2,}`)
	base64Line = regexp.MustCompile(`^[A-Za-z0-9+/]+={0,2}$`)
)

// randomLooking is the high-entropy rule (see the package doc).
func randomLooking(s string) bool {
	if len(s) < 20 || !strings.ContainsAny(s, "0123456789") || !hasUpperAndLower(s) || hexRe.MatchString(s) ||
		placeholderRe.MatchString(s) || entropy(s) < 3.5 {
		return false
	}
	return meanClassRun(s) <= 2.2 && !identifierLike(s)
}

// identifierLike says whether s reads like a camelCase identifier made of
// words (CreateImageModelDallE2): most of it is word-shaped runs and its
// letters hold as many vowels as words do. About 3-7% of random 20-40
// character strings pass as identifiers; other rules cover named secrets.
func identifierLike(s string) bool {
	letters, vowels := 0, 0
	for _, c := range s {
		if unicode.IsLetter(c) {
			letters++
			if strings.ContainsRune("aeiouAEIOU", c) {
				vowels++
			}
		}
	}
	covered := 0
	for _, w := range wordRun.FindAllString(s, -1) {
		covered += len(w)
	}
	v, cov := float64(vowels)/float64(max(letters, 1)), float64(covered)/float64(len(s))
	return (v >= 0.3 && cov >= 0.5) || (v >= 0.25 && cov >= 0.75)
}

func hasUpperAndLower(s string) bool {
	return strings.ContainsFunc(s, unicode.IsUpper) && strings.ContainsFunc(s, unicode.IsLower)
}

// meanClassRun is the mean length of the runs of one character class
// (upper, lower, digit, other) in s: about 1.6 for a random base64 string,
// 3 or more for camelCase or snake_case identifiers.
func meanClassRun(s string) float64 {
	class := func(c byte) int {
		switch {
		case c >= 'A' && c <= 'Z':
			return 0
		case c >= 'a' && c <= 'z':
			return 1
		case c >= '0' && c <= '9':
			return 2
		}
		return 3
	}
	runs := 1
	for i := 1; i < len(s); i++ {
		if class(s[i]) != class(s[i-1]) {
			runs++
		}
	}
	return float64(len(s)) / float64(runs)
}

// pemBodies finds runs of three or more lines of bare base64 (every line
// but the last at least 40 characters long), each run one finding from its
// first character to its last.
func pemBodies(text string) []Finding {
	var out []Finding
	start, end, n, lastShort := -1, -1, 0, false
	flush := func() {
		if n >= 3 {
			out = append(out, Finding{Rule: rulePEMBody, Start: start, End: end})
		}
		start, end, n, lastShort = -1, -1, 0, false
	}
	for off := 0; off <= len(text); {
		nl := strings.IndexByte(text[off:], '\n')
		line := text[off:]
		if nl >= 0 {
			line = text[off : off+nl]
		}
		trimmed := strings.Trim(line, " \t\r\"',+")
		long := len(trimmed) >= 40
		ok := len(trimmed) >= 4 && base64Line.MatchString(trimmed) && (!long || entropy(trimmed) >= 4)
		if ok && n > 0 && lastShort {
			flush()
		}
		switch {
		case ok && n == 0 && long:
			start = off + strings.Index(line, trimmed)
			fallthrough
		case ok && n > 0:
			end, n, lastShort = off+strings.Index(line, trimmed)+len(trimmed), n+1, !long
		default:
			flush()
		}
		if nl < 0 {
			break
		}
		off += nl + 1
	}
	flush()
	return out
}

// entropy is the Shannon entropy of s in bits per character.
func entropy(s string) float64 {
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	h, n := 0.0, float64(len(s))
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}
