package redact

import (
	"encoding/base64"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

var (
	publicPEM  = regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*(?:PUBLIC KEY|CERTIFICATE|CERTIFICATE REQUEST|X509 CRL|PGP SIGNATURE|PGP MESSAGE|PUBLIC KEY BLOCK|SIGNATURE)-----\s*$`)
	typeCodes  = regexp.MustCompile(`^(?:[A-Z][a-z]{0,2}[0-9]{1,3})+[A-Z]?$`) // I32I64, F64
	wordRun    = regexp.MustCompile(`[A-Z]?[a-z]{2,}|[A-Z]{2,}`)
	base64Line = regexp.MustCompile(`^[A-Za-z0-9+/]+={0,2}$`)
)

// Data, not secrets: the body of a public PEM block (a certificate, a
// public key) is public; a line holding more than maxBlobTokens random-looking
// tokens is a blob (an image in a notebook, a base64 dump), and a text in
// which at least minDataTokens of them cover at least minDataShare of the
// lines is a data file (test vectors, a BPE rank table): the unnamed
// rules (high-entropy, pem-body) do not report them; named rules still do.
const (
	maxBlobTokens = 8
	minDataTokens = 20
	minDataShare  = 0.25
)

// dropData removes the unnamed findings of blobs and data files.
func dropData(text string, all []Finding) []Finding {
	unnamed := 0
	for _, f := range all {
		if f.Rule == ruleHighEntropy || f.Rule == rulePEMBody {
			unnamed++
		}
	}
	if unnamed == 0 {
		return all
	}
	var starts []int // where each line starts
	for i := 0; i >= 0 && i <= len(text); {
		starts = append(starts, i)
		nl := strings.IndexByte(text[i:], '\n')
		if nl < 0 {
			break
		}
		i += nl + 1
	}
	lineOf := func(off int) int { return sort.SearchInts(starts, off+1) - 1 }
	perLine := map[int]int{}
	for _, f := range all {
		if f.Rule == ruleHighEntropy || f.Rule == rulePEMBody {
			perLine[lineOf(f.Start)]++
		}
	}
	lines := len(starts)
	public := publicBlocks(text)
	data := unnamed >= minDataTokens && float64(len(perLine)) >= minDataShare*float64(lines)
	out := all[:0]
	for _, f := range all {
		if f.Rule == ruleHighEntropy || f.Rule == rulePEMBody {
			if data || perLine[lineOf(f.Start)] > maxBlobTokens || slices.ContainsFunc(public, func(b [2]int) bool { return b[0] <= f.Start && f.End <= b[1] }) {
				continue
			}
		}
		out = append(out, f)
	}
	return out
}

// publicBlock is a PEM block of a public key, a certificate or a
// signature.
var publicBlock = regexp.MustCompile(`-----BEGIN ([A-Z0-9 ]*(?:PUBLIC KEY|CERTIFICATE|CERTIFICATE REQUEST|X509 CRL|PGP SIGNATURE|PGP MESSAGE|PUBLIC KEY BLOCK|SIGNATURE))-----[\s\S]*?-----END `)

// publicBlocks returns the spans of the public PEM blocks of text.
func publicBlocks(text string) [][2]int {
	if !strings.Contains(text, "-----BEGIN ") {
		return nil
	}
	var out [][2]int
	for _, m := range publicBlock.FindAllStringIndex(text, -1) {
		out = append(out, [2]int{m[0], m[1]})
	}
	return out
}

// encodedText says whether s is standard or URL-safe base64 of mostly
// printable UTF-8 text (an encoded word list, a BPE token, "user:password" is
// not unnamed key material).
func encodedText(s string) bool {
	s = strings.TrimRight(s, "=")
	var b []byte
	var err error
	if strings.ContainsAny(s, "-_") {
		b, err = base64.RawURLEncoding.DecodeString(s)
	} else {
		b, err = base64.RawStdEncoding.DecodeString(s)
	}
	if err != nil || len(b) == 0 {
		return false
	}
	if !utf8.Valid(b) {
		return false
	}
	printable, n := 0, 0
	for _, c := range string(b) {
		n++
		if unicode.IsPrint(c) || c == '\n' || c == '\t' || c == '\r' {
			printable++
		}
	}
	return float64(printable) >= 0.9*float64(n)
}

// randomLooking is the high-entropy rule (see the package doc).
func randomLooking(s string) bool {
	if len(s) < 20 || !strings.ContainsAny(s, "0123456789") || !hasUpperAndLower(s) || hexRe.MatchString(s) ||
		placeholderRe.MatchString(s) || entropy(s) < 3.5 {
		return false
	}
	return meanClassRun(s) <= 2.2 && !identifierLike(s) && !encodedText(s)
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
	return (v >= 0.3 && cov >= 0.5) || (v >= 0.25 && cov >= 0.75) || (v >= 0.15 && cov >= 0.85) ||
		strings.Contains(s, "__") || wordyParts(s) || lowerRunShare(s) >= 0.45
}

// lowerRunShare is the share of s in runs of three or more lower-case
// letters: about 0.2 for random base64, half or more for identifiers
// (mqttQoS2DeliveryMsgId, TestTransportResPattern_c0h1d0t0).
func lowerRunShare(s string) float64 {
	n, run := 0, 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] >= 'a' && s[i] <= 'z' {
			run++
			continue
		}
		if run >= 3 {
			n += run
		}
		run = 0
	}
	return float64(n) / float64(max(len(s), 1))
}

// wordyParts says whether s, split at - _ / and ., is made of words,
// numbers and short acronyms (TPM-Main-Part-3-Commands-20,
// webdevdata.org-2015-01-07-4GB-subset, S2/FuzzLZ4Block/noasm) for at
// least 70% of its length.
func wordyParts(s string) bool {
	parts := strings.FieldsFunc(s, func(r rune) bool { return r == '-' || r == '_' || r == '/' || r == '.' })
	if len(parts) < 2 {
		return false
	}
	wordy := 0
	for _, p := range parts {
		n := len(p)
		p = strings.TrimRight(p, "0123456789") // Sha256, Win32
		switch {
		case p == "", len(p) <= 5 && strings.ToUpper(p) == p, len(p) <= 3, typeCodes.MatchString(p),
			len(p) >= 8 && hexRe.MatchString(p): // a hash suffix: fileDescriptor_3a17e2c63b2b3424
			wordy += n
		default:
			covered, vowels, letters := 0, 0, 0
			for _, w := range wordRun.FindAllString(p, -1) {
				covered += len(w)
			}
			for _, c := range p {
				if unicode.IsLetter(c) {
					letters++
					if strings.ContainsRune("aeiouyAEIOUY", c) {
						vowels++
					}
				}
			}
			if float64(covered) >= 0.7*float64(len(p)) && float64(vowels) >= 0.2*float64(max(letters, 1)) {
				wordy += n
			}
		}
	}
	return float64(wordy) >= 0.7*float64(len(s)-len(parts)+1)
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
		case ok && n == 0 && long && publicPEM.MatchString(text[max(0, off-80):off]):
			// the body of a public key, a certificate or a signature
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
