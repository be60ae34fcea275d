package analyst

import (
	"regexp"
	"strings"
	"unicode"
)

var inlineCode = regexp.MustCompile("`[^`\n]*`")

// DetectLocale guesses the natural language of a query from its script,
// ignoring code (fenced blocks, inline `code`): any kana means ja; else the
// dominant script among Han (zh), Hangul (ko), Cyrillic (ru) and Latin,
// a non-Latin letter weighing three Latin ones (a CJK character carries a
// word); Latin text is es, de or fr when it has more of that language's
// stopwords and accents than English ones, else en. A query without letters
// (a bare "/fix") is en.
func DetectLocale(query string) string {
	prose, _ := splitCode(query)
	prose = inlineCode.ReplaceAllString(prose, " ")
	var kana, han, hangul, cyr, latin int
	for _, r := range prose {
		switch {
		case unicode.In(r, unicode.Hiragana, unicode.Katakana):
			kana++
		case unicode.Is(unicode.Han, r):
			han++
		case unicode.Is(unicode.Hangul, r):
			hangul++
		case unicode.Is(unicode.Cyrillic, r):
			cyr++
		case unicode.Is(unicode.Latin, r):
			latin++
		}
	}
	if kana > 0 {
		return "ja"
	}
	best, n := "latin", latin
	for _, c := range []struct {
		loc string
		n   int
	}{{"zh", han * 3}, {"ko", hangul * 3}, {"ru", cyr * 3}} {
		if c.n > n {
			best, n = c.loc, c.n
		}
	}
	if best != "latin" {
		return best
	}
	return latinLocale(prose)
}

var stopwords = map[string][]string{
	"en": {"the", "is", "this", "what", "why", "how", "does", "a", "an", "to", "of", "and", "it", "in", "for", "with", "can", "you", "please", "my", "code"},
	"es": {"el", "la", "los", "las", "que", "qué", "por", "para", "una", "es", "esta", "este", "cómo", "como", "función", "código", "de", "del", "y", "en", "puedes", "explica", "mi"},
	"de": {"der", "die", "das", "und", "ist", "nicht", "wie", "warum", "diese", "dieser", "dieses", "funktion", "ich", "ein", "eine", "mit", "was", "macht", "bitte", "erkläre", "für"},
	"fr": {"le", "la", "les", "est", "une", "des", "pourquoi", "comment", "cette", "ce", "fonction", "je", "pas", "avec", "dans", "du", "que", "et", "explique", "pour", "code"},
}

var accents = map[string]string{"es": "ñ¿¡áíóú", "de": "ßäöü", "fr": "çèêàùâîôœë"}

func latinLocale(prose string) string {
	score := map[string]int{}
	words := strings.FieldsFunc(strings.ToLower(prose), func(r rune) bool {
		return !unicode.IsLetter(r) && r != '\''
	})
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
		for _, r := range strings.ToLower(prose) {
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
