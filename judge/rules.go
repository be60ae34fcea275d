package judge

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"dialogfarm/dialog"
	"dialogfarm/dialog/vocab"
)

// Rule names, as recorded in dialog.Deduction.Rule.
const (
	RuleLocaleMismatch     = "locale_mismatch"
	RuleMissingCodeBlock   = "missing_code_block"
	RuleUnclosedFence      = "unclosed_code_fence"
	RuleCodeLanguage       = "code_language_mismatch"
	RuleRefusal            = "refusal_boilerplate"
	RuleNearEmpty          = "near_empty"
	RuleTooLong            = "too_long"
	RuleVerbatimRepeat     = "verbatim_repeat"
	RuleUnknownIdentifiers = "unknown_identifiers"
)

// Rule is one named deduction: when Check fires against an answer, Weight
// is subtracted from the score and the reason is recorded in the verdict.
type Rule struct {
	Name   string
	Weight float64
	// Check reports whether the rule fires against answer given subject,
	// with a one-line reason.
	Check func(s Subject, answer string) (reason string, fired bool)
}

// RuleConfig overrides one rule's weight or turns it off.
type RuleConfig struct {
	Weight   *float64 `yaml:"weight,omitempty" json:"weight,omitempty"`
	Disabled bool     `yaml:"disabled,omitempty" json:"disabled,omitempty"`
}

// RuleParams tunes the rules that have a threshold.
type RuleParams struct {
	// MinChars: an answer with fewer characters (runes) is near-empty.
	MinChars int `yaml:"min_chars" json:"min_chars"`
	// MaxChars bounds an answer's length per intent; intents missing here
	// use DefaultMaxChars.
	MaxChars map[string]int `yaml:"max_chars" json:"max_chars"`
	// VerbatimLines: a run of at least this many consecutive lines copied
	// from the prompt counts as repeating it.
	VerbatimLines int `yaml:"verbatim_lines" json:"verbatim_lines"`
	// VerbatimShare: ... and that run makes up at least this share of the
	// answer's non-empty lines.
	VerbatimShare float64 `yaml:"verbatim_share" json:"verbatim_share"`
}

// DefaultMaxChars is the default length bound per intent, in characters.
func DefaultMaxChars() map[string]int {
	return map[string]int{
		vocab.IntentExplain: 6000, vocab.IntentGenerate: 8000, vocab.IntentFix: 8000, vocab.IntentTests: 10000,
		vocab.IntentDocs: 8000, vocab.IntentOptimize: 8000, vocab.IntentRefactor: 8000, vocab.IntentQuestion: 5000,
	}
}

// DefaultRuleParams are the thresholds the rules use unless configured.
// MaxChars is left empty, the DefaultMaxChars standing in for every intent
// it does not name: a configuration that names an intent the older way
// ("general") then overrides its default instead of colliding with it.
func DefaultRuleParams() RuleParams {
	return RuleParams{MinChars: 20, VerbatimLines: 6, VerbatimShare: 0.6}
}

// DefaultRules is the registry of rules with their default weights.
func DefaultRules(p RuleParams) []Rule {
	return []Rule{
		{RuleNearEmpty, 4, p.nearEmpty},
		{RuleRefusal, 3, refusal},
		{RuleLocaleMismatch, 2, localeMismatch},
		{RuleMissingCodeBlock, 2, missingCodeBlock},
		{RuleUnclosedFence, 2, unclosedFence},
		{RuleVerbatimRepeat, 2, p.verbatimRepeat},
		{RuleCodeLanguage, 1, codeLanguage},
		{RuleTooLong, 1, p.tooLong},
		{RuleUnknownIdentifiers, 1, unknownIdentifiers},
		{RuleDoesNotBuild, 4, executedOnly}, // fired by an Executor (exec.go)
		{RuleTestsFail, 3, executedOnly},
	}
}

