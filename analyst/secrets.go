package analyst

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// SecretCounts says how many secrets were replaced by placeholders before
// the editor opened the files (distinct secrets, per rule) and how many
// samples the export's safety net dropped because it still found one (per
// rule).
type SecretCounts struct {
	Redacted          int            `json:"redacted"`
	RedactedPerRule   map[string]int `json:"redacted_per_rule"`
	NetDropped        int            `json:"net_dropped"`
	NetDroppedPerRule map[string]int `json:"net_dropped_per_rule"`
}

// WriteSummary writes the counts as two lines.
func (s *SecretCounts) WriteSummary(w io.Writer) error {
	_, err := fmt.Fprintf(w, "secrets redacted: %d%s\nsamples dropped by the export's secret net: %d%s\n",
		s.Redacted, perRule(s.RedactedPerRule), s.NetDropped, perRule(s.NetDroppedPerRule))
	return err
}

func perRule(m map[string]int) string {
	if len(m) == 0 {
		return ""
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return " (" + strings.Join(parts, ", ") + ")"
}
