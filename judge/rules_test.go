package judge

import (
	"strings"
	"testing"

	"dialogfarm/adapter"
	"dialogfarm/dialog"
	"dialogfarm/dialog/vocab"
)

// Two of the reference plugin's slash-command templates (plugin/prompt.js),
// which its bundled adapter declares.
const (
	askExplain = "Explain what this code does, step by step, and point out anything surprising."
	askTests   = "Write unit tests for this code using the usual test framework for this language. Cover normal cases, edge cases and errors."
)

// askReader reads requests by the bundled adapters' formats (the
// reference plugin's, ask, first).
func askReader(tb testing.TB) MessageReader {
	tb.Helper()
	a, err := adapter.LoadForRecords(adapter.DefaultName)
	if err != nil {
		tb.Fatal(err)
	}
	return adapter.Set{a}
}

// pluginSubject is the subject of a reference-plugin request for code in
// lang with the given instruction.
func pluginSubject(tb testing.TB, lang, code, instruction string) Subject {
	tb.Helper()
	user := "File: src/x." + lang + "\nLanguage: " + lang + "\nCursor: line 3, column 1\n" +
		"Selected code (lines 1-9):\n```" + lang + "\n" + code + "\n```\n\n" + instruction
	return NewSubject(dialog.ChatRequest{Messages: []dialog.Message{
		{Role: "system", Content: "You are Ask, a coding assistant."},
		{Role: "user", Content: user},
	}}, nil, askReader(tb))
}

const goCode = `func WordCount(s string) map[string]int {
	counts := map[string]int{}
	for _, w := range strings.Fields(s) {
		counts[strings.ToLower(w)]++
	}
	return counts
}`

type ruleCase struct {
	name   string
	s      Subject
	answer string
	fire   bool
	reason string // substring of the reason when fired
}

func runRule(t *testing.T, rule string, cases []ruleCase) {
	t.Helper()
	var r Rule
	for _, x := range DefaultRules(DefaultRuleParams()) {
		if x.Name == rule {
			r = x
		}
	}
	if r.Check == nil {
		t.Fatalf("no rule %s", rule)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			reason, fired := r.Check(c.s, c.answer)
			if fired != c.fire {
				t.Fatalf("%s fired = %v (reason %q), want %v", rule, fired, reason, c.fire)
			}
			if fired && !strings.Contains(reason, c.reason) {
				t.Errorf("reason %q does not contain %q", reason, c.reason)
			}
		})
	}
}

func TestRuleLocaleMismatch(t *testing.T) {
	zh := pluginSubject(t, "go", goCode, "这个函数做什么？请详细解释一下。")
	en := pluginSubject(t, "go", goCode, "What does this function do?")
	slashOnly := pluginSubject(t, "go", goCode, askExplain)
	zhAnswer := "这个函数统计字符串中每个单词出现的次数。它先用 `strings.Fields` 拆分，然后把每个单词转成小写再计数。"
	enAnswer := "It counts how often each word occurs in the string, case-insensitively, using strings.Fields."
	runRule(t, RuleLocaleMismatch, []ruleCase{
		{name: "zh query en answer", s: zh, answer: enAnswer, fire: true, reason: "zh"},
		{name: "zh query zh answer with identifiers", s: zh, answer: zhAnswer + "\n```go\nfunc x() {}\n```"},
		{name: "en query zh answer", s: en, answer: zhAnswer, fire: true, reason: "han"},
		{name: "en query en answer", s: en, answer: enAnswer},
		{name: "code-only answer has no prose to judge", s: zh, answer: "```go\n" + goCode + "\n```"},
		{name: "slash template alone is English", s: slashOnly, answer: zhAnswer, fire: true},
		{name: "unknown locale never fires", s: Subject{Intent: vocab.IntentQuestion}, answer: zhAnswer},
	})
	if zh.Locale != "zh" || en.Locale != "en" {
		t.Errorf("detected locales %q %q, want zh en", zh.Locale, en.Locale)
	}
}

