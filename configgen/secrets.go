package configgen

import (
	"bytes"
	"math"
	"regexp"
	"strings"
)

// SecretFinding is one line that looks like it holds a secret. The
// matched text itself is never kept, so it cannot leak into logs or stats.
type SecretFinding struct {
	Line int    // 1-based
	Kind string // which rule matched
}

// secretRules is the documented secret detector. A line matches when any
// rule does:
//
//   - private-key: a PEM "-----BEGIN ... PRIVATE KEY-----" block (every line
//     up to the matching END line is marked);
//   - aws-access-key: AKIA/ASIA followed by 16 upper-case letters or digits;
//   - github-token: ghp_/gho_/ghu_/ghs_/ghr_ tokens and github_pat_ tokens;
//   - openai-key: sk- (and sk-proj-) keys of 20+ characters;
//   - slack-token: xoxb-/xoxa-/xoxp-/xoxr-/xoxs- tokens;
//   - google-api-key: AIza followed by 35 characters;
//   - stripe-key: sk_live_/rk_live_/sk_test_ keys;
//   - jwt: three base64url segments starting eyJ…eyJ…;
//   - url-credentials: scheme://user:password@host;
//   - assignment: a name containing key, secret, token, password, passwd or
//     credential assigned a quoted literal of 8+ characters whose Shannon
//     entropy is at least 3 bits per character and that is not an obvious
//     placeholder (xxx, changeme, <...>, ${...}, your_..., example).
var secretRules = []struct {
	kind string
	re   *regexp.Regexp
}{
	{"aws-access-key", regexp.MustCompile(`\b(AKIA|ASIA)[0-9A-Z]{16}\b`)},
	{"github-token", regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{30,}\b|\bgithub_pat_[A-Za-z0-9_]{22,}`)},
	{"openai-key", regexp.MustCompile(`\bsk-(proj-)?[A-Za-z0-9_-]{20,}`)},
	{"slack-token", regexp.MustCompile(`\bxox[abprs]-[A-Za-z0-9-]{10,}`)},
	{"google-api-key", regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}\b`)},
	{"stripe-key", regexp.MustCompile(`\b[rs]k_(live|test)_[0-9A-Za-z]{16,}`)},
	{"jwt", regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}`)},
	{"url-credentials", regexp.MustCompile(`\b[a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@'"]+:[^/\s:@'"]+@[^\s'"]+`)},
}

var (
	assignRe    = regexp.MustCompile(`(?i)([A-Za-z0-9_.-]*(api[_-]?key|secret|token|passw(or)?d|passwd|credential|auth[_-]?key)[A-Za-z0-9_.-]*)["']?\s*(:=|=|:|=>)\s*[bru]?["'\x60]([^"'\x60\s]{8,})["'\x60]`)
	placeholder = regexp.MustCompile(`(?i)^(x+|\*+|\.+|changeme|change_me|password|secret|token|example\w*|your[_-].*|<.*>|\$\{.*\}|\{\{.*\}\}|%s|dummy\w*|test\w*|fake\w*|todo|none|null|redacted)$`)
	beginKey    = regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----`)
	endKey      = regexp.MustCompile(`-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----`)
)

// DetectSecrets returns the lines of src that look like they hold
// secrets, by the rules documented on secretRules.
func DetectSecrets(src []byte) []SecretFinding {
	var out []SecretFinding
	inKey := false
	for i, line := range bytes.Split(src, []byte("\n")) {
		n := i + 1
		switch {
		case inKey:
			out = append(out, SecretFinding{Line: n, Kind: "private-key"})
			if endKey.Match(line) {
				inKey = false
			}
			continue
		case beginKey.Match(line):
			out = append(out, SecretFinding{Line: n, Kind: "private-key"})
			inKey = !endKey.Match(line)
			continue
		}
		if kind := secretKind(line); kind != "" {
			out = append(out, SecretFinding{Line: n, Kind: kind})
		}
	}
	return out
}

func secretKind(line []byte) string {
	for _, r := range secretRules {
		if r.re.Match(line) {
			return r.kind
		}
	}
	for _, m := range assignRe.FindAllSubmatch(line, -1) {
		val := string(m[5])
		if !placeholder.MatchString(val) && entropy(val) >= 3.0 && !strings.ContainsAny(val, " ") {
			return "assignment"
		}
	}
	return ""
}

// entropy is the Shannon entropy of s in bits per character.
func entropy(s string) float64 {
	counts := map[rune]int{}
	n := 0
	for _, r := range s {
		counts[r]++
		n++
	}
	h := 0.0
	for _, c := range counts {
		p := float64(c) / float64(n)
		h -= p * math.Log2(p)
	}
	return h
}
