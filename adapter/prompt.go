package adapter

import (
	"fmt"
	"regexp"
	"strings"

	"dialogfarm/dialog"
	"dialogfarm/dialog/vocab"
)

// Prompt says how the plugin writes the user message of a chat turn, so
// that the judge can tell the developer's own words (whose intent and
// locale it judges by) from what the plugin adds: the editor context and
// command templates. An adapter without it has its messages read as the
// developer's words, whole.
type Prompt struct {
	// Instruction is a regular expression on the message whose group
	// named "instruction" holds what the developer asked for: a command
	// template, their own words, or both. The rest of a message it matches
	// is editor context; a message it does not match is all instruction.
	Instruction string `yaml:"instruction"`
	// Language is a regular expression whose group named "language" is the
	// language id the message names ("go"); empty: messages name none.
	Language string `yaml:"language"`
	// Templates are the texts the plugin's commands send in place of (or
	// before) the developer's words.
	Templates []Template `yaml:"templates"`
}

// Template is one command template: an instruction that starts with Text
// was sent by that command; what follows Text is the developer's own words.
type Template struct {
	// Intent is the behaviour profile's intent the command stands for
	// (explain, generate, fix, tests, docs, optimize, refactor, question).
	Intent string `yaml:"intent"`
	Text   string `yaml:"text"`
}

// Group names the prompt's regular expressions must have.
const (
	groupInstruction = "instruction"
	groupLanguage    = "language"
)

func (v *validator) prompt(p Prompt) {
	v.pattern("prompt.instruction", p.Instruction, groupInstruction)
	v.pattern("prompt.language", p.Language, groupLanguage)
	seen := map[string]int{}
	for i, t := range p.Templates {
		field := fmt.Sprintf("prompt.templates[%d]", i)
		if !vocab.Known(vocab.DimIntent, t.Intent) {
			v.bad(field+".intent", "must be one of %s, got %q", strings.Join(vocab.Values(vocab.DimIntent), ", "), t.Intent)
		}
		text := strings.TrimSpace(t.Text)
		if text == "" {
			v.bad(field+".text", "is required: the text the command sends")
			continue
		}
		if j, dup := seen[text]; dup {
			v.bad(field+".text", "is the text of prompt.templates[%d] too", j)
		}
		seen[text] = i
	}
}

// pattern checks an optional regular expression that must have the named
// group.
func (v *validator) pattern(field, expr, group string) {
	if expr == "" {
		return
	}
	re, err := regexp.Compile(expr)
	switch {
	case err != nil:
		v.bad(field, "not a regular expression: %v", err)
	case re.SubexpIndex(group) < 0:
		v.bad(field, "needs a group named %s, e.g. (?P<%s>.*)", group, group)
	}
}

// MessageFormat reads user messages the adapter's way (its prompt:
// section). The zero MessageFormat reads every message as the developer's
// words, whole.
type MessageFormat struct {
	instruction, language *regexp.Regexp
	templates             []Template
}

// MessageFormat is the adapter's prompt: section, compiled once by Parse.
func (a *Adapter) MessageFormat() MessageFormat {
	if a.format != nil {
		return *a.format
	}
	return a.compileFormat()
}

// compileFormat compiles the prompt: section (Parse checked it).
func (a *Adapter) compileFormat() MessageFormat {
	f := MessageFormat{instruction: compileChecked(a.Prompt.Instruction), language: compileChecked(a.Prompt.Language)}
	for _, t := range a.Prompt.Templates {
		f.templates = append(f.templates, Template{Intent: t.Intent, Text: strings.TrimSpace(t.Text)})
	}
	return f
}

// Read splits a user message into the instruction, the developer's own
// words, the intent of the template it starts with (the longest that
// matches) and the language it names. White space around each part is
// trimmed.
func (f MessageFormat) Read(text string) dialog.UserMessage {
	m := dialog.UserMessage{Instruction: strings.TrimSpace(text)}
	if in, ok := group(f.instruction, groupInstruction, text); ok {
		m.Instruction = in
	}
	m.Language, _ = group(f.language, groupLanguage, text)
	m.Query = m.Instruction
	best := 0
	for _, t := range f.templates {
		if rest, ok := strings.CutPrefix(m.Instruction, t.Text); ok && len(t.Text) > best {
			best, m.Intent, m.Query = len(t.Text), t.Intent, strings.TrimSpace(rest)
		}
	}
	return m
}

// group is the trimmed text of re's named group in s, if re matches.
func group(re *regexp.Regexp, name, s string) (string, bool) {
	if re == nil {
		return "", false
	}
	sub := re.FindStringSubmatch(s)
	if sub == nil {
		return "", false
	}
	return strings.TrimSpace(sub[re.SubexpIndex(name)]), true
}

// Set is the adapters of a run, the first one the default: it picks a
// config's adapter by its plugin field, and reads its requests' user
// messages by that adapter's format.
type Set []*Adapter

// Find returns the adapter a config's plugin field names (by name or the
// file it was loaded from); "" names the first. Nil when none matches.
func (s Set) Find(plugin string) *Adapter {
	if plugin == "" {
		if len(s) == 0 {
			return nil
		}
		return s[0]
	}
	for _, a := range s {
		if a.Name == plugin || a.Source == plugin {
			return a
		}
	}
	return nil
}

// ReadUser reads a user message sent by the plugin a config names (see
// Find); an unknown plugin's message is read as the developer's words,
// whole.
func (s Set) ReadUser(plugin, text string) dialog.UserMessage {
	if a := s.Find(plugin); a != nil {
		return a.MessageFormat().Read(text)
	}
	return MessageFormat{}.Read(text)
}
