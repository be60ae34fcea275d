package redact

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"dialogfarm/internal/runfiles"
)

// Copy is one repository's sanitised copy, as recorded in redactions.json.
type Copy struct {
	// Source is the original repository; Dir its sanitised copy.
	Source string `json:"source"`
	Dir    string `json:"dir"`
	// Files counts the files copied; Binary those copied unchanged because
	// they hold a NUL byte; Skipped the symbolic links and special files
	// left out (a link could lead the editor out of the copy).
	Files   int `json:"files"`
	Binary  int `json:"binary"`
	Skipped int `json:"skipped"`
	// Digest is the SHA-256 over every copied path and content: a resumed
	// run checks that the source still sanitises to the same copy.
	Digest string `json:"digest"`
	// Stats counts the secrets first seen in this repository.
	Stats Stats `json:"stats"`
}

// ErrSourceChanged means a repository no longer sanitises to the copy a
// run folder holds.
var ErrSourceChanged = errors.New("the repository changed since its sanitised copy was made")

// Sanitise copies the repository src to dst with every secret replaced by
// its placeholder (see Redactor). The .git folder is left out, and so is
// .vscode: a repository's own workspace settings could turn back on what
// the driver's settings turn off (tasks, git, npm detection). When want is
// the digest recorded for an existing dst, dst is kept as it is after
// checking that src still sanitises to the same digest (every file is
// scanned again, which also teaches r the run's placeholders); otherwise
// dst is made afresh (written beside it, then renamed into place).
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
		switch {
		case e.IsDir() && (e.Name() == ".git" || e.Name() == ".vscode") && p != root:
			return filepath.SkipDir
		case e.IsDir():
			if tmp != "" {
				return os.MkdirAll(filepath.Join(tmp, rel), 0o700)
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
		if bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 {
			c.Binary++
		} else {
			text, _ := r.Redact(string(data))
			data = []byte(text)
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
		return os.WriteFile(filepath.Join(tmp, rel), data, mode)
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

// Minus returns what s counts beyond before (distinct secrets and places).
func (s Stats) Minus(before Stats) Stats {
	d := Stats{Secrets: s.Secrets - before.Secrets, Occurrences: s.Occurrences - before.Occurrences, PerRule: map[string]int{}}
	for k, v := range s.PerRule {
		if n := v - before.PerRule[k]; n > 0 {
			d.PerRule[k] = n
		}
	}
	return d
}

// Redactions is the content of a run's redactions.json: the sanitised
// copies and the counts per rule. It never holds a secret.
type Redactions struct {
	Repos []Copy `json:"repos"`
	// Queries counts secrets found in chat configs' query texts (new ones
	// only: a secret already seen in a repository keeps its placeholder
	// and counts there).
	Queries Stats `json:"queries"`
	// Total is the sum over repositories and queries.
	Total Stats `json:"total"`
}

// Find returns the copy of source, if there is one.
func (rs Redactions) Find(source string) (Copy, bool) {
	for _, c := range rs.Repos {
		if c.Source == source {
			return c, true
		}
	}
	return Copy{}, false
}

// IsCopy says whether dir is one of the sanitised copies.
func (rs Redactions) IsCopy(dir string) bool {
	for _, c := range rs.Repos {
		if c.Dir == dir {
			return true
		}
	}
	return false
}

// Put records c, replacing the record of the same source, and recomputes
// Total.
func (rs *Redactions) Put(c Copy) {
	for i := range rs.Repos {
		if rs.Repos[i].Source == c.Source {
			rs.Repos[i] = c
			rs.total()
			return
		}
	}
	rs.Repos = append(rs.Repos, c)
	rs.total()
}

// SetQueries records the query counts and recomputes Total.
func (rs *Redactions) SetQueries(s Stats) {
	rs.Queries = s
	rs.total()
}

func (rs *Redactions) total() {
	rs.Total = Stats{PerRule: map[string]int{}}
	for _, c := range rs.Repos {
		rs.Total.Add(c.Stats)
	}
	rs.Total.Add(rs.Queries)
}

// ReadRedactions reads a redactions.json; a missing file is an empty
// record.
func ReadRedactions(path string) (Redactions, error) {
	var rs Redactions
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return rs, nil
	}
	if err != nil {
		return rs, fmt.Errorf("read redactions: %w", err)
	}
	if err := json.Unmarshal(data, &rs); err != nil {
		return rs, fmt.Errorf("read redactions %s: %w", path, err)
	}
	return rs, nil
}

// WriteRedactions writes rs to path atomically, readable by the owner only.
func WriteRedactions(path string, rs Redactions) error {
	data, err := json.MarshalIndent(rs, "", "  ")
	if err != nil {
		return fmt.Errorf("write redactions: %w", err)
	}
	if err := runfiles.WriteAtomic(path, append(data, '\n')); err != nil {
		return fmt.Errorf("write redactions: %w", err)
	}
	return nil
}
