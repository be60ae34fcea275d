package vocab

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// Scripts a locale is written in.
const (
	ScriptLatin    = "latin"
	ScriptHan      = "han"
	ScriptJapanese = "japanese"
	ScriptHangul   = "hangul"
	ScriptCyrillic = "cyrillic"
)

// minScriptWords is how much prose (in word units) a text needs before
// its script, and so its locale, is sure.
const minScriptWords = 3

// ScriptOf is the script a locale ("zh", "zh-CN", "ja", "en-US", ...) is
// written in; unknown locales are Latin.
func ScriptOf(locale string) string {
	switch Canonical(DimLocale, locale) {
	case "zh":
		return ScriptHan
	case "ja":
		return ScriptJapanese
	case "ko":
		return ScriptHangul
	case "ru":
		return ScriptCyrillic
	}
	lang, _, _ := strings.Cut(normalize(locale), "_")
	switch lang {
	case "uk", "be", "bg", "sr", "kk", "mk":
		return ScriptCyrillic
	}
	return ScriptLatin
}

// localeOfScript is the locale of a non-Latin script.
var localeOfScript = map[string]string{ScriptHan: "zh", ScriptJapanese: "ja", ScriptHangul: "ko", ScriptCyrillic: "ru"}

// DetectLocale guesses the locale of text's prose (see the package doc).
// sure is false when the prose holds fewer than three words; locale is
// then still the best guess, or "" when the prose has no letters at all.
func DetectLocale(text string) (locale string, sure bool) {
	prose := Prose(text)
	script, words := dominantScript(prose)
	switch {
	case script == "":
		return "", false
	case script == ScriptLatin:
		return latinLocale(prose), words >= minScriptWords
	}
	return localeOfScript[script], words >= minScriptWords
}

// Script is the script most of text's prose is written in, or "" when it
// holds fewer than three words.
func Script(text string) string {
	s, words := dominantScript(Prose(text))
	if words < minScriptWords {
		return ""
	}
	return s
}

// dominantScript is the script most of prose is written in and how many
// words the prose holds, weighed in word units: a run of Latin or Cyrillic
// letters is one word, a Han character two thirds of one (Chinese averages
// about 1.5 characters a word), a kana or Hangul syllable half of one. Any
// kana makes Han text Japanese. A tie goes to the script other than Latin.
func dominantScript(prose string) (string, float64) {
	weights := map[string]float64{}
	kana := false
	inWord := ""
	for _, r := range prose {
		s := ""
		switch {
		case unicode.Is(unicode.Han, r):
			weights[ScriptHan] += 2.0 / 3
		case unicode.In(r, unicode.Hiragana, unicode.Katakana):
			weights[ScriptJapanese] += 0.5
			kana = true
		case unicode.Is(unicode.Hangul, r):
			weights[ScriptHangul] += 0.5
		case unicode.Is(unicode.Cyrillic, r):
			s = ScriptCyrillic
		case unicode.Is(unicode.Latin, r):
			s = ScriptLatin
		}
		if s != "" && s != inWord {
			weights[s]++
		}
		inWord = s
	}
	if kana {
		weights[ScriptJapanese] += weights[ScriptHan]
		delete(weights, ScriptHan)
	}
	best, bestW, total := "", 0.0, 0.0
	// Latin last: a tie goes to the other script (English terms are common
	// in queries written in other languages, rarely the other way round).
	for _, s := range []string{ScriptHan, ScriptJapanese, ScriptHangul, ScriptCyrillic, ScriptLatin} {
		total += weights[s]
		if weights[s] > bestW {
			best, bestW = s, weights[s]
		}
	}
	return best, total
}

var stopwords = map[string][]string{
	"en": {"the", "is", "this", "what", "why", "how", "does", "a", "an", "to", "of", "and", "it", "in", "for", "with", "can", "you", "please", "my", "these", "that", "should", "when", "file", "files"},
	"es": {"el", "la", "los", "las", "que", "qué", "por", "para", "una", "un", "es", "esta", "este", "estos", "estas", "cómo", "como", "función", "código", "de", "del", "y", "en", "puedes", "explica", "mi", "archivo", "archivos", "debería", "cuál", "cuándo", "hace", "al", "lo", "se", "su"},
	"de": {"der", "die", "das", "den", "dem", "des", "und", "ist", "nicht", "wie", "warum", "diese", "dieser", "dieses", "diesen", "diesem", "funktion", "ich", "ein", "eine", "einer", "mit", "was", "macht", "bitte", "erkläre", "für", "funktioniert", "zu", "datei", "dateien", "sollte", "wann", "von", "oder"},
	"fr": {"le", "la", "les", "est", "une", "des", "pourquoi", "comment", "cette", "ce", "ces", "fonction", "je", "pas", "avec", "dans", "du", "que", "et", "explique", "pour", "fichier", "fichiers", "quand", "faut", "il", "qui", "fonctionne", "quelle", "fait", "rends", "rendre"},
}

var accents = map[string]string{"es": "ñ¿¡áíóú", "de": "ßäöü", "fr": "çèêàùâîôœë"}

