package pipeline

import (
	"fmt"
	"os"
	"path/filepath"

	"dialogfarm/analyst"
	"dialogfarm/redact"
	"dialogfarm/sft"
)

// SecretCounts reads the run folder's redactions.json and runs the export's
// safety net over the dialogues (without writing anything) with opt, for
// the report. A run folder without redactions.json redacted nothing; an
// empty dialoguesPath drops nothing.
func SecretCounts(run, dialoguesPath string, opt sft.Options) (*analyst.SecretCounts, error) {
	rs, err := redact.ReadRedactions(filepath.Join(run, RedactionsFile))
	if err != nil {
		return nil, err
	}
	sc := &analyst.SecretCounts{Redacted: rs.Total.Secrets, RedactedPerRule: rs.Total.PerRule, NetDroppedPerRule: map[string]int{}}
	if sc.RedactedPerRule == nil {
		sc.RedactedPerRule = map[string]int{}
	}
	if dialoguesPath == "" {
		return sc, nil
	}
	f, err := os.Open(dialoguesPath)
	if os.IsNotExist(err) {
		return sc, nil
	}
	if err != nil {
		return nil, fmt.Errorf("count secrets: %w", err)
	}
	defer f.Close()
	opt.Meta = sft.MetaNone
	if opt.Format == "" {
		opt.Format = sft.FormatOpenAI
	}
	_, sum, err := sft.Select(f, dialoguesPath, opt)
	if err != nil {
		return nil, fmt.Errorf("count secrets: %w", err)
	}
	sc.NetDropped, sc.NetDroppedPerRule = sum.Skipped[sft.SkipSecret], sum.SecretRules
	return sc, nil
}
