package redact

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Redactor replaces secrets with stable placeholders. One Redactor serves a
// whole run, so a secret gets the same placeholder in every file and turn.
// It is safe for concurrent use. It holds the secrets it has seen in memory
// only; Stats never includes them.
type Redactor struct {
	d *Detector

	mu      sync.Mutex
	byValue map[string]string // secret → placeholder
	ruleOf  map[string]string // secret → the rule that first found it
	ordinal map[string]int    // placeholder stem → last ordinal
	stats   Stats
}

// Stats counts what a Redactor replaced.
type Stats struct {
	// Secrets is the number of distinct secrets; Occurrences counts every
	// place one was replaced.
	Secrets     int `json:"secrets"`
	Occurrences int `json:"occurrences"`
	// PerRule is the number of distinct secrets per rule.
	PerRule map[string]int `json:"per_rule"`
}

// Add adds o to s.
func (s *Stats) Add(o Stats) {
	s.Secrets += o.Secrets
	s.Occurrences += o.Occurrences
	for k, v := range o.PerRule {
		if s.PerRule == nil {
			s.PerRule = map[string]int{}
		}
		s.PerRule[k] += v
	}
}

// Rules returns the rule names of PerRule, sorted.
func (s Stats) Rules() []string { return slices.Sorted(maps.Keys(s.PerRule)) }

// Summary is one line: "12 secrets (14 places): aws-access-token 1, …".
func (s Stats) Summary() string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(s.Secrets) + " secrets (" + strconv.Itoa(s.Occurrences) + " places)")
	for i, r := range s.Rules() {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(r + " " + strconv.Itoa(s.PerRule[r]))
	}
	return b.String()
}

// NewRedactor returns a Redactor that finds secrets with d.
func NewRedactor(d *Detector) *Redactor {
	return &Redactor{d: d, byValue: map[string]string{}, ruleOf: map[string]string{}, ordinal: map[string]int{}, stats: Stats{PerRule: map[string]int{}}}
}

// Detector returns the detector the Redactor uses.
func (r *Redactor) Detector() *Detector { return r.d }

// Replacement is one place where a secret was replaced: its line (1-based,
// in the text given; 0 in a binary file), the rule that found it and its
// placeholder. It never holds the secret.
type Replacement struct {
	Line        int    `json:"line"`
	Rule        string `json:"kind"`
	Placeholder string `json:"placeholder"`
}

// Redact returns text with every secret replaced by its placeholder, and
// how many places it replaced.
func (r *Redactor) Redact(text string) (string, int) {
	out, reps := r.redact(text, false)
	return out, len(reps)
}

// RedactText returns text with every secret replaced by its placeholder,
// and where it replaced them.
func (r *Redactor) RedactText(text string) (string, []Replacement) {
	return r.redact(text, false)
}

// redact replaces the secrets of text. With mask, each secret's bytes
// are overwritten with its placeholder cut or padded with X to the
// secret's length, so a binary file keeps its size and offsets. Pieces of
// one secret split across string literals (Finding.Join) are one secret:
// the first piece becomes its placeholder, the others empty.
func (r *Redactor) redact(text string, mask bool) (string, []Replacement) {
	found := r.d.Find(text)
	r.mu.Lock()
	defer r.mu.Unlock()
	for v := range r.byValue {
		found = append(found, occurrences(text, v, "")...)
	}
	found = resolve(text, found)
	if len(found) == 0 {
		return text, nil
	}
	joined := map[int]string{}
	for _, f := range found {
		if f.Join != 0 {
			joined[f.Join] += text[f.Start:f.End]
		}
	}
	var (
		b    strings.Builder
		reps []Replacement
	)
	last, line, done := 0, 1, map[int]bool{}
	for _, f := range found {
		secret := text[f.Start:f.End]
		b.WriteString(text[last:f.Start])
		line += strings.Count(text[last:f.Start], "\n")
		value, rule := secret, f.Rule
		if f.Join != 0 {
			value = joined[f.Join]
		}
		if rule == "" { // a value seen before, found again by its text
			rule = r.ruleOf[value]
		}
		p := r.placeholder(value, rule)
		switch {
		case mask:
			b.WriteString(maskWith(p, len(secret)))
		case f.Join != 0 && done[f.Join]:
			// a later piece of a split secret: its placeholder is written
		default:
			b.WriteString(p)
			b.WriteString(strings.Repeat("\n", strings.Count(secret, "\n")))
		}
		if f.Join == 0 || !done[f.Join] {
			l := line
			if mask {
				l = 0
			}
			reps = append(reps, Replacement{Line: l, Rule: rule, Placeholder: p})
		}
		if f.Join != 0 {
			done[f.Join] = true
		}
		line += strings.Count(secret, "\n")
		last = f.End
	}
	b.WriteString(text[last:])
	r.stats.Occurrences += len(reps)
	return b.String(), reps
}

// maskWith returns p cut or padded with X to n bytes.
func maskWith(p string, n int) string {
	if len(p) >= n {
		return strings.Repeat("X", n)
	}
	return p + strings.Repeat("X", n-len(p))
}

// placeholder returns the secret's placeholder, making a new one for a
// secret not seen before. r.mu is held.
func (r *Redactor) placeholder(secret, rule string) string {
	if p, ok := r.byValue[secret]; ok {
		return p
	}
	stem := "REDACTED_" + strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(rule))
	r.ordinal[stem]++
	p := stem + "_" + strconv.Itoa(r.ordinal[stem])
	r.byValue[secret] = p
	r.ruleOf[secret] = rule
	r.stats.Secrets++
	r.stats.PerRule[rule]++
	return p
}

// Stats returns what the Redactor replaced so far.
func (r *Redactor) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.stats
	s.PerRule = maps.Clone(r.stats.PerRule)
	return s
}