// latinLocale is es, de or fr when prose holds more of that language's
// stopwords (and accents, two each) than English ones; else en.
func latinLocale(prose string) string {
	lower := strings.ToLower(prose)
	score := map[string]int{}
	words := strings.FieldsFunc(lower, func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' })
	for _, w := range words {
		for loc, list := range stopwords {
			for _, s := range list {
				if w == s {
					score[loc]++
				}
			}
		}
	}
	for loc, chars := range accents {
		for _, r := range lower {
			if strings.ContainsRune(chars, r) {
				score[loc] += 2
			}
		}
	}
	best := "en"
	for _, loc := range []string{"es", "de", "fr"} {
		if score[loc] > score[best] {
			best = loc
		}
	}
	return best
}

var codeLine = regexp.MustCompile(`[;{}]\s*$|^\s*(def|func|function|class|return|import|const|let|var|if|for|while|public|private)\b.*[(:{=]|^\s{4,}\S|=>|\w\(.*\)\s*$`)

// LooksLikeCode reports whether a line of a query or answer looks like
// code (ends in ; { or }, starts with a keyword and holds a bracket or
// assignment, is indented four spaces or more, holds => or ends in a
// call).
func LooksLikeCode(line string) bool { return codeLine.MatchString(line) }

// Prose is the natural language of a query or an answer: without fenced
// code blocks (``` or ~~~, indented at most three spaces), inline `code`,
// URLs, and, in text of several lines, lines that look like pasted code.
func Prose(text string) string {
	var out []string
	var fence string
	multi := strings.Contains(text, "\n")
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		indent := len(line) - len(trimmed)
		if f := fenceOf(trimmed); indent <= 3 && f != "" {
			rest := strings.TrimSpace(trimmed[len(f):])
			switch {
			case fence == "" && f[0] == '`' && strings.Contains(rest, "`"):
				// ```x``` is inline code (a backtick fence's info has no backticks)
			case fence == "":
				fence = f
				continue
			case f[0] == fence[0] && len(f) >= len(fence) && rest == "":
				fence = ""
				continue
			default:
				continue
			}
		}
		if fence != "" || (multi && codeLine.MatchString(line)) {
			continue
		}
		out = append(out, line)
	}
	return withoutInlineCode(strings.Join(out, "\n"))
}

// fenceOf is the fence a line opens or closes (its run of ``` or ~~~), or
// "".
func fenceOf(line string) string {
	for _, ch := range []string{"`", "~"} {
		n := len(line) - len(strings.TrimLeft(line, ch))
		if n >= 3 {
			return line[:n]
		}
	}
	return ""
}

// fileName is a file name or path ("sum.go", "src/app.ts"): code, not
// prose, whatever language the sentence around it is in.
var fileName = regexp.MustCompile(`[A-Za-z0-9_./-]*[A-Za-z0-9_]\.[A-Za-z][A-Za-z0-9]{0,7}\b`)

// withoutInlineCode removes `inline code` spans, URLs and file names.
func withoutInlineCode(prose string) string {
	var sb strings.Builder
	in := false
	for _, r := range prose {
		if r == '`' {
			in = !in
			continue
		}
		if !in {
			sb.WriteRune(r)
		}
	}
	words := strings.Fields(sb.String())
	kept := words[:0]
	for i, w := range words {
		words[i] = fileName.ReplaceAllString(w, "")
	}
	for _, w := range words {
		if !strings.Contains(w, "://") {
			kept = append(kept, w)
		}
	}
	return strings.Join(kept, " ")
}

// LocalesIn lists the locales text holds (sorted, each once): those of its
// paragraphs (prose separated by blank lines) whose locale DetectLocale is
// sure of. A plugin's request often wraps a query in another language in
// its own English framing ("File: ...", "Selected code ..."), so the text
// as a whole can read as one language while holding two; and a paragraph
// too short to be sure of adds nothing.
func LocalesIn(text string) []string {
	var out []string
	for _, para := range paragraphs(text) {
		if loc, sure := DetectLocale(para); sure && !slices.Contains(out, loc) {
			out = append(out, loc)
		}
	}
	slices.Sort(out)
	return out
}

// paragraphs splits text at blank lines outside fenced code blocks.
func paragraphs(text string) []string {
	var out []string
	var cur []string
	fence := ""
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if f := fenceOf(trimmed); len(line)-len(trimmed) <= 3 && f != "" {
			rest := strings.TrimSpace(trimmed[len(f):])
			switch {
			case fence == "" && !(f[0] == '`' && strings.Contains(rest, "`")):
				fence = f
			case fence != "" && f[0] == fence[0] && len(f) >= len(fence) && rest == "":
				fence = ""
			}
		}
		if fence == "" && strings.TrimSpace(line) == "" {
			if len(cur) > 0 {
				out = append(out, strings.Join(cur, "\n"))
			}
			cur = nil
			continue
		}
		cur = append(cur, line)
	}
	if len(cur) > 0 {
		out = append(out, strings.Join(cur, "\n"))
	}
	return out
}
