package analyst

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"dialogfarm/analyst/realism"
	"dialogfarm/dialog"
	"dialogfarm/dialog/vocab"
)

// Realism compares the first queries of a run's configs with the first
// queries of the sessions of interaction logs (package realism); plugin
// commands, whose query is a fixed "/explain", are left out on both
// sides. A log session's intent is its command's or vocab.IntentOf its
// query, its locale the one vocab detects.
func Realism(configs []dialog.ChatConfig, logsPath string, m Mapping, th realism.Thresholds) (*realism.Report, error) {
	f, err := os.Open(logsPath)
	if err != nil {
		return nil, fmt.Errorf("reference logs: %w", err)
	}
	defer f.Close()
	recs, _, err := ReadLogs(f, m)
	if err != nil {
		return nil, fmt.Errorf("reference logs %s: %w", logsPath, err)
	}
	var ref, gen []realism.Query
	for _, s := range GroupSessions(recs) {
		o := Observe(s)
		if o.Instruction == dialog.InstructionCommand {
			continue
		}
		intent := o.CommandIntent
		if intent == "" {
			intent = vocab.IntentOf(s.First.Query)
		}
		ref = append(ref, realism.Query{Text: s.First.Query, Intent: intent, Locale: o.Locale})
	}
	for _, c := range configs {
		if c.Instruction == dialog.InstructionCommand || len(c.Turns) == 0 {
			continue
		}
		gen = append(gen, realism.Query{Text: c.Turns[0].Query, Intent: c.Intent, Locale: c.Locale})
	}
	if len(ref) == 0 || len(gen) == 0 {
		return nil, fmt.Errorf("reference logs %s: %d reference and %d generated queries: nothing to compare", logsPath, len(ref), len(gen))
	}
	return realism.Compare(logsPath, gen, ref, th), nil
}

// FittedLogs is the log file a profile was fitted from, read from the
// counts analyze wrote next to it (CountsPath), or "" when there are
// none.
func FittedLogs(profilePath string) (string, error) {
	data, err := os.ReadFile(CountsPath(profilePath))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read counts of %s: %w", profilePath, err)
	}
	var c Counts
	if err := json.Unmarshal(data, &c); err != nil {
		return "", fmt.Errorf("read counts of %s: %w", profilePath, err)
	}
	return c.Logs, nil
}
