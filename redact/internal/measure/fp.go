package measure

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"dialogfarm/redact"
)

// Root is a folder of ordinary text to count false positives on, and the
// name the exclusion list calls it by ("repo", "modcache").
type Root struct {
	Name, Dir string
	// Files, when set, lists the files to scan (relative to Dir, such as
	// `git ls-files` gives); otherwise every file under Dir is.
	Files []string
}

// Exclusion is one pattern of the exclusion list: ROOT:GLOB (** crosses
// folders) and why those files are left out.
type Exclusion struct {
	Root, Glob, Why string
	re              *regexp.Regexp
}

// ReadExclusions reads an exclusion list: one "ROOT:GLOB  # why" a line,
// blank lines and lines starting with # ignored.
func ReadExclusions(path string) ([]Exclusion, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read exclusions: %w", err)
	}
	defer f.Close()
	var out []Exclusion
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		pat, why, _ := strings.Cut(line, "#")
		root, glob, ok := strings.Cut(strings.TrimSpace(pat), ":")
		if !ok || glob == "" {
			return nil, fmt.Errorf("read exclusions %s:%d: want ROOT:GLOB", path, n)
		}
		out = append(out, Exclusion{Root: root, Glob: glob, Why: strings.TrimSpace(why), re: globRe(glob)})
	}
	return out, sc.Err()
}

// globRe turns a glob into a regular expression on slash paths: * is any
// run within a folder name, **/ any number of folders (none included), **
// anything.
func globRe(glob string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(glob); i++ {
		switch c := glob[i]; {
		case strings.HasPrefix(glob[i:], "**/"):
			b.WriteString("(?:.*/)?")
			i += 2
		case c == '*' && i+1 < len(glob) && glob[i+1] == '*':
			b.WriteString(".*")
			i++
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// FP is one finding on ordinary text; Masked shows its first 4 characters
// and its length, never the whole value.
type FP struct {
	Root, Path string
	Line       int
	Rule       string
	Masked     string
}

// FPResult is what FalsePositives counted.
type FPResult struct {
	Files, Lines, Excluded, Binary, TooBig int
	Findings                               []FP
}

// Per10k is the number of findings per 10,000 lines.
func (r FPResult) Per10k() float64 {
	return float64(len(r.Findings)) * 10000 / float64(max(r.Lines, 1))
}

// maxFileSize leaves out files too big to be anyone's source (generated
// tables, data dumps).
const maxFileSize = 4 << 20

// FalsePositives scans every text file of roots with d, except those the
// exclusions name, and returns every finding (all count as false
// positives: the roots hold no secrets but the excluded fixtures).
func FalsePositives(ctx context.Context, d *redact.Detector, roots []Root, ex []Exclusion, workers int) (FPResult, error) {
	var (
		mu  sync.Mutex
		res FPResult
	)
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	scan := func(root Root, rel string) {
		g.Go(func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			info, err := os.Lstat(filepath.Join(root.Dir, rel))
			if err != nil || !info.Mode().IsRegular() {
				return nil
			}
			if info.Size() > maxFileSize {
				mu.Lock()
				res.TooBig++
				mu.Unlock()
				return nil
			}
			data, err := os.ReadFile(filepath.Join(root.Dir, rel))
			if err != nil {
				return nil
			}
			text, binary := redact.DecodeText(data), redact.IsBinary(data)
			var fps []FP
			lines := 0
			if !binary {
				lines = strings.Count(text, "\n") + 1
				seen := map[int]bool{}
				line, at := 1, 0
				for _, f := range d.Find(text) { // sorted by position
					line += strings.Count(text[at:f.Start], "\n")
					at = f.Start
					if f.Join != 0 && seen[f.Join] {
						continue // a later piece of a split secret
					}
					seen[f.Join] = true
					v := text[f.Start:f.End]
					fps = append(fps, FP{Root: root.Name, Path: rel, Line: line, Rule: f.Rule,
						Masked: fmt.Sprintf("%.4s…(%d)", v, len(v))})
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if binary {
				res.Binary++
				return nil
			}
			res.Files++
			res.Lines += lines
			res.Findings = append(res.Findings, fps...)
			return nil
		})
	}
	excluded := func(root Root, rel string) bool {
		rel = filepath.ToSlash(rel)
		for _, e := range ex {
			if e.Root == root.Name && e.re.MatchString(rel) {
				return true
			}
		}
		return false
	}
	for _, root := range roots {
		if root.Files != nil {
			for _, rel := range root.Files {
				if excluded(root, rel) {
					res.Excluded++
					continue
				}
				scan(root, rel)
			}
			continue
		}
		err := filepath.WalkDir(root.Dir, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			rel, _ := filepath.Rel(root.Dir, p)
			if e.IsDir() {
				if rel != "." && excluded(root, rel+"/") {
					return filepath.SkipDir
				}
				return nil
			}
			if excluded(root, rel) {
				mu.Lock()
				res.Excluded++
				mu.Unlock()
				return nil
			}
			scan(root, rel)
			return nil
		})
		if err != nil {
			return res, err
		}
	}
	if err := g.Wait(); err != nil {
		return res, err
	}
	return res, nil
}
