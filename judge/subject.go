package judge

import (
	"regexp"
	"strings"

	"dialogfarm/dialog"
)

// Intents the judge has a rubric for.
const (
	IntentExplain  = "explain"
	IntentGenerate = "generate"
	IntentFix      = "fix"
	IntentTests    = "tests"
	IntentDocs     = "docs"
	IntentOptimise = "optimise"
	IntentRefactor = "refactor"
	IntentGeneral  = "general"
)

// Intents lists every intent, in rubric order.
var Intents = []string{IntentExplain, IntentGenerate, IntentFix, IntentTests, IntentDocs, IntentOptimise, IntentRefactor, IntentGeneral}

// intentAliases maps the spellings configs and slash commands use.
var intentAliases = map[string]string{
	"explain": IntentExplain, "explanation": IntentExplain,
	"generate": IntentGenerate, "generation": IntentGenerate, "write": IntentGenerate, "implement": IntentGenerate,
	"fix": IntentFix, "repair": IntentFix, "fix_repair": IntentFix, "debug": IntentFix, "bugfix": IntentFix,
	"tests": IntentTests, "test": IntentTests, "write_tests": IntentTests, "unit_tests": IntentTests, "testing": IntentTests,
	"docs": IntentDocs, "doc": IntentDocs, "comments": IntentDocs, "comment": IntentDocs, "add_docs": IntentDocs,
	"add_comments": IntentDocs, "documentation": IntentDocs, "document": IntentDocs,
	"optimise": IntentOptimise, "optimize": IntentOptimise, "optimisation": IntentOptimise,
	"optimization": IntentOptimise, "performance": IntentOptimise, "refactor": IntentRefactor,
	"refactoring": IntentRefactor, "general": IntentGeneral, "question": IntentGeneral, "general_question": IntentGeneral, "chat": IntentGeneral,
}

// NormalizeIntent maps an intent spelling ("optimize", "write_tests",
// "/doc") to one of Intents, or "" if it is none of them.
func NormalizeIntent(s string) string {
	s = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), "/")))
	s = strings.NewReplacer("-", "_", " ", "_").Replace(s)
	return intentAliases[s]
}

// codeIntents are the intents whose answer must contain code.
var codeIntents = map[string]bool{
	IntentGenerate: true, IntentFix: true, IntentTests: true, IntentDocs: true,
	IntentOptimise: true, IntentRefactor: true,
}

// rewriteIntents are the intents whose answer reproduces the given code
// with changes.
var rewriteIntents = map[string]bool{IntentFix: true, IntentDocs: true, IntentOptimise: true, IntentRefactor: true}

// Subject is what a verdict is about: the exact request the plugin sent and
// what is known about it.
type Subject struct {
	// Messages are the captured request's messages as the plugin sent them.
	Messages []dialog.Message
	// Intent is one of Intents.
	Intent string
	// Language is the file's language id ("go", "python"), "" if unknown.
	Language string
	// Locale is the query's locale ("en", "zh"), "" if unknown.
	Locale string
	// ConfigID is the chat config the dialogue was driven from, if known.
	ConfigID string
	// Query is the developer's own words: the instruction of the last user
	// message without the editor context and slash-command template.
	Query string
}

// Prompt is the content of the last user message.
func (s Subject) Prompt() string {
	return dialog.ChatRequest{Messages: s.Messages}.LastUser()
}

// NewSubject describes a captured request. What the chat config states
// (intent, language, locale) wins; what it leaves empty is read from the
// request: the language from the user message's "Language:" line, the intent
// from the slash-command template or keywords of the instruction, the
// locale from the script of the developer's own words.
func NewSubject(req dialog.ChatRequest, cfg *dialog.ChatConfig) Subject {
	user := req.LastUser()
	instruction := instructionOf(user)
	query, templateIntent := stripTemplate(instruction)
	s := Subject{Messages: req.Messages, Query: query}
	if cfg != nil {
		s.Intent, s.Language, s.Locale = NormalizeIntent(cfg.Intent), cfg.Language, cfg.Locale
		s.ConfigID = cfg.ID
	}
	if s.Language == "" {
		if m := languageLine.FindStringSubmatch(user); m != nil {
			s.Language = strings.TrimSpace(m[1])
		}
	}
	if s.Intent == "" {
		s.Intent = templateIntent
	}
	if s.Intent == "" {
		s.Intent = intentFromWords(query)
	}
	// The locale is that of the developer's own words as sent, which is
	// what the model saw; with no words of their own (a slash command
	// alone) that of the template sent; the configured locale only fills
	// in when neither has enough words to tell.
	if detected := DetectLocale(query); detected != "" {
		s.Locale = detected
	} else if detected := DetectLocale(instruction); detected != "" && query == "" {
		s.Locale = detected
	}
	return s
}

