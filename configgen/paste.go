package configgen

import (
	"math/rand/v2"
	"regexp"
	"strings"

	"dialogfarm/dialog/vocab"
)

// Kinds of code a "_code" query pastes: never the code the plugin already
// sends (the selection, or the lines around the cursor), but code the
// developer brings from elsewhere.
const (
	pasteOtherFile = "other_file" // an excerpt of the other open file (reference open_files)
	pasteCallSite  = "call_site"  // where the function in view is called
	pasteSameFile  = "same_file"  // another function of the open file
	pasteRelated   = "related"    // a function of another file of the repository
)

// paste is what a "_code" query pastes, and from which file.
type paste struct {
	Kind, File, Code string
}

// maxPasteLines bounds a pasted excerpt.
const maxPasteLines = 8

// choosePaste picks the code a "_code" query pastes for a config on f
// whose code in view covers rows [shownFrom, shownTo]: the other open
// file's first function for an open_files reference; else a call of the
// symbol elsewhere (another file first); else another function of the
// open file outside the rows in view; else a function of another file.
// Only secret-free rows are pasted; nil when nothing qualifies.
func choosePaste(idx *index, f *fileEntry, symbol string, openFiles []string, shownFrom, shownTo int, rng *rand.Rand) *paste {
	others := idx.cleanByRepo[f.repo]
	if len(openFiles) > 0 {
		for _, e := range others {
			if e.rel == openFiles[0] {
				if code := firstFunction(e, -1, -1); code != "" {
					return &paste{Kind: pasteOtherFile, File: e.rel, Code: code}
				}
			}
		}
	}
	if symbol != "" {
		word := regexp.MustCompile(`\b` + regexp.QuoteMeta(symbol) + `\s*\(`)
		start := rng.IntN(len(others) + 1)
		for k := range len(others) + 1 {
			e := f
			if j := (start + k) % (len(others) + 1); j < len(others) {
				e = others[j]
			}
			if e == f && k < len(others) {
				continue // the open file last
			}
			if code := callSite(e, word, symbol, e == f, shownFrom, shownTo); code != "" {
				return &paste{Kind: pasteCallSite, File: e.rel, Code: code}
			}
		}
	}
	if code := firstFunction(f, shownFrom, shownTo); code != "" {
		return &paste{Kind: pasteSameFile, File: f.rel, Code: code}
	}
	for _, k := range rng.Perm(len(others)) {
		if e := others[k]; e != f && e.lang == f.lang {
			if code := firstFunction(e, -1, -1); code != "" {
				return &paste{Kind: pasteRelated, File: e.rel, Code: code}
			}
		}
	}
	return nil
}

// firstFunction is the start of the first function of e (up to
// maxPasteLines lines) outside rows [from, to] and free of secrets.
func firstFunction(e *fileEntry, from, to int) string {
	for _, fn := range e.p.funcs {
		s := fn.outer.startRow
		end := min(fn.outer.endRow, s+maxPasteLines-1)
		if (end >= from && s <= to) || e.secretIn(s, end) || end-s < 1 {
			continue
		}
		return strings.TrimRight(e.p.text(s, end), "\n")
	}
	return ""
}

// callSite is a few lines around the first call of symbol in e that is
// not its own definition, outside rows [from, to] when e is the open
// file, and free of secrets.
func callSite(e *fileEntry, call *regexp.Regexp, symbol string, same bool, from, to int) string {
	defs := map[int]bool{}
	for _, fn := range e.p.funcs {
		if fn.name == symbol {
			defs[fn.outer.startRow] = true
			for r := fn.outer.startRow; r <= fn.body.startRow; r++ {
				defs[r] = true
			}
		}
	}
	for r := range len(e.p.lineStart) {
		if defs[r] || !call.Match(e.p.line(r)) {
			continue
		}
		s, end := max(r-2, 0), min(r+3, len(e.p.lineStart)-1)
		if same && end >= from && s <= to {
			continue
		}
		if e.secretIn(s, end) {
			continue
		}
		code := strings.TrimRight(e.p.text(s, end), "\n")
		if strings.TrimSpace(code) != "" && vocab.Words(code) > 1 {
			return code
		}
	}
	return ""
}
