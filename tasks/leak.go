package tasks

import (
	"bytes"
	"fmt"
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// MinLeakTokens is the shortest body (in normalised tokens, see canon)
// the leak check looks for: shorter ones (return a * b) are written the
// same way by anyone and prove nothing.
const MinLeakTokens = 20

// Similarity (2·LCS over the sum of lengths, normalised tokens) from which
// a function elsewhere in the repository is a twin of a stubbed one: with
// the same name (a build-tag twin, a vendored or generated copy), or in a
// Go file its build constraints leave out (a non-generic fallback).
const (
	twinSameName = 0.6
	twinExcluded = 0.8
)

// Leak is a stubbed function's body found in a step's workspace or task.
type Leak struct {
	Function string `json:"function"` // the stubbed function
	File     string `json:"file"`     // workspace-relative, or requirement.md
	Line     int    `json:"line"`     // in that file as the step shows it
	// How: "copy" (its normalised body verbatim) or "twin: …" (a copy
	// that could not be stubbed, and why).
	How string `json:"how"`
}

func (l Leak) String() string {
	return fmt.Sprintf("%s at %s:%d (%s)", l.Function, l.File, l.Line, l.How)
}

// repoIndex holds a repository's text files and functions, read once per
// build: the leak check scans every file, the twin search every function.
type repoIndex struct {
	files  map[string]*repoFile
	order  []string
	defs   []defEntry
	byName map[string][]int
	byBody map[string][]int
	excl   []int // defs in Go files the build leaves out
}

type repoFile struct {
	src      []byte
	canon    *canon
	excluded bool // a Go file its build constraints leave out
	defs     []funcDef
}

type defEntry struct {
	file     string
	def      funcDef
	body     []string // normalised
	excluded bool
}

// skipDirs are never part of a workspace (copyTree leaves them out).
var skipDirs = map[string]bool{".git": true, "__pycache__": true, ".pytest_cache": true, ".mypy_cache": true, ".tox": true, "node_modules": true}

// indexRepo reads repo's text files (up to 2 MiB each) and lists the
// functions of its source files in lang, test files excepted.
func indexRepo(repo, lang, python string) (*repoIndex, error) {
	ix := &repoIndex{files: map[string]*repoFile{}, byName: map[string][]int{}, byBody: map[string][]int{}}
	pyFiles := map[string][]byte{}
	err := filepath.WalkDir(repo, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if skipDirs[d.Name()] && p != repo {
				return filepath.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil || !d.Type().IsRegular() || info.Size() > 2<<20 {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("read %s: %w", p, err)
		}
		if bytes.IndexByte(src[:min(len(src), 8000)], 0) >= 0 {
			return nil // binary
		}
		rel, _ := filepath.Rel(repo, p)
		rel = filepath.ToSlash(rel)
		f := &repoFile{src: src}
		ix.files[rel] = f
		ix.order = append(ix.order, rel)
		switch {
		case isTestFile(rel):
		case lang == LangGo && strings.HasSuffix(rel, ".go"):
			match, err := build.Default.MatchFile(filepath.Dir(p), filepath.Base(p))
			f.excluded = err != nil || !match
			f.defs, _ = goDefs(p, src) // a file that does not parse has no functions to copy
		case lang == LangPython && strings.HasSuffix(rel, ".py"):
			pyFiles[rel] = src
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("index %s: %w", repo, err)
	}
	if len(pyFiles) > 0 {
		defs, err := pyDefs(python, pyFiles)
		if err != nil {
			return nil, err
		}
		for rel, ds := range defs {
			ix.files[rel].defs = ds
		}
	}
	for _, rel := range ix.order {
		f := ix.files[rel]
		for _, d := range f.defs {
			e := defEntry{file: rel, def: d, body: canonOf(rel, []byte(d.Body)).toks, excluded: f.excluded}
			i := len(ix.defs)
			ix.defs = append(ix.defs, e)
			ix.byName[d.Name] = append(ix.byName[d.Name], i)
			if len(e.body) >= MinLeakTokens {
				k := strings.Join(e.body, "\x00")
				ix.byBody[k] = append(ix.byBody[k], i)
			}
			if e.excluded {
				ix.excl = append(ix.excl, i)
			}
		}
	}
	return ix, nil
}

// def returns the entry of the function declared at file:line.
func (ix *repoIndex) def(file string, line int) (defEntry, bool) {
	for _, e := range ix.defs {
		if e.file == file && e.def.Line == line {
			return e, true
		}
	}
	return defEntry{}, false
}

// twins returns the functions elsewhere in the repository that hold ref's
// body: the same normalised body; the same name and a similar body (or,
// in a Go file the build leaves out, the same name alone); any similar
// function of a Go file the build leaves out. Test files are never twins.
func (ix *repoIndex) twins(ref defEntry) []defEntry {
	seen := map[int]bool{}
	var out []defEntry
	add := func(i int) {
		e := ix.defs[i]
		if seen[i] || (e.file == ref.file && e.def.Line == ref.def.Line) {
			return
		}
		seen[i] = true
		out = append(out, e)
	}
	long := len(ref.body) >= MinLeakTokens
	if long {
		for _, i := range ix.byBody[strings.Join(ref.body, "\x00")] {
			add(i)
		}
	}
	for _, i := range ix.byName[ref.def.Name] {
		e := ix.defs[i]
		if e.file == ref.file {
			continue
		}
		if e.excluded || (long && similarity(ref.body, e.body, twinSameName) >= twinSameName) {
			add(i)
		}
	}
	if long {
		for _, i := range ix.excl {
			if similarity(ref.body, ix.defs[i].body, twinExcluded) >= twinExcluded {
				add(i)
			}
		}
	}
	return out
}

// canonOf returns the normalised tokens of file, as in files (a step's
// changed files) or else in the repository.
func (ix *repoIndex) canonIn(files map[string][]byte, file string) canon {
	if src, ok := files[file]; ok {
		return canonOf(file, src)
	}
	f := ix.files[file]
	if f.canon == nil {
		c := canonOf(file, f.src)
		f.canon = &c
	}
	return *f.canon
}

// scan looks for the normalised bodies of refs (the step's functions, at
// least MinLeakTokens long) in every file of the workspace: the
// repository with files laid over it.
func (ix *repoIndex) scan(files map[string][]byte, refs []leakRef) []Leak {
	var out []Leak
	for _, f := range ix.order {
		c := ix.canonIn(files, f)
		out = append(out, scanCanon(f, c, refs)...)
	}
	for _, f := range sortedKeys(files) { // files the step adds
		if _, ok := ix.files[f]; !ok {
			out = append(out, scanCanon(f, canonOf(f, files[f]), refs)...)
		}
	}
	return out
}

// leakRef is a stubbed function and its normalised reference body.
type leakRef struct {
	name string
	body []string
}

func scanCanon(file string, c canon, refs []leakRef) []Leak {
	var out []Leak
	for _, r := range refs {
		if len(r.body) < MinLeakTokens {
			continue
		}
		for _, at := range c.index(r.body) {
			out = append(out, Leak{Function: r.name, File: file, Line: c.lines[at], How: "copy"})
		}
	}
	return out
}

// lineOf finds where a function's first line (its Source's) sits in src;
// def.Line when it is not there.
func lineOf(src []byte, d funcDef) int {
	first, _, _ := strings.Cut(d.Source, "\n")
	first = strings.TrimSpace(first)
	for i, l := range strings.Split(string(src), "\n") {
		if strings.TrimSpace(l) == first {
			return i + 1
		}
	}
	return d.Line
}
