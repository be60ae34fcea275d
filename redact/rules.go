package redact

import (
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// Names of this package's own rules (see the package doc).
const (
	ruleBearer      = "bearer-token"
	ruleBasicAuth   = "basic-auth"
	ruleDSN         = "dsn-password"
	ruleAzure       = "azure-storage-key"
	ruleAssignment  = "secret-assignment"
	rulePEMBody     = "pem-body"
	ruleHighEntropy = "high-entropy"
)

// ownRule is a regular expression whose group 1 is the secret, kept when
// keep says so.
type ownRule struct {
	id   string
	re   *regexp.Regexp
	keep func(secret string) bool
	// keywords, when set, skip the rule on text holding none of them (in
	// lower case).
	keywords []string
}

// secretKeywords prefilter the assignment rules: each name in secretNames
// holds one of them.
var secretKeywords = []string{"pass", "pwd", "secret", "token", "key", "credential"}

const secretNames = `pass(?:word|wd|phrase)?|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|auth[_-]?key|private[_-]?key|credentials?|signing[_-]?key`

var (
	ownRules = []ownRule{
		{ruleBearer, regexp.MustCompile(`(?i)\bbearer[ \t]+([A-Za-z0-9._~+/=-]{16,})`), plausible, []string{"bearer"}},
		{ruleBasicAuth, regexp.MustCompile(`(?i)authorization["']?\s*[:=,]\s*["']?basic[ \t]+([A-Za-z0-9+/]{12,}={0,2})`), plausible, []string{"basic"}},
		{ruleDSN, regexp.MustCompile(`\b[a-zA-Z][a-zA-Z0-9+.-]{1,20}://[^\s:/@'"]{1,64}:([^\s/@'"]{3,128})@[^\s'"/]+`), notPlaceholder, []string{"://"}},
		{ruleAzure, regexp.MustCompile(`(?i)(?:AccountKey|SharedAccessKey)=([A-Za-z0-9+/]{40,100}={0,2})`), notPlaceholder, []string{"accountkey=", "sharedaccesskey="}},
		// name = "value", name: 'value', "name": "value", getenv("NAME", "value")
		{ruleAssignment, regexp.MustCompile(`(?i)(?:` + secretNames + `)[\w.-]*["'\x60]?\s*(?::=|=>|=|:|,)\s*[bru]?["'\x60]([^"'\x60\s]{8,200})["'\x60]`), plausible, secretKeywords},
		// NAME=value in .env, name: value in YAML
		{ruleAssignment, regexp.MustCompile(`(?im)^[ \t]*(?:export[ \t]+)?[\w.-]*(?:` + secretNames + `)[\w.-]*[ \t]*[=:][ \t]*([^\s"'#,;()\[\]{}]{8,200})[ \t]*$`), plausible, secretKeywords},
	}
	placeholderRe = regexp.MustCompile(`REDACTED_[A-Z0-9_]+_[0-9]+`)
	// placeholderValue is text people write where a secret would go.
	placeholderValue = regexp.MustCompile(`(?i)^(x+|\*+|\.+|-+|changeme|change_me|password|passwd|secret|token|pass|example\w*|your[_-].*|<.*>|\$\{.*\}|\$\(.*\)|\{\{.*\}\}|%[sv]|\$\w+|dummy\w*|fake\w*|todo|none|null|nil|undefined|redacted)$`)
	// wordsRe is a few lowercase words, such as "bert-base-uncased".
	wordsRe = regexp.MustCompile(`(?i)^[a-z]+(?:[-_.][a-z]+)*[0-9]*$`)
	// envName is the name of an environment variable, such as OPENAI_API_KEY.
	envName     = regexp.MustCompile(`^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$`)
	entropyTok  = regexp.MustCompile(`[A-Za-z0-9+/_-]{20,}={0,2}`)
	hexRe       = regexp.MustCompile(`^(?:[0-9a-f]+|[0-9A-F]+)$|^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-`)
	hashPrefix  = regexp.MustCompile(`(?i)(?:h1:|sha(?:1|224|256|384|512)[-:])$`)
	hashToken   = regexp.MustCompile(`(?i)^sha(?:1|224|256|384|512)-`)
	wordRun     = regexp.MustCompile(`[A-Z]?[a-z]{2,}|[A-Z]{2,}`)
	base64Line  = regexp.MustCompile(`^[A-Za-z0-9+/]+={0,2}$`)
	ownRuleName = map[string]bool{ruleBearer: true, ruleBasicAuth: true, ruleDSN: true, ruleAzure: true, ruleAssignment: true, rulePEMBody: true, ruleHighEntropy: true}
)

func isOwnRule(id string) bool { return ownRuleName[id] }

func notPlaceholder(s string) bool {
	return !placeholderValue.MatchString(s) && !placeholderRe.MatchString(s) && !strings.ContainsAny(s, "${}<>")
}

// plausible says whether s, the value assigned to a secret-looking name,
// looks like a real secret rather than a placeholder, a URL, a path or a
// few words.
func plausible(s string) bool {
	switch {
	case !notPlaceholder(s), strings.Contains(s, "://"), strings.HasPrefix(s, "/"), strings.HasPrefix(s, "./"),
		wordsRe.MatchString(s), envName.MatchString(s), strings.Contains(s, "("):
		return false
	}
	return entropy(s) >= 3.0
}

// ownFindings runs this package's rules over text.
func ownFindings(text string) []Finding {
	var out []Finding
	lower := strings.ToLower(text)
	for _, r := range ownRules {
		if r.keywords != nil && !slices.ContainsFunc(r.keywords, func(k string) bool { return strings.Contains(lower, k) }) {
			continue
		}
		for _, m := range r.re.FindAllStringSubmatchIndex(text, -1) {
			if s := text[m[2]:m[3]]; r.keep(s) {
				out = append(out, Finding{Rule: r.id, Start: m[2], End: m[3]})
			}
		}
	}
	out = append(out, pemBodies(text)...)
	for _, m := range entropyTok.FindAllStringIndex(text, -1) {
		s := strings.TrimRight(text[m[0]:m[1]], "=")
		if !hashPrefix.MatchString(text[max(0, m[0]-7):m[0]]) && !hashToken.MatchString(s) && randomLooking(s) {
			out = append(out, Finding{Rule: ruleHighEntropy, Start: m[0], End: m[0] + len(s)})
		}
	}
	return out
}

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
