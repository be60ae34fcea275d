package vocab

import (
	"slices"
	"testing"
)

func TestCanonical(t *testing.T) {
	cases := []struct{ dim, in, want string }{
		{DimIntent, "optimize", IntentOptimize},
		{DimIntent, "optimise", IntentOptimize}, // the judge's old spelling
		{DimIntent, "general", IntentQuestion},  // the judge's old spelling
		{DimIntent, "Write-Tests", IntentTests},
		{DimIntent, "/doc", IntentDocs},
		{DimIntent, "bugfix", IntentFix},
		{DimIntent, "poetry", ""},
		{DimTrigger, "command palette", "palette"},
		{DimTrigger, "right-click", "context_menu"},
		{DimInstruction, "slash", "slash_command"},
		{DimLanguage, "golang", "go"},
		{DimLanguage, "TypeScriptReact", "typescript"},
		{DimLanguage, "rust", ""}, // a language, but not one of the dimension's
		{DimLocale, "zh-CN", "zh"},
		{DimLocale, "en_US", "en"},
		{DimLocale, "jp", "ja"},
		{DimTurns, "3", "3"},
		{DimTurns, "11", ""},
		{DimDifficulty, "Hard", "hard"},
		{"colour", "red", ""},
	}
	for _, c := range cases {
		if got := Canonical(c.dim, c.in); got != c.want {
			t.Errorf("Canonical(%s, %q) = %q, want %q", c.dim, c.in, got, c.want)
		}
	}
	// Every value is its own canonical spelling, and every alias names a
	// value of its dimension.
	for _, dim := range Dimensions() {
		for _, v := range Values(dim) {
			if got := Canonical(dim, v); got != v {
				t.Errorf("Canonical(%s, %q) = %q", dim, v, got)
			}
		}
		for alias, v := range aliases[dim] {
			if !Known(dim, v) {
				t.Errorf("alias %s %q names %q, not a value", dim, alias, v)
			}
		}
	}
	if LanguageName("cc") != "cpp" || LanguageName("Go") != "go" {
		t.Errorf("LanguageName: cc %q, Go %q", LanguageName("cc"), LanguageName("Go"))
	}
}

// Queries is the table of mixed-language queries the classifier and the
// locale detection are held to; the stages' own agreement test (in
// agreement_test.go) runs the analyst and the judge over it too.
var Queries = []struct {
	Query, Intent, Locale string
	Sure                  bool // three words of prose or more
}{
	{"write tests for this bug", IntentTests, "en", true},
	{"fix the test", IntentFix, "en", true},
	{"why does this crash on empty input?", IntentFix, "en", true},
	{"What does this function do?", IntentExplain, "en", true},
	{"Can you make this loop faster?", IntentOptimize, "en", true},
	{"Add doc comments to this function", IntentDocs, "en", true},
	{"Refactor this to be easier to read", IntentRefactor, "en", true},
	{"Write a function that parses a CSV line", IntentGenerate, "en", true},
	{"Is this idiomatic Go?", IntentQuestion, "en", true},
	{"/tests", IntentTests, "en", false},
	{"/doc please", IntentDocs, "en", false},
	{"为这个函数写单元测试", IntentTests, "zh", true},
	{"修复这个测试", IntentFix, "zh", true},
	{"这个函数是做什么的", IntentExplain, "zh", true},
	{"给这段代码加注释", IntentDocs, "zh", true},
	{"这个循环太慢了，怎么优化？", IntentOptimize, "zh", true},
	{"重构这个函数", IntentRefactor, "zh", true},
	{"写一个解析 CSV 的函数", IntentGenerate, "zh", true},
	{"这个 function 为什么返回 null", IntentExplain, "zh", true},
	{"用 table-driven 测试，覆盖空字符串", IntentTests, "zh", true},
	{"解释一下", IntentExplain, "zh", false},
	{"这是什么 `const x = new Map()`", IntentExplain, "zh", false},
	{"解释一下这段代码在做什么\n```go\nfunc main() { fmt.Println(\"hello world, this is the thing\") }\n```", IntentExplain, "zh", true},
	{"这段代码有什么问题\nfor (let i = 0; i < n; i++) {\n  total += a[i];\n}", IntentFix, "zh", true},
	{"¿Por qué esta función devuelve el valor incorrecto?", IntentFix, "es", true},
	{"Escribe pruebas unitarias para esta función", IntentTests, "es", true},
	{"Explica qué hace este código", IntentExplain, "es", true},
	{"Warum ist die Schleife hier falsch?", IntentFix, "de", true},
	{"Schreibe Unit-Tests für diese Funktion", IntentTests, "de", true},
	{"Erkläre, was diese Funktion macht", IntentExplain, "de", true},
	{"Pourquoi cette fonction est-elle si lente ?", IntentOptimize, "fr", true},
	{"Écris des tests unitaires pour cette fonction", IntentTests, "fr", true},
	{"Corrige l'erreur dans ce code", IntentFix, "fr", true},
	{"この関数のテストを書いて", IntentTests, "ja", true},
	{"この関数は何をしますか", IntentExplain, "ja", true},
	{"このバグを直して", IntentFix, "ja", true},
	{"이 함수는 무엇을 합니까", IntentExplain, "ko", true},
	{"이 함수에 대한 단위 테스트를 작성해 주세요", IntentTests, "ko", true},
	{"Почему этот код падает?", IntentFix, "ru", true},
	{"Напиши тесты для этой функции", IntentTests, "ru", true},
	{"Объясни, что делает эта функция", IntentExplain, "ru", true},
	{"???", IntentQuestion, "", false},
}

