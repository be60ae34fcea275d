package main

// The range of every numeric flag, in one table. newRoot wraps each
// numeric flag's value so that a number out of its range is refused as it
// is parsed, whether it came from the command line, a DIALOGFARM_*
// variable or the config file, and the error names the flag, the value
// and the range. NaN and infinities are in no range. TestEveryNumericFlagHasARange
// fails for a numeric flag missing here.

import (
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"dialogfarm/internal/bounds"
	"dialogfarm/pipeline"
	"dialogfarm/sft"
)

// flagRange is a flag's range and, when it is not plain from the flag's
// help, why.
type flagRange struct {
	bounds.Range
	why string
	// words are what a string flag takes besides an integer in range
	// (--sessions auto).
	words []string
}

// maxSeed is the largest seed: seeds are written into plan, profile and
// dataset files as JSON numbers, exact in every reader (the web UI's
// JavaScript too) only up to 2^53.
const maxSeed = 1 << 53

// flagRanges is the range of every numeric flag by name; a name means the
// same in every command that has it. sessions is a string flag: a number
// in its range, or auto.
func flagRanges() map[string]flagRange {
	count := func(lo, hi int64, why string) flagRange { return flagRange{Range: bounds.Ints(lo, hi), why: why} }
	share := func(lo, hi float64, why string) flagRange { return flagRange{Range: bounds.Floats(lo, hi), why: why} }
	wait := func(lo, hi time.Duration, why string) flagRange {
		return flagRange{Range: bounds.Durations(lo, hi), why: why}
	}
	return map[string]flagRange{
		"min-score": share(0, 5, "judge scores are 1 to 5; 0 also keeps shown answers with no verdict"),
		"n": count(1, pipeline.MaxDialogues, "the ceiling: each dialogue is driven in a real editor, seconds to minutes apiece, "+
			"and configs, drive and export hold a run's configs in memory; for more, make several runs with different seeds"),
		"seed":                 count(0, maxSeed, "seeds are written into JSON files, exact in every reader only up to 2^53"),
		"jobs":                 count(1, 64, ""),
		"batch":                count(1, 1000, ""),
		"context-lines":        count(0, 10_000, ""),
		"max-file-bytes":       count(1, 1<<30, ""),
		"attempts":             count(1, 100, ""),
		"recycle-after":        count(0, 1_000_000, ""),
		"recycle-heap-mib":     count(0, 1<<20, ""),
		"repo-cache-mib":       count(0, 1<<30, ""),
		"exchanges-mib":        count(0, 1<<30, ""),
		"pause-after-failures": count(-1, 1_000_000, "0: 5 or --sessions, whichever is more; -1: never"),
		"farm-backlog":         count(-1, pipeline.MaxDialogues, "0: three per simulator of the farm, at least 32; -1: every config at once"),
		"limit":                count(0, pipeline.MaxDialogues, ""),
		"max-tokens":           count(0, sft.MaxMaxTokens, ""),
		"resamples":            count(1000, 1_000_000, "fewer than 1000 bootstrap resamples give no stable interval"),
		"runs":                 count(1, 100, ""),
		"workers":              count(1, 1000, "worker credentials farm serve makes"),
		"sessions":             {bounds.Ints(0, 64), "simulators on one code-server, or auto; farm workers add more", []string{"auto"}},
		"split":                share(0.01, 1, "a share of train.jsonl"),
		"dedup-near":           share(0, 1, "a Jaccard similarity; 0 turns it off"),
		"answer-timeout":       wait(time.Second, pool24h, ""),
		"drain-timeout":        wait(0, pool24h, "0: hand the dialogues in progress back at once"),
		"exit-when-idle":       wait(0, 30*pool24h, "0: never"),
		"model-timeout":        wait(time.Second, pool24h, ""),
		"attempt-timeout":      wait(500*time.Millisecond, 10*time.Minute, "one try of the probe; minutes per try would make it wait minutes on each wrong guess"),
		"test-timeout":         wait(0, pool24h, "0: the default 2m"),
		"pilot":                count(1, pipeline.MaxDialogues, ""),
		"max-dialogues":        count(0, pipeline.MaxDialogues, "0: no bound but --budget-usd"),
		"budget-usd":           share(0, 1e9, "0: no bound but --max-dialogues"),
		"rounds":               count(1, 100, ""),
		"max-factor":           share(1, 1000, "1: no oversampling"),
		"min-keep":             share(0, 0.99, "a keep rate"),
		"sigma":                share(0, 10, "a logit scale; 0: estimated per dimension"),
		"max-jsd":              share(0, 1, "JSD in bits lies in 0 to 1"),
	}
}

// pool24h is the longest wait any flag takes.
const pool24h = 24 * time.Hour

// numericFlag reports whether f holds a number.
func numericFlag(f *pflag.Flag) bool {
	switch f.Value.Type() {
	case "int", "int64", "uint64", "float64", "duration":
		return true
	}
	return false
}

// rangedFlag reports whether checkRanges wraps f: a numeric flag, or a
// string flag whose range has words (a number or a word).
func rangedFlag(f *pflag.Flag, r flagRange) bool {
	return numericFlag(f) || f.Value.Type() == "string" && len(r.words) > 0
}

// checkRanges wraps the value of every numeric flag of root's tree that
// flagRanges lists, so that Set refuses a number out of its range.
func checkRanges(root *cobra.Command) {
	ranges := flagRanges()
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if r, ok := ranges[f.Name]; ok && rangedFlag(f, r) {
				if _, done := f.Value.(*rangedValue); !done {
					f.Value = &rangedValue{Value: f.Value, name: f.Name, r: r}
				}
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// rangedValue is a numeric flag value that refuses numbers out of range.
type rangedValue struct {
	pflag.Value
	name string
	r    flagRange
}

// rangeError is a flag value out of its range.
type rangeError struct{ msg string }

func (e *rangeError) Error() string { return e.msg }

// Set parses s with the flag's own parser, then checks the range; a value
// refused leaves the flag as it was.
func (v *rangedValue) Set(s string) error {
	old := v.String()
	if err := v.Value.Set(s); err != nil {
		return err
	}
	if err := v.check(); err != nil {
		_ = v.Value.Set(old)
		return err
	}
	return nil
}

// check is nil when the flag's value is in range, else a *rangeError.
func (v *rangedValue) check() error {
	switch v.Type() {
	case "duration":
		d, err := time.ParseDuration(v.String())
		if err != nil {
			return err
		}
		return v.r.check("--"+v.name, float64(d))
	case "float64":
		n, err := strconv.ParseFloat(v.String(), 64)
		if err != nil {
			return err
		}
		return v.r.check("--"+v.name, n)
	}
	if slices.Contains(v.r.words, v.String()) {
		return nil
	}
	n, ok := new(big.Int).SetString(v.String(), 10)
	if !ok && len(v.r.words) > 0 {
		return fmt.Errorf("want an integer or %s", strings.Join(v.r.words, " or "))
	}
	if !ok {
		return fmt.Errorf("--%s: %q is not an integer", v.name, v.String())
	}
	return v.r.explain(v.r.CheckInt("--"+v.name, n))
}

// check is nil when n is in range, else a *rangeError that names the
// flag, the value, the range and why.
func (r flagRange) check(name string, n float64) error {
	return r.explain(r.Range.Check(name, n))
}

// explain makes err, a number out of range, a *rangeError saying why the
// range is what it is.
func (r flagRange) explain(err error) error {
	switch {
	case err == nil:
		return nil
	case r.why != "":
		return &rangeError{fmt.Sprintf("%v (%s)", err, r.why)}
	}
	return &rangeError{err.Error()}
}
