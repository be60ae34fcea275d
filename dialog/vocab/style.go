package vocab

import (
	"strings"
	"unicode"
)

// QueryStyleOf classifies a query's length (terse: up to 6 words,
// verbose: more than 30, counted by Words) and whether code is pasted
// into it (HasCode): the query style dimension's value, read off the
// query. The analyst fits profiles with it and the realism report
// compares generated and logged queries with it.
func QueryStyleOf(query string) string {
	prose, code := SplitCode(query)
	style := StyleNormal
	switch w := Words(prose); {
	case w <= 6:
		style = StyleTerse
	case w > 30:
		style = StyleVerbose
	}
	if code {
		style += "_code"
	}
	return style
}

// Words counts text's words: a run of non-space characters is one, and a
// run holding CJK characters (Han, kana, Hangul) half a word per CJK
// character plus a half.
func Words(text string) float64 {
	words := 0.0
	for _, f := range strings.Fields(text) {
		cjk := 0
		for _, r := range f {
			if IsCJK(r) {
				cjk++
			}
		}
		if cjk > 0 {
			words += float64(cjk)/2 + 0.5
		} else {
			words++
		}
	}
	return words
}

// IsCJK reports whether r is a Han, kana or Hangul character.
func IsCJK(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// SplitCode separates what a query pastes as code (fenced blocks, and in
// a query of several lines two or more lines that look like code) from
// its prose, and says whether it pastes code.
func SplitCode(query string) (prose string, hasCode bool) {
	var out []string
	inFence, codeLines := false, 0
	multi := strings.Contains(query, "\n")
	for _, line := range strings.Split(query, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
			hasCode = true
			continue
		}
		if inFence {
			continue
		}
		if multi && LooksLikeCode(line) {
			codeLines++
			continue
		}
		out = append(out, line)
	}
	if codeLines >= 2 {
		hasCode = true
	}
	return strings.Join(out, "\n"), hasCode
}
