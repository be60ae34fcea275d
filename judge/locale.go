package judge

import (
	"strings"
	"unicode"
)

// Scripts a locale is written in. Locale detection works on scripts: an
// answer in French to an English question is not caught, a Chinese question
// answered in English is.
const (
	scriptLatin    = "latin"
	scriptHan      = "han"
	scriptJapanese = "japanese"
	scriptHangul   = "hangul"
	scriptCyrillic = "cyrillic"
)

// minScriptWeight is how much natural language (in word units) a text needs
// before its script is decided.
const minScriptWeight = 3

// scriptOfLocale is the script a locale ("zh", "zh-CN", "ja", "en-US", ...)
// is written in; unknown locales are Latin.
func scriptOfLocale(locale string) string {
	lang, _, _ := strings.Cut(strings.ToLower(locale), "-")
	lang, _, _ = strings.Cut(lang, "_")
	switch lang {
	case "zh", "cn":
		return scriptHan
	case "ja", "jp":
		return scriptJapanese
	case "ko", "kr":
		return scriptHangul
	case "ru", "uk", "be", "bg", "sr", "kk", "mk":
		return scriptCyrillic
	default:
		return scriptLatin
	}
}

// localeOfScript is the locale DetectLocale reports for a script.
func localeOfScript(script string) string {
	switch script {
	case scriptHan:
		return "zh"
	case scriptJapanese:
		return "ja"
	case scriptHangul:
		return "ko"
	case scriptCyrillic:
		return "ru"
	default:
		return "en"
	}
}

// dominantScript is the script most of text's natural language is written
// in, weighed in word units: a run of Latin or Cyrillic letters is one word,
// a Han character two thirds of one (Chinese averages about 1.5 characters a
// word), a kana or Hangul syllable half of one. Any kana makes Han text
// Japanese. It reports "" when text holds less than minScriptWeight words.
func dominantScript(text string) string {
	weights := map[string]float64{}
	kana := false
	inWord := ""
	for _, r := range text {
		s := ""
		switch {
		case unicode.Is(unicode.Han, r):
			weights[scriptHan] += 2.0 / 3
		case unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r):
			weights[scriptJapanese] += 0.5
			kana = true
		case unicode.Is(unicode.Hangul, r):
			weights[scriptHangul] += 0.5
		case unicode.Is(unicode.Cyrillic, r):
			s = scriptCyrillic
		case unicode.Is(unicode.Latin, r):
			s = scriptLatin
		}
		if s != "" && s != inWord {
			weights[s]++
		}
		inWord = s
	}
	if kana {
		weights[scriptJapanese] += weights[scriptHan]
		delete(weights, scriptHan)
	}
	best, bestW, total := "", 0.0, 0.0
	for _, s := range []string{scriptLatin, scriptHan, scriptJapanese, scriptHangul, scriptCyrillic} {
		total += weights[s]
		if weights[s] > bestW {
			best, bestW = s, weights[s]
		}
	}
	if total < minScriptWeight {
		return ""
	}
	return best
}

// DetectLocale guesses the locale of natural-language text from its script
// ("en" for any Latin script, "zh", "ja", "ko", "ru"); code spans and URLs
// are ignored. It reports "" when there is too little text to tell.
func DetectLocale(text string) string {
	md := parseMarkdown(text)
	s := dominantScript(withoutInlineCode(md.Prose))
	if s == "" {
		return ""
	}
	return localeOfScript(s)
}