func TestRuleMissingCodeBlock(t *testing.T) {
	fix := pluginSubject(t, "go", goCode, "/fix is not expanded here; fix the bug please")
	explain := pluginSubject(t, "go", goCode, "Explain this.")
	runRule(t, RuleMissingCodeBlock, []ruleCase{
		{name: "fix without code", s: fix, answer: "Change the loop to lower-case words first.", fire: true, reason: "fix"},
		{name: "fix with code", s: fix, answer: "Fixed:\n```go\nreturn nil\n```"},
		{name: "fix with empty block", s: fix, answer: "Fixed:\n```go\n\n```", fire: true},
		{name: "explain needs no code", s: explain, answer: "It counts words."},
	})
	if fix.Intent != vocab.IntentFix || explain.Intent != vocab.IntentExplain {
		t.Errorf("intents %q %q, want fix explain", fix.Intent, explain.Intent)
	}
}

func TestRuleUnclosedFence(t *testing.T) {
	s := pluginSubject(t, "go", goCode, "Write a test.")
	runRule(t, RuleUnclosedFence, []ruleCase{
		{name: "truncated", s: s, answer: "Here:\n```go\nfunc TestX(t *testing.T) {\n", fire: true, reason: "never closed"},
		{name: "closed", s: s, answer: "Here:\n```go\nfunc TestX(t *testing.T) {}\n```\nDone."},
		{name: "longer closing fence closes", s: s, answer: "````go\nx\n`````"},
		{name: "tilde fence not closed by backticks", s: s, answer: "~~~go\nx\n```", fire: true},
		{name: "no code", s: s, answer: "No code here."},
	})
}

func TestRuleCodeLanguage(t *testing.T) {
	goSub := pluginSubject(t, "go", goCode, "Rewrite it.")
	ts := pluginSubject(t, "typescriptreact", "const x = 1", "Rewrite it.")
	runRule(t, RuleCodeLanguage, []ruleCase{
		{name: "python block for go file", s: goSub, answer: "```python\ndef f(): pass\n```", fire: true, reason: `"python"`},
		{name: "golang alias", s: goSub, answer: "```golang\nfunc f() {}\n```"},
		{name: "untagged block", s: goSub, answer: "```\nfunc f() {}\n```"},
		{name: "shell commands are neutral", s: goSub, answer: "```go\nfunc f() {}\n```\n```bash\ngo test ./...\n```"},
		{name: "tsx for typescriptreact", s: ts, answer: "```tsx\nconst x = 2\n```"},
		{name: "javascript for typescriptreact", s: ts, answer: "```js\nconst x = 2\n```", fire: true},
		{name: "unknown file language", s: Subject{}, answer: "```python\nx\n```"},
	})
}

func TestRuleRefusal(t *testing.T) {
	s := pluginSubject(t, "go", goCode, "Explain this.")
	runRule(t, RuleRefusal, []ruleCase{
		{name: "as an AI", s: s, answer: "As an AI language model, I think this counts words.", fire: true, reason: "As an AI"},
		{name: "cannot help", s: s, answer: "I'm sorry, but I can't help with that request.", fire: true},
		{name: "chinese boilerplate", s: s, answer: "作为一个AI助手，我无法执行代码。", fire: true},
		{name: "plain answer", s: s, answer: "It counts words; it cannot fail because strings.Fields never errors."},
		{name: "phrase inside code is not prose", s: s, answer: "```go\n// as an AI would say\n```"},
	})
}

func TestRuleNearEmpty(t *testing.T) {
	s := pluginSubject(t, "go", goCode, "Explain this.")
	runRule(t, RuleNearEmpty, []ruleCase{
		{name: "empty", s: s, answer: "", fire: true, reason: "no letters"},
		{name: "punctuation", s: s, answer: "... ```\n```", fire: true, reason: "no letters"},
		{name: "short", s: s, answer: "It counts.", fire: true, reason: "fewer than 20"},
		{name: "long enough", s: s, answer: "It counts words in a string."},
	})
}

