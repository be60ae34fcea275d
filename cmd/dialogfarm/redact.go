package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"dialogfarm/internal/runfiles"
	"dialogfarm/redact"
)

func redactCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "redact SRC --out DST",
		Short: "Write the sanitised copy of a folder or file, and what was redacted, as a run would make it",
		Long: `redact writes the copy of SRC (a folder or one file) that a run would
open in the editor instead of the original: every secret replaced by a
stable placeholder, .git and .vscode left out, UTF-16/UTF-32 files decoded,
scanned and written back in their encoding, secrets in binary files masked
in place. It is the same code as the run's workspace copy, so a team can
preview what leaves their machine. It writes a JSON report (DST.redactions.json
by default) and a summary (the same name with .txt, also printed): per file,
the line, the kind and the placeholder of each secret, never the secret.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return a.redact(cmd.Context(), args[0]) },
	}
	f := cmd.Flags()
	f.String("out", "", "where to write the sanitised copy (required; must not exist unless --force)")
	f.String("report", "", "the JSON report to write (default DST.redactions.json); the summary goes next to it (.txt)")
	f.Bool("force", false, "replace DST if it exists")
	return cmd
}

func (a *app) redact(ctx context.Context, src string) error {
	dst, report := a.v.GetString("out"), a.v.GetString("report")
	if dst == "" {
		return errors.New("redact: --out is required")
	}
	absSrc, err := filepath.Abs(src)
	if err != nil {
		return fmt.Errorf("redact %s: %w", src, err)
	}
	if _, err := os.Stat(absSrc); err != nil {
		return fmt.Errorf("redact: %w", err)
	}
	absDst, err := filepath.Abs(dst)
	if err != nil {
		return fmt.Errorf("redact --out %s: %w", dst, err)
	}
	if within(absDst, absSrc) || within(absSrc, absDst) {
		return fmt.Errorf("redact: --out %s and %s must not hold one another", dst, src)
	}
	if _, err := os.Lstat(absDst); err == nil && !a.v.GetBool("force") {
		return fmt.Errorf("redact: --out %s exists (give --force to replace it)", dst)
	}
	if report == "" {
		report = absDst + ".redactions.json"
	}
	d, err := redact.NewDetector()
	if err != nil {
		return fmt.Errorf("build secret detector: %w", err)
	}
	c, err := redact.Sanitise(ctx, redact.NewRedactor(d), absSrc, absDst, "")
	if err != nil {
		return err
	}
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	if err := runfiles.WriteAtomic(report, append(data, '\n')); err != nil {
		return fmt.Errorf("write report %s: %w", report, err)
	}
	var sum bytes.Buffer
	if err := redact.WriteSummary(&sum, c); err != nil {
		return err
	}
	txt := strings.TrimSuffix(report, ".json") + ".txt"
	if err := runfiles.WriteAtomic(txt, sum.Bytes()); err != nil {
		return fmt.Errorf("write summary %s: %w", txt, err)
	}
	_, err = fmt.Fprintf(a.stdout, "%s\nreport: %s\nsummary: %s\n", sum.String(), report, txt)
	return err
}

// within says whether path is dir or inside it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && (rel == "." || !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && rel != "..")
}