var languageLine = regexp.MustCompile(`(?m)^Language: *(\S+) *$`)

// instructionOf is the instruction part of a reference-plugin user message:
// what follows the editor context ("File:", "Language:", "Cursor:" and one
// fenced code block). Other messages are all instruction.
func instructionOf(user string) string {
	if !strings.HasPrefix(user, "File: ") {
		return strings.TrimSpace(user)
	}
	lines := strings.Split(user, "\n")
	fences := 0
	for i, line := range lines {
		if _, _, _, ok := fence(line); ok {
			fences++
			if fences == 2 {
				return strings.TrimSpace(strings.Join(lines[i+1:], "\n"))
			}
		}
	}
	return strings.TrimSpace(user)
}

// pluginTemplates are the reference plugin's slash-command templates
// (plugin/prompt.js SLASH_COMMANDS): "/cmd rest" is sent as the template,
// then rest on a new line.
var pluginTemplates = []struct{ intent, text string }{
	{IntentExplain, "Explain what this code does, step by step, and point out anything surprising."},
	{IntentFix, "Find the bugs in this code and fix them. Show the corrected code and explain each change."},
	{IntentTests, "Write unit tests for this code using the usual test framework for this language. Cover normal cases, edge cases and errors."},
	{IntentDocs, "Add documentation comments to this code, following this language's conventions. Show the documented code."},
	{IntentOptimise, "Optimize this code for performance and readability without changing its behaviour. Show the improved code and explain the changes."},
}

// stripTemplate removes a leading slash-command template from instruction,
// returning the developer's own words and the template's intent.
func stripTemplate(instruction string) (query, intent string) {
	for _, t := range pluginTemplates {
		if rest, ok := strings.CutPrefix(instruction, t.text); ok {
			return strings.TrimSpace(rest), t.intent
		}
	}
	return instruction, ""
}

// intentKeywords are checked in order; the first intent with a keyword in
// the query wins.
var intentKeywords = []struct {
	intent string
	re     *regexp.Regexp
}{
	{IntentTests, regexp.MustCompile(`(?i)\b(unit ?tests?|tests? for|write tests?|test cases?|testing)\b|测试|单元测试`)},
	{IntentFix, regexp.MustCompile(`(?i)\b(fix|bug|broken|error|crash|fails?|wrong|exception|panic)\b|修复|错误|报错|崩溃|问题`)},
	{IntentDocs, regexp.MustCompile(`(?i)\b(docs?|docstrings?|comments?|document|javadoc|jsdoc)\b|注释|文档`)},
	{IntentOptimise, regexp.MustCompile(`(?i)\b(optimi[sz]e|faster|performance|speed up|efficient)\b|优化|性能`)},
	{IntentRefactor, regexp.MustCompile(`(?i)\b(refactor|clean ?up|simplify|restructure|rename)\b|重构|简化`)},
	{IntentExplain, regexp.MustCompile(`(?i)\b(explain|what does|how does|why does|what is|meaning)\b|解释|什么意思|做什么|怎么工作|为什么`)},
	{IntentGenerate, regexp.MustCompile(`(?i)\b(write|implement|generate|create|add a|add an|build)\b|实现|生成|编写|写一个|添加`)},
}

// intentFromWords infers an intent from a query's keywords; general when
// none matches.
func intentFromWords(query string) string {
	for _, k := range intentKeywords {
		if k.re.MatchString(query) {
			return k.intent
		}
	}
	return IntentGeneral
}