// BuildRules applies per-rule overrides to DefaultRules(p). An override
// naming no rule is an error, so a typo does not silently keep a rule on.
func BuildRules(p RuleParams, overrides map[string]RuleConfig) ([]Rule, error) {
	maxChars, err := byIntent(p.MaxChars, "judge max_chars")
	if err != nil {
		return nil, err
	}
	p.MaxChars = maxChars
	rules := DefaultRules(p)
	names := make([]string, 0, len(overrides))
	for name := range overrides {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		i := slices.IndexFunc(rules, func(r Rule) bool { return r.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("judge rule %q: no such rule", name)
		}
		if w := overrides[name].Weight; w != nil {
			rules[i].Weight = *w
		}
	}
	return slices.DeleteFunc(rules, func(r Rule) bool { return overrides[r.Name].Disabled }), nil
}

// Deductions runs rules against answer and returns those that fired.
func Deductions(rules []Rule, s Subject, answer string) []dialog.Deduction {
	var out []dialog.Deduction
	for _, r := range rules {
		if reason, fired := r.Check(s, answer); fired {
			out = append(out, dialog.Deduction{Rule: r.Name, Weight: r.Weight, Reason: reason})
		}
	}
	return out
}

func (p RuleParams) nearEmpty(_ Subject, answer string) (string, bool) {
	trimmed := strings.TrimSpace(answer)
	if !strings.ContainsFunc(trimmed, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
		return "the answer has no letters or digits", true
	}
	if n := utf8.RuneCountInString(trimmed); n < p.MinChars {
		return fmt.Sprintf("the answer has %d characters, fewer than %d", n, p.MinChars), true
	}
	return "", false
}

func (p RuleParams) tooLong(s Subject, answer string) (string, bool) {
	limit, ok := p.MaxChars[s.Intent]
	if !ok {
		limit = DefaultMaxChars()[s.Intent]
	}
	if n := utf8.RuneCountInString(answer); limit > 0 && n > limit {
		return fmt.Sprintf("the answer has %d characters, more than %d for intent %s", n, limit, s.Intent), true
	}
	return "", false
}

var refusalPatterns = regexp.MustCompile(`(?i)\bas an ai\b|\bas a (large )?language model\b|\bi(?:'m| am) (?:just |only )?an ai\b|` +
	`\bi(?:'m| am) (?:sorry|afraid),? but i (?:can(?:no|')t|cannot|am unable|'m unable)\b|` +
	`\bi (?:can(?:no|')t|cannot|am unable to|'m unable to|won't be able to) (?:help|assist|provide|comply|fulfil)|` +
	`作为(?:一个)?(?:AI|人工智能|语言模型|AI助手)|我(?:无法|不能)(?:帮助|提供|协助|完成|回答)|抱歉，?我(?:无法|不能)`)

func refusal(_ Subject, answer string) (string, bool) {
	prose := parseMarkdown(answer).Prose
	if m := refusalPatterns.FindString(prose); m != "" {
		return fmt.Sprintf("refusal or AI boilerplate: %q", m), true
	}
	return "", false
}

func localeMismatch(s Subject, answer string) (string, bool) {
	if s.Locale == "" {
		return "", false
	}
	got := vocab.Script(answer)
	if want := vocab.ScriptOf(s.Locale); got != "" && got != want {
		return fmt.Sprintf("the query is in %s (%s script) but the answer is in %s script", s.Locale, want, got), true
	}
	return "", false
}

func missingCodeBlock(s Subject, answer string) (string, bool) {
	if !codeIntents[s.Intent] {
		return "", false
	}
	for _, b := range parseMarkdown(answer).Blocks {
		if strings.TrimSpace(b.Code) != "" {
			return "", false
		}
	}
	return fmt.Sprintf("intent %s needs code but the answer has no code block", s.Intent), true
}

func unclosedFence(_ Subject, answer string) (string, bool) {
	for _, b := range parseMarkdown(answer).Blocks {
		if !b.Closed {
			return "a code fence is never closed (truncated answer?)", true
		}
	}
	return "", false
}

func codeLanguage(s Subject, answer string) (string, bool) {
	file := normLang(s.Language)
	if file == "" {
		return "", false
	}
	for _, b := range parseMarkdown(answer).Blocks {
		tag := normLang(b.Lang)
		if neutralLangs[tag] || tag == file || compatibleLangs[[2]string{file, tag}] {
			continue
		}
		return fmt.Sprintf("a code block is tagged %q but the file is %s", b.Lang, s.Language), true
	}
	return "", false
}

func (p RuleParams) verbatimRepeat(s Subject, answer string) (string, bool) {
	var prompt []string
	for _, m := range s.Messages {
		if m.Role != "assistant" {
			prompt = append(prompt, nonEmptyLines(m.Content)...)
		}
	}
	if rewriteIntents[s.Intent] {
		// These intents must reproduce the code with changes; returning a
		// block identical to the given code means nothing was done.
		given := parseMarkdown(s.Prompt()).Blocks
		for _, b := range parseMarkdown(answer).Blocks {
			lines := nonEmptyLines(b.Code)
			for _, g := range given {
				if len(lines) >= 3 && slices.Equal(lines, nonEmptyLines(g.Code)) {
					return fmt.Sprintf("intent %s but the answer's code is the given code unchanged (%d lines)", s.Intent, len(lines)), true
				}
			}
		}
		return "", false
	}
	ans := nonEmptyLines(answer)
	run := longestCommonRun(ans, prompt)
	if run >= p.VerbatimLines && float64(run) >= p.VerbatimShare*float64(len(ans)) {
		return fmt.Sprintf("%d of the answer's %d lines repeat the prompt verbatim", run, len(ans)), true
	}
	return "", false
}

// nonEmptyLines are text's lines, trimmed, without the empty ones.
func nonEmptyLines(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// longestCommonRun is the length of the longest run of consecutive lines of
// a that appears consecutively in b.
func longestCommonRun(a, b []string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	best := 0
	for i := range a {
		for j := range b {
			if a[i] == b[j] {
				cur[j+1] = prev[j] + 1
				best = max(best, cur[j+1])
			} else {
				cur[j+1] = 0
			}
		}
		prev, cur = cur, prev
	}
	return best
}
