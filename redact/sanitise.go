package redact

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Copy is one repository's (or file's) sanitised copy, as recorded in
// redactions.json and in the report of `dialogfarm redact`.
type Copy struct {
	// Source is the original repository; Dir its sanitised copy.
	Source string `json:"source"`
	Dir    string `json:"dir"`
	// Files counts the files copied; Decoded those in UTF-16 or UTF-32,
	// scanned decoded and written back in their encoding; Binary those
	// that are not text, scanned as bytes with each secret masked in
	// place (same size); Skipped the symbolic links and special files left
	// out (a link could lead the editor out of the copy).
	Files   int `json:"files"`
	Decoded int `json:"decoded"`
	Binary  int `json:"binary"`
	Skipped int `json:"skipped"`
	// Digest is the SHA-256 over every copied path and content: a resumed
	// run checks that the source still sanitises to the same copy.
	Digest string `json:"digest"`
	// Stats counts the secrets first seen in this repository.
	Stats Stats `json:"stats"`
	// Redacted lists, per file with a secret, where each was replaced.
	Redacted []FileRedactions `json:"redacted,omitempty"`
}

// FileRedactions is where secrets were replaced in one file: its path in
// the copy (slash-separated), its encoding (EncUTF8, "utf-16le-bom", …,
// EncBinary) and the replacements, never the secrets.
type FileRedactions struct {
	Path         string        `json:"path"`
	Encoding     string        `json:"encoding"`
	Replacements []Replacement `json:"replacements"`
}

// ErrSourceChanged means a repository no longer sanitises to the copy a
// run folder holds.
var ErrSourceChanged = errors.New("the repository changed since its sanitised copy was made")

// Sanitise copies the repository src to dst with every secret replaced by
// its placeholder (see Redactor). src may also be one file, copied to the
// file dst. The .git folder is left out, and so is .vscode: a
// repository's own workspace settings could turn back on what the
// driver's settings turn off (tasks, git, npm detection). Text in UTF-16
// or UTF-32 (with a byte order mark, or without one) is decoded, scanned
// and written back in its encoding; text with stray NUL bytes is text; a
// binary file is scanned as bytes and each secret in it is overwritten
// with its placeholder cut or padded with X to the secret's length. When
// want is the digest recorded for an existing dst, dst is kept as it is
// after checking that src still sanitises to the same digest (every file
// is scanned again, which also teaches r the run's placeholders);
// otherwise dst is made afresh (written beside it, then renamed into
// place).
func Sanitise(ctx context.Context, r *Redactor, src, dst, want string) (Copy, error) {
	c := Copy{Source: src, Dir: dst}
	reuse := false
	if want != "" {
		if _, err := os.Stat(dst); err == nil {
			reuse = true
		}
	}
	tmp := ""
	if !reuse {
		tmp = dst + ".partial"
		if err := os.RemoveAll(tmp); err != nil {
			return c, fmt.Errorf("sanitise %s: %w", src, err)
		}
	}
	root, err := filepath.EvalSymlinks(src)
	if err != nil {
		return c, fmt.Errorf("sanitise %s: %w", src, err)
	}
	before := r.Stats()
	sum := sha256.New()
	err = filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		out := filepath.Join(tmp, rel)
		if p == root && !e.IsDir() { // one file
			rel, out = filepath.Base(p), tmp
		}
		switch {
		case e.IsDir() && (e.Name() == ".git" || e.Name() == ".vscode") && p != root:
			return filepath.SkipDir
		case e.IsDir():
			if tmp != "" {
				return os.MkdirAll(out, 0o700)
			}
			return nil
		case !e.Type().IsRegular():
			c.Skipped++
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		c.Files++
		data, fr, err := sanitiseFile(r, data)
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		switch fr.Encoding {
		case EncUTF8:
		case EncBinary:
			c.Binary++
		default:
			c.Decoded++
		}
		if len(fr.Replacements) > 0 {
			fr.Path = filepath.ToSlash(rel)
			c.Redacted = append(c.Redacted, fr)
		}
		fmt.Fprintf(sum, "%s\x00%d\x00", filepath.ToSlash(rel), len(data))
		sum.Write(data)
		if tmp == "" {
			return nil
		}
		mode := fs.FileMode(0o600)
		if info, err := e.Info(); err == nil && info.Mode()&0o100 != 0 {
			mode = 0o700
		}
		return os.WriteFile(out, data, mode)
	})
	if err != nil {
		return c, fmt.Errorf("sanitise %s: %w", src, err)
	}
	c.Digest = hex.EncodeToString(sum.Sum(nil))
	c.Stats = r.Stats().Minus(before)
	if reuse {
		if c.Digest != want {
			return c, fmt.Errorf("sanitise %s: %w (its copy %s was made from other content; use a new run folder)", src, ErrSourceChanged, dst)
		}
		return c, nil
	}
	if err := os.RemoveAll(dst); err != nil {
		return c, fmt.Errorf("sanitise %s: %w", src, err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		return c, fmt.Errorf("sanitise %s: %w", src, err)
	}
	return c, nil
}

// sanitiseFile returns data with its secrets replaced and where they
// were (Path left empty). A file without secrets is returned as it is,
// byte for byte.
func sanitiseFile(r *Redactor, data []byte) ([]byte, FileRedactions, error) {
	d := decodeFile(data)
	fr := FileRedactions{Encoding: d.Encoding}
	text, reps := r.redact(d.Text, d.Encoding == EncBinary)
	fr.Replacements = reps
	if len(reps) == 0 {
		return data, fr, nil
	}
	out, err := d.encode(text)
	if err != nil {
		return nil, fr, fmt.Errorf("write back as %s: %w", d.Encoding, err)
	}
	return out, fr, nil
}
