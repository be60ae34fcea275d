package redact

import (
	"fmt"
	"io"
	"strings"
)

// WriteSummary writes c as a human summary: the counts, then per file
// with a secret its encoding and, per replacement, the line, the kind and
// the placeholder (never the secret).
func WriteSummary(w io.Writer, c Copy) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s -> %s\n", c.Source, c.Dir)
	fmt.Fprintf(&b, "%d files (%d decoded from UTF-16/32, %d binary, %d links or special files left out)\n", c.Files, c.Decoded, c.Binary, c.Skipped)
	fmt.Fprintf(&b, "%s\n", c.Stats.Summary())
	for _, f := range c.Redacted {
		fmt.Fprintf(&b, "\n%s (%s)\n", f.Path, f.Encoding)
		for _, r := range f.Replacements {
			where := fmt.Sprintf("line %d", r.Line)
			if r.Line == 0 {
				where = "bytes"
			}
			fmt.Fprintf(&b, "  %-9s %-28s %s\n", where, r.Rule, r.Placeholder)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
