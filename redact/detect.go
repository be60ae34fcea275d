package redact

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
)

// Finding is one secret in a scanned text: the rule that found it and its
// byte span. The secret is Text[Start:End] of the scanned text; it is not
// copied here.
type Finding struct {
	Rule       string
	Start, End int
	// Join, when not 0, marks the pieces of one secret split across
	// string literals on one line ("sk_live_" + "…"): every Finding with
	// the same Join is a piece, and the secret is their texts joined in
	// order.
	Join int
}

// Detector finds secrets. It is safe for concurrent use; build one and
// reuse it (building compiles a few hundred regular expressions).
type Detector struct {
	gl *detect.Detector
}

// NewDetector builds a detector with gitleaks' default rules and this
// package's own rules.
func NewDetector() (*Detector, error) {
	// A viper of our own: gitleaks' NewDetectorDefaultConfig would fill the
	// global one.
	v := viper.New()
	v.SetConfigType("toml")
	if err := v.ReadConfig(strings.NewReader(config.DefaultConfig)); err != nil {
		return nil, fmt.Errorf("read gitleaks default rules: %w", err)
	}
	var vc config.ViperConfig
	if err := v.Unmarshal(&vc); err != nil {
		return nil, fmt.Errorf("decode gitleaks default rules: %w", err)
	}
	cfg, err := vc.Translate()
	if err != nil {
		return nil, fmt.Errorf("compile gitleaks default rules: %w", err)
	}
	return &Detector{gl: detect.NewDetector(cfg)}, nil
}

// rank orders rules that found the same span: a named gitleaks rule beats
// gitleaks' generic one, which beats ours, which beat the entropy rules.
func rank(rule string) int {
	switch {
	case rule == ruleHighEntropy || rule == rulePEMBody:
		return 3
	case isOwnRule(rule):
		return 2
	case rule == "generic-api-key":
		return 1
	}
	return 0
}

// Find returns the secrets in text, sorted by position and not
// overlapping (where two findings overlap, the one that starts first wins,
// then the longer one, then the more specific rule).
//
// Find also joins the string literals of a line ("sk_live_" + "…") and
// reports a secret found in the joined text as pieces sharing a Join.
func (d *Detector) Find(text string) []Finding {
	all := d.scan(text)
	all = append(all, joinedFindings(text, d.scan, 1)...)
	return resolve(text, dropData(text, all))
}

// scan runs gitleaks' rules and this package's over text.
func (d *Detector) scan(text string) []Finding {
	var all []Finding
	for _, f := range d.gl.DetectString(text) {
		if f.RuleID == "generic-api-key" && genericNotSecret(f.Secret) {
			continue // code, words or a number that gitleaks' generic rule took for a key
		}
		all = append(all, occurrences(text, f.Secret, f.RuleID)...)
	}
	return append(all, ownFindings(text)...)
}

// occurrences returns every span of secret in text.
func occurrences(text, secret, rule string) []Finding {
	var out []Finding
	if secret == "" {
		return nil
	}
	for from := 0; ; {
		i := strings.Index(text[from:], secret)
		if i < 0 {
			return out
		}
		start := from + i
		out = append(out, Finding{Rule: rule, Start: start, End: start + len(secret)})
		from = start + len(secret)
	}
}

// dottedName is a field or package path: oa.v1NatsOperator.SigningKeys.
var dottedName = regexp.MustCompile(`^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$`)

// genericNotSecret says whether a value of gitleaks' generic rule is a
// field path, words (ssh-ed25519), a number (0x123456789abcDEF,
// 01234567890.98e-10) or an identifier (KeyAlgoED25519).
func genericNotSecret(v string) bool {
	return dottedName.MatchString(v) || plainWords(v) || numberLike.MatchString(strings.TrimLeft(v, "-+")) ||
		floatLike.MatchString(v) || alnumName.MatchString(v) && identifierLike(v)
}

var (
	floatLike = regexp.MustCompile(`^[-+]?\d+\.\d+(?:[eE][-+]?\d+)?$`)
	alnumName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*$`)
)

// resolve drops placeholders, hash encodings (go.sum's "h1:…", an
// integrity "sha512-…") and overlaps, and sorts by position.
func resolve(text string, all []Finding) []Finding {
	slices.SortFunc(all, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(b.End-b.Start, a.End-a.Start), cmp.Compare(rank(a.Rule), rank(b.Rule)))
	})
	var out []Finding
	end := -1
	for _, f := range all {
		if f.Start < end || f.End <= f.Start || isPlaceholderText(text[f.Start:f.End]) ||
			hashPrefix.MatchString(text[max(0, f.Start-9):f.Start]) {
			continue
		}
		out = append(out, f)
		end = f.End
	}
	return out
}

// isPlaceholderText says whether s is nothing but this package's
// placeholders (and the characters around them), so it is not a secret.
func isPlaceholderText(s string) bool {
	rest := placeholderRe.ReplaceAllString(s, "")
	return len(rest) < len(s) && len(strings.Trim(rest, " \t\r\n\"'`,;:=")) < 4
}