func TestRuleTooLong(t *testing.T) {
	s := pluginSubject(t, "go", goCode, "Explain this.")
	runRule(t, RuleTooLong, []ruleCase{
		{name: "over explain bound", s: s, answer: strings.Repeat("word ", 1201), fire: true, reason: "6005 characters, more than 6000"},
		{name: "at the bound", s: s, answer: strings.Repeat("word ", 1200)},
		{name: "tests allow more", s: Subject{Intent: vocab.IntentTests}, answer: strings.Repeat("word ", 1500)},
	})
}

func TestRuleVerbatimRepeat(t *testing.T) {
	explain := pluginSubject(t, "go", goCode, "Explain this.")
	fix := pluginSubject(t, "go", goCode, "Fix the bug.")
	runRule(t, RuleVerbatimRepeat, []ruleCase{
		{name: "explain echoes the code", s: explain, answer: "Your code:\n```go\n" + goCode + "\n```\nIt counts words.", fire: true, reason: "9 of the answer's 11 lines"},
		{name: "explain quotes one line", s: explain, answer: "The line `counts[strings.ToLower(w)]++` lower-cases each word before counting, so \"Go\" and \"go\" are one word."},
		{name: "fix returns code unchanged", s: fix, answer: "Fixed:\n```go\n" + goCode + "\n```", fire: true, reason: "unchanged"},
		{name: "fix changes one line", s: fix, answer: "Fixed:\n```go\n" + strings.Replace(goCode, "strings.ToLower(w)", "w", 1) + "\n```"},
	})
}

func TestRuleUnknownIdentifiers(t *testing.T) {
	goSub := pluginSubject(t, "go", goCode, "Write tests.")
	py := pluginSubject(t, "python", "def add(a, b):\n    return a + b", "Write tests.")
	rust := pluginSubject(t, "rust", "fn main() {}", "Write tests.")
	runRule(t, RuleUnknownIdentifiers, []ruleCase{
		{name: "go test uses context and builtins", s: goSub, answer: "```go\nfunc TestWordCount(t *testing.T) {\n\tgot := WordCount(\"a A\")\n\tif len(got) != 1 {\n\t\tt.Fatal(got)\n\t}\n}\n```"},
		{name: "go invented helper", s: goSub, answer: "```go\nfunc TestWordCount(t *testing.T) {\n\tassertMapEqual(t, WordCount(\"a\"), nil)\n}\n```", fire: true, reason: "assertMapEqual"},
		{name: "helper defined in answer", s: goSub, answer: "```go\nfunc assertMapEqual(t *testing.T, a, b map[string]int) {}\nfunc TestX(t *testing.T) { assertMapEqual(t, nil, nil) }\n```"},
		{name: "python builtins and imports", s: py, answer: "```python\nfrom calc import add\nimport pytest\n\ndef test_add():\n    assert add(1, 2) == 3\n    with pytest.raises(TypeError):\n        add(None, 1)\n    print(len(str(add(2, 2))))\n```"},
		{name: "python invented function", s: py, answer: "```python\ndef test_add():\n    assert add_numbers(1, 2) == 3\n```", fire: true, reason: "add_numbers"},
		{name: "qualified calls are not checked", s: py, answer: "```python\nimport math\nx = math.frobnicate(2)\n```"},
		{name: "unknown language not checked", s: rust, answer: "```rust\nfn t() { frob(1); }\n```"},
		// The reference answers of toolz's thread_first and diff (tasks
		// check on Debian's python3-toolz 0.12.0 scored them 4 for calling
		// form and given).
		{name: "python nested helper calls its parameter", s: py, answer: "```python\ndef thread_first(val, *forms):\n" +
			"    def evalform_front(val, form):\n        if callable(form):\n            return form(val)\n" +
			"        if isinstance(form, tuple):\n            func, args = form[0], form[1:]\n            args = (val,) + args\n            return func(*args)\n" +
			"    return reduce(evalform_front, forms, val)\n```"},
		{name: "python words in a string are not calls", s: py, answer: "```python\ndef diff(*seqs, **kwargs):\n    if len(seqs) < 2:\n" +
			"        raise TypeError('Too few sequences given (min 2 required)')\n    return \"\"\"no frob(\n    here\"\"\"\n```"},
		{name: "python loop, lambda and tuple names", s: py, answer: "```python\ndef apply_all(fs, pairs):\n    for f in fs:\n        f(1)\n" +
			"    g, h = fs[0], fs[1]\n    g(h(2))\n    k = lambda cb, x: cb(x)\n    return [fn(v) for fn, v in pairs]\n```"},
		{name: "go closure parameter and range names", s: goSub, answer: "```go\nfunc apply(fs []func(int) int, visit func(int)) {\n" +
			"\tfor _, f := range fs {\n\t\tvisit(f(1))\n\t}\n\teach := func(g func()) { g() }\n\teach(nil)\n}\n```"},
		{name: "javascript arrow parameter", s: pluginSubject(t, "javascript", "function add(a, b) { return a + b; }", "Write tests."),
			answer: "```javascript\nconst run = (cb) => cb(add(1, 2));\nconst twice = fn => fn(fn(1));\n```"},
		{name: "invented call beside a string still flagged", s: py, answer: "```python\ndef test_add():\n    assert add(1, 2) == 3, 'given (x)'\n    frobnicate(3)\n```", fire: true, reason: "frobnicate"},
	})
}

