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
	return &Redactor{d: d, byValue: map[string]string{}, ordinal: map[string]int{}, stats: Stats{PerRule: map[string]int{}}}
}

// Detector returns the detector the Redactor uses.
func (r *Redactor) Detector() *Detector { return r.d }

// Redact returns text with every secret replaced by its placeholder, and
// how many places it replaced.
func (r *Redactor) Redact(text string) (string, int) {
	found := r.d.Find(text)
	r.mu.Lock()
	defer r.mu.Unlock()
	for v := range r.byValue {
		found = append(found, occurrences(text, v, "")...)
	}
	found = resolve(text, found)
	if len(found) == 0 {
		return text, 0
	}
	var b strings.Builder
	last := 0
	for _, f := range found {
		secret := text[f.Start:f.End]
		b.WriteString(text[last:f.Start])
		b.WriteString(r.placeholder(secret, f.Rule))
		b.WriteString(strings.Repeat("\n", strings.Count(secret, "\n")))
		last = f.End
	}
	b.WriteString(text[last:])
	r.stats.Occurrences += len(found)
	return b.String(), len(found)
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
