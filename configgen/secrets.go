package configgen

import (
	"strings"

	"dialogfarm/redact"
)

// SecretFinding is one line that holds (part of) a secret. The secret
// itself is never kept, so it cannot leak into logs or stats.
type SecretFinding struct {
	Line int    // 1-based
	Kind string // the redact rule that found it
}

// DetectSecrets returns the lines of src that hold secrets according to d
// (gitleaks' default rules plus dialogfarm's own and an entropy rule; see
// package redact). A secret over several lines marks each of them.
//
// A run generates configs from the sanitised copy of the repositories, in
// which every secret redact finds is already a placeholder, so this finds
// nothing there; it still keeps secrets out of the regions of configs
// generated straight from a repository (the configs command).
func DetectSecrets(d *redact.Detector, src []byte) []SecretFinding {
	text := string(src)
	var out []SecretFinding
	line, pos := 1, 0
	for _, f := range d.Find(text) {
		line += strings.Count(text[pos:f.Start], "\n")
		pos = f.Start
		last := line + strings.Count(text[f.Start:f.End], "\n")
		for l := line; l <= last; l++ {
			if len(out) == 0 || out[len(out)-1].Line != l {
				out = append(out, SecretFinding{Line: l, Kind: f.Rule})
			}
		}
	}
	return out
}