func TestBuildRulesOverrides(t *testing.T) {
	w := 0.5
	rules, err := BuildRules(DefaultRuleParams(), map[string]RuleConfig{
		RuleTooLong:        {Weight: &w},
		RuleCodeLanguage:   {Disabled: true},
		RuleVerbatimRepeat: {},
	})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]float64{}
	for _, r := range rules {
		names[r.Name] = r.Weight
	}
	if _, ok := names[RuleCodeLanguage]; ok {
		t.Error("disabled rule still present")
	}
	if names[RuleTooLong] != 0.5 || names[RuleVerbatimRepeat] != 2 || len(names) != 10 {
		t.Errorf("rules after overrides: %v", names)
	}
	if _, err := BuildRules(DefaultRuleParams(), map[string]RuleConfig{"too_lnog": {}}); err == nil {
		t.Error("a misspelt rule name was accepted")
	}
}

func TestNewSubject(t *testing.T) {
	cases := []struct {
		name, instruction           string
		cfg                         *dialog.ChatConfig
		intent, lang, locale, query string
	}{
		{"slash explain", askExplain, nil, vocab.IntentExplain, "go", "en", ""},
		{"slash tests with rest", askTests + "\n用 table-driven 测试，覆盖空字符串", nil, vocab.IntentTests, "go", "zh", "用 table-driven 测试，覆盖空字符串"},
		{"keyword fix", "why does this crash on empty input?", nil, vocab.IntentFix, "go", "en", "why does this crash on empty input?"},
		{"config wins for intent", "hmm", &dialog.ChatConfig{Intent: "optimize", Language: "golang", Locale: "zh"}, vocab.IntentOptimize, "golang", "zh", "hmm"},
		{"an older spelling in the config", "hmm", &dialog.ChatConfig{Intent: "optimise", Locale: "zh"}, vocab.IntentOptimize, "go", "zh", "hmm"},
		{"sure words win over the config", "这个函数为什么这么慢", &dialog.ChatConfig{Locale: "en"}, vocab.IntentOptimize, "go", "zh", "这个函数为什么这么慢"},
		// One word is too few to be sure of a locale, but with no config
		// to say otherwise it is read as the analyst reads it.
		{"nothing matches", "thoughts?", nil, vocab.IntentQuestion, "go", "en", "thoughts?"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := pluginSubject(t, "go", goCode, c.instruction)
			if c.cfg != nil {
				s = NewSubject(dialog.ChatRequest{Messages: s.Messages}, c.cfg, askReader(t))
			}
			if s.Intent != c.intent || s.Language != c.lang || s.Locale != c.locale || s.Query != c.query {
				t.Errorf("got intent %q lang %q locale %q query %q; want %q %q %q %q",
					s.Intent, s.Language, s.Locale, s.Query, c.intent, c.lang, c.locale, c.query)
			}
		})
	}
}
