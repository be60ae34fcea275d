package sft

import (
	"fmt"
	"slices"

	"dialogfarm/redact"
)

// SkipSecret: the safety net found a secret in the sample.
const SkipSecret = "secret"

// SecretFinder finds secrets in text; *redact.Detector is one.
type SecretFinder interface {
	Find(text string) []redact.Finding
}

var _ SecretFinder = (*redact.Detector)(nil)

// netRules returns the rules that find a secret anywhere in the sample's
// messages, each rule once, sorted; none means the sample may be written.
func netRules(f SecretFinder, s Sample) []string {
	var rules []string
	for _, m := range s.Messages {
		for _, hit := range f.Find(m.Content) {
			if !slices.Contains(rules, hit.Rule) {
				rules = append(rules, hit.Rule)
			}
		}
	}
	slices.Sort(rules)
	return rules
}

// finder returns opt.Secrets, or redact's default detector.
func finder(opt Options) (SecretFinder, error) {
	if opt.Secrets != nil {
		return opt.Secrets, nil
	}
	d, err := redact.NewDetector()
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	return d, nil
}