func TestIntentAndLocale(t *testing.T) {
	for _, q := range Queries {
		t.Run(q.Query, func(t *testing.T) {
			if got := IntentOf(q.Query); got != q.Intent {
				t.Errorf("IntentOf = %q, want %q", got, q.Intent)
			}
			if loc, sure := DetectLocale(q.Query); loc != q.Locale || sure != q.Sure {
				t.Errorf("DetectLocale = %q sure %v, want %q sure %v", loc, sure, q.Locale, q.Sure)
			}
		})
	}
}

func TestScript(t *testing.T) {
	cases := []struct{ text, want string }{
		{"It reverses the string rune by rune.", ScriptLatin},
		{"它按符文反转字符串，所以多字节字符也安全。", ScriptHan},
		{"この関数は文字列を反転します。", ScriptJapanese},
		{"```go\n// 反转字符串\nfunc Reverse(s string) string { return s }\n```\nIt reverses the string.", ScriptLatin},
		{"ok", ""},
	}
	for _, c := range cases {
		if got := Script(c.text); got != c.want {
			t.Errorf("Script(%q) = %q, want %q", c.text, got, c.want)
		}
	}
	if ScriptOf("zh-TW") != ScriptHan || ScriptOf("uk") != ScriptCyrillic || ScriptOf("pt-BR") != ScriptLatin {
		t.Errorf("ScriptOf: zh-TW %s, uk %s, pt-BR %s", ScriptOf("zh-TW"), ScriptOf("uk"), ScriptOf("pt-BR"))
	}
}

// TestLocalesIn: a request holds the plugin's English framing and the
// query's language; a paragraph too short to be sure of adds nothing.
func TestLocalesIn(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
	}{
		{"File: calc.py\nLanguage: python\n\n这个函数在空列表上返回什么？请解释原因。", []string{"en", "zh"}},
		{"Explain what this function does with an empty list.\n\n这个函数在空列表上返回什么？请解释原因。", []string{"en", "zh"}},
		{"File: calc.py\n\n这个函数在空列表上返回什么？请解释原因。", []string{"zh"}},
		{"Explain.", nil},
		{"```go\n// 中文注释在代码里\nfunc f() {}\n```\nWhat does this function return?", []string{"en"}},
	} {
		if got := LocalesIn(c.text); !slices.Equal(got, c.want) {
			t.Errorf("LocalesIn(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}
