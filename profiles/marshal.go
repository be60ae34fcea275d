package profiles

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"dialogfarm/dialog/vocab"
)

// Notes are comments written next to values when a profile is marshalled:
// Notes[dim][value] follows that value's line, Notes[dim][""] the dimension's.
type Notes map[string]map[string]string

// Marshal writes p as profile YAML that Parse reads back to an equal
// profile. header lines are written first as comments.
func Marshal(p *Profile, header []string, notes Notes) []byte {
	var b strings.Builder
	for _, h := range header {
		b.WriteString(strings.TrimRight("# "+h, " ") + "\n")
	}
	fmt.Fprintf(&b, "name: %s\n", quote(p.Name))
	if p.Description != "" {
		fmt.Fprintf(&b, "description: %s\n", quote(p.Description))
	}
	fmt.Fprintf(&b, "seed: %d\n", p.Seed)
	b.WriteString("dimensions:\n")
	for _, dim := range vocab.Dimensions() {
		b.WriteString("  " + dim + ":")
		if n := notes[dim][""]; n != "" {
			b.WriteString("  # " + n)
		}
		b.WriteString("\n")
		for _, w := range p.Dimensions[dim] {
			line := fmt.Sprintf("    %s: %s", w.Value, strconv.FormatFloat(w.Weight, 'f', -1, 64))
			if n := notes[dim][w.Value]; n != "" {
				line = fmt.Sprintf("%-30s # %s", line, n)
			}
			b.WriteString(line + "\n")
		}
	}
	if len(p.Constraints) == 0 {
		b.WriteString("constraints: []\n")
		return []byte(b.String())
	}
	b.WriteString("constraints:\n")
	for _, c := range p.Constraints {
		first := "  - "
		if c.Name != "" {
			fmt.Fprintf(&b, "%sname: %s\n", first, quote(c.Name))
			first = "    "
		}
		for _, part := range []struct {
			key string
			m   map[string][]string
		}{{"when", c.When}, {"require", c.Require}, {"exclude", c.Exclude}} {
			if len(part.m) == 0 {
				continue
			}
			fmt.Fprintf(&b, "%s%s: {%s}\n", first, part.key, flow(part.m))
			first = "    "
		}
	}
	return []byte(b.String())
}

func flow(m map[string][]string) string {
	var parts []string
	for _, dim := range vocab.Dimensions() {
		if vals, ok := m[dim]; ok {
			parts = append(parts, fmt.Sprintf("%s: [%s]", dim, strings.Join(vals, ", ")))
		}
	}
	return strings.Join(parts, ", ")
}

func quote(s string) string {
	if s == "" || strings.ContainsAny(s, ":#{}[],&*!|>'\"%@`\n") || strings.TrimSpace(s) != s {
		return strconv.Quote(s)
	}
	return s
}

// Hash is a stable digest of what the profile asks for (weights,
// constraints, seed), independent of comments and formatting.
func (p *Profile) Hash() string {
	h := sha256.New()
	fmt.Fprintf(h, "seed=%d\n", p.Seed)
	for _, dim := range vocab.Dimensions() {
		for _, w := range p.Dimensions[dim] {
			fmt.Fprintf(h, "%s.%s=%v\n", dim, w.Value, w.Weight)
		}
	}
	for _, c := range p.Constraints {
		for _, part := range []map[string][]string{c.When, c.Require, c.Exclude} {
			keys := make([]string, 0, len(part))
			for k := range part {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				fmt.Fprintf(h, "%s=%v;", k, part[k])
			}
			h.Write([]byte{'|'})
		}
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}
