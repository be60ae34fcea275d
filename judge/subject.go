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

// MessageReader reads a plugin's chat-turn user message: the instruction
// apart from the editor context, the developer's own words apart from a
// command template, that template's intent and the language the message
// names. plugin is the chat config's plugin field ("" for the run's
// default plugin). adapter.Set implements it with the prompt: sections of
// the run's adapter files.
type MessageReader interface {
	ReadUser(plugin, text string) dialog.UserMessage
}

// NewSubject describes a captured request. What the chat config states
// (intent, language, locale) wins; what it leaves empty is read from the
// last user message by r, the format of the config's plugin: the language
// the message names, the intent of its command template or else keywords
// of the developer's own words, the locale from the script of those words.
// With no reader (nil) the whole message is taken as the developer's words.
func NewSubject(req dialog.ChatRequest, cfg *dialog.ChatConfig, r MessageReader) Subject {
	user := req.LastUser()
	msg := dialog.UserMessage{Instruction: strings.TrimSpace(user), Query: strings.TrimSpace(user)}
	if r != nil {
		plugin := ""
		if cfg != nil {
			plugin = cfg.Plugin
		}
		msg = r.ReadUser(plugin, user)
	}
	s := Subject{Messages: req.Messages, Query: msg.Query}
	if cfg != nil {
		s.Intent, s.Language, s.Locale = NormalizeIntent(cfg.Intent), cfg.Language, cfg.Locale
		s.ConfigID = cfg.ID
	}
	if s.Language == "" {
		s.Language = msg.Language
	}
	if s.Intent == "" {
		s.Intent = NormalizeIntent(msg.Intent)
	}
	if s.Intent == "" {
		s.Intent = intentFromWords(msg.Query)
	}
	// The locale is that of the developer's own words as sent, which is
	// what the model saw; with no words of their own (a command template
	// alone) that of the template sent; the configured locale only fills
	// in when neither has enough words to tell.
	if detected := DetectLocale(msg.Query); detected != "" {
		s.Locale = detected
	} else if detected := DetectLocale(msg.Instruction); detected != "" && msg.Query == "" {
		s.Locale = detected
	}
	return s
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
