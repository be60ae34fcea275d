package judge

import (
	"strings"

	"dialogfarm/dialog"
	"dialogfarm/dialog/vocab"
)

// codeIntents are the intents whose answer must contain code.
var codeIntents = map[string]bool{
	vocab.IntentGenerate: true, vocab.IntentFix: true, vocab.IntentTests: true, vocab.IntentDocs: true,
	vocab.IntentOptimize: true, vocab.IntentRefactor: true,
}

// rewriteIntents are the intents whose answer reproduces the given code
// with changes.
var rewriteIntents = map[string]bool{vocab.IntentFix: true, vocab.IntentDocs: true, vocab.IntentOptimize: true, vocab.IntentRefactor: true}

// Subject is what a verdict is about: the exact request the plugin sent and
// what is known about it.
type Subject struct {
	// Messages are the captured request's messages as the plugin sent them.
	Messages []dialog.Message
	// Intent is one of vocab's intents.
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
// (intent, language) wins; what it leaves empty is read from the last user
// message by r, the format of the config's plugin: the language the
// message names, the intent of its command template or else that of the
// developer's own words (vocab.IntentOf, as the analyst reads a logged
// query). The locale is that of the developer's words (vocab.DetectLocale)
// when they are long enough to be sure; else the config's; else the guess.
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
		s.Intent, s.Language, s.Locale = vocab.Intent(cfg.Intent), cfg.Language, cfg.Locale
		s.ConfigID = cfg.ID
	}
	if s.Language == "" {
		s.Language = msg.Language
	}
	if s.Intent == "" {
		s.Intent = vocab.Intent(msg.Intent)
	}
	if s.Intent == "" {
		s.Intent = vocab.IntentOf(msg.Query)
	}
	// The locale is that of the developer's own words as sent, which is
	// what the model saw; with no words of their own (a command template
	// alone) that of the template sent; the configured locale wins over a
	// guess from too few words, and the guess fills in when the config
	// says nothing.
	words := msg.Query
	if words == "" {
		words = msg.Instruction
	}
	loc, sure := vocab.DetectLocale(words)
	if sure || (s.Locale == "" && loc != "") {
		s.Locale = loc
	}
	return s
}
