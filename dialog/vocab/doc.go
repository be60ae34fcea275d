// Package vocab is the one vocabulary of the ten behaviour dimensions:
// their names and values (one spelling each), the aliases accepted when
// reading what people, models and older versions wrote, the keyword
// classifier that reads an intent off a query, and the detection of a
// query's locale. Every stage that names, reads or guesses a dimension's
// value uses it: profiles (schema and YAML), the analyst (logs → profile),
// configgen (templates), the judge (rubrics, subjects, rules), tasks (the
// execution judge) and the reports. So the analyst and the judge label
// every query alike.
//
// # One spelling
//
// A value has one spelling, the one profiles use: intent optimize and
// question (older judge output said optimise and general), snake_case
// elsewhere. Canonical maps any accepted spelling of a value to it, so old
// run files, profiles, rubric files and scored labels still load; writers
// only ever write the canonical spelling.
//
// # Intent from words
//
// IntentOf reads an intent off a query's words, for logs and requests
// that do not say it. A slash command first ("/tests"); then one ordered
// list of keyword rules in eight languages, the first that matches
// winning: a request for tests ("write tests for", "单元测试"), a fix
// ("bug", "error", "修复"), docs, optimize, refactor, any other mention
// of tests, explain, generate; question when none does. So "write tests
// for this bug" is tests and "fix the test" is fix.
//
// # Locale
//
// DetectLocale reads the natural language of the prose of a text (fenced
// and inline code, pasted code lines and URLs left out): by script first
// (any kana: ja; Han: zh; Hangul: ko; Cyrillic: ru), weighed in word units
// (a Latin or Cyrillic word is one, a Han character two thirds, a kana or
// Hangul syllable half); Latin text is es, de or fr when it holds more of
// that language's stopwords and accents than English ones, else en. It
// says whether the text was long enough to be sure (three words or more):
// the judge trusts only a sure reading over a chat config's locale, the
// analyst takes the guess for a short query.
package vocab
