package analyst

import (
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"dialogfarm/dialog"
	"dialogfarm/dialog/vocab"
	"dialogfarm/profiles"
)

// Session is one logged dialogue: its first query and how many it had.
type Session struct {
	ID    string
	First Record
	Turns int
}

// GroupSessions groups records by session, in order of first appearance;
// a session's first record is the one with the lowest turn number (log
// order breaks ties and stands in when turns are not logged).
func GroupSessions(recs []Record) []Session {
	idx := map[string]int{}
	var out []Session
	for _, r := range recs {
		i, ok := idx[r.SessionID]
		if !ok {
			idx[r.SessionID] = len(out)
			out = append(out, Session{ID: r.SessionID, First: r, Turns: 1})
			continue
		}
		out[i].Turns++
		if r.Turn > 0 && (out[i].First.Turn == 0 || r.Turn < out[i].First.Turn) {
			out[i].First = r
		}
	}
	return out
}

// Observed holds the dimensions read off a session by rules. Language is
// "" when the session's language is unknown or not one dialogfarm
// supports (RawLanguage then says what it was). CommandIntent is the intent
// a plugin or slash command fixes, "" for free text. Defaulted lists the
// dimensions that fell back to a default for lack of logged data.
type Observed struct {
	Language, RawLanguage                    string
	Cursor, Reference, Trigger, Instruction  string
	Locale, Turns, QueryStyle, CommandIntent string
	Defaulted                                []string
}

// Observe derives the rule-based dimensions of a session.
func Observe(s Session) Observed {
	r := s.First
	var o Observed
	o.Language, o.RawLanguage = languageOf(r)
	o.CommandIntent, o.Instruction, o.Trigger = instructionOf(r, &o.Defaulted)
	o.Cursor = cursorOf(r, &o.Defaulted)
	o.Reference = referenceOf(r.Query, o.Cursor)
	o.Locale = queryLocale(r.Query)
	o.Turns = strconv.Itoa(min(s.Turns, vocab.MaxTurns))
	o.QueryStyle = QueryStyle(r.Query)
	if o.Instruction == dialog.InstructionCommand {
		o.QueryStyle = vocab.StyleTerse
	}
	return o
}

// queryLocale is the locale of a query as vocab detects it (the guess, for
// a short query), en for a query without letters (a bare "/fix").
func queryLocale(query string) string {
	if loc, _ := vocab.DetectLocale(query); loc != "" {
		return loc
	}
	return "en"
}

func languageOf(r Record) (lang, raw string) {
	if l := strings.ToLower(r.Language); l != "" {
		return vocab.Canonical(vocab.DimLanguage, l), l
	}
	if ext := strings.ToLower(filepath.Ext(r.File)); ext != "" {
		return vocab.Canonical(vocab.DimLanguage, ext[1:]), "ext:" + ext
	}
	return "", "unknown"
}

func triggerOf(raw string) string { return vocab.Canonical(vocab.DimTrigger, raw) }

// commandIntent maps a logged plugin command ("askplugin.fixSelection",
// "fix", "/tests") to its intent, or "".
func commandIntent(raw string) string {
	c := strings.ToLower(strings.TrimSpace(raw))
	c = strings.TrimPrefix(c, "askplugin.")
	c = strings.TrimPrefix(c, "/")
	switch c {
	case "explain", "explainselection":
		return vocab.IntentExplain
	case "fix", "fixselection":
		return vocab.IntentFix
	case "tests", "test", "writetests":
		return vocab.IntentTests
	case "doc", "docs", "adddocs":
		return vocab.IntentDocs
	case "optimize", "optimise":
		return vocab.IntentOptimize
	}
	return ""
}

// slashIntent returns the intent of a query starting with one of the
// plugin's slash commands, or "".
func slashIntent(query string) string {
	q := strings.TrimSpace(query)
	if !strings.HasPrefix(q, "/") {
		return ""
	}
	word, _, _ := strings.Cut(q, " ")
	word, _, _ = strings.Cut(word, "\n")
	for intent, cmd := range profiles.SlashCommands() {
		if strings.EqualFold(word, cmd) {
			return intent
		}
	}
	return ""
}

func instructionOf(r Record, defaulted *[]string) (intent, instruction, trigger string) {
	cmd := commandIntent(r.Command)
	_, isPluginCmd := profiles.PluginCommands()[cmd]
	trigger = triggerOf(r.Trigger)
	if trigger == "" {
		*defaulted = append(*defaulted, vocab.DimTrigger)
		trigger = dialog.TriggerPanel
		if isPluginCmd {
			trigger = dialog.TriggerPalette
		}
	}
	switch {
	case isPluginCmd && trigger != dialog.TriggerPanel:
		return cmd, dialog.InstructionCommand, trigger
	case slashIntent(r.Query) != "":
		return slashIntent(r.Query), dialog.InstructionSlash, trigger
	case cmd != "":
		// A command logged from the panel was typed as its slash form.
		return cmd, dialog.InstructionSlash, trigger
	}
	return "", dialog.InstructionFreeText, trigger
}

var deictic = regexp.MustCompile(`(?i)\b(this|that|these|here|it|function|method|func|class)\b|这|此|该|函数|方法|この|ここ|関数|этот|эта|это|функци|este|esta|esto|función|dies|diese|dieser|funktion|cette|ce|cet|fonction`)

func cursorOf(r Record, defaulted *[]string) string {
	sel := r.Selection
	if !sel.Present {
		switch {
		case r.InFunction != nil && *r.InFunction:
			return vocab.CursorInsideFunction
		case r.InFunction != nil:
			return vocab.CursorIdle
		case r.FunctionLines > 0:
			return vocab.CursorInsideFunction
		}
		*defaulted = append(*defaulted, vocab.DimCursor)
		if deictic.MatchString(r.Query) {
			return vocab.CursorInsideFunction
		}
		return vocab.CursorIdle
	}
	lines := sel.Lines
	if lines == 0 {
		lines = max(1, sel.Chars/40)
	}
	switch {
	case r.FileLines > 0 && lines >= r.FileLines-1:
		return vocab.CursorWholeFile
	case lines == 1:
		return vocab.CursorSingleLine
	case r.FunctionLines > 0 && abs(lines-r.FunctionLines) <= 1:
		return vocab.CursorWholeFunction
	case looksLikeWholeFunction(sel.Text):
		return vocab.CursorWholeFunction
	}
	return vocab.CursorPartialBlock
}

var funcHead = regexp.MustCompile(`^\s*(@\w+.*\n\s*)*((export|default|async|static|public|private|protected)\s+)*(def|func|function)\b|^\s*((public|private|protected|static|final|abstract|synchronized|export|default)\s+)*[\w<>\[\], ?]+\s+\w+\s*\([^)]*\)\s*(throws [\w., ]+)?\s*\{`)

// looksLikeWholeFunction: the text starts with a function header and, for
// brace languages, ends with the brace that closes it.
func looksLikeWholeFunction(text string) bool {
	t := strings.TrimSpace(text)
	if t == "" || !funcHead.MatchString(t) {
		return false
	}
	if strings.HasPrefix(t, "def ") || strings.HasPrefix(t, "async def ") || strings.HasPrefix(t, "@") {
		return true
	}
	return strings.HasSuffix(t, "}") && strings.Count(t, "{") == strings.Count(t, "}")
}

var (
	multiFiles = regexp.MustCompile(`(?i)\b(these|both|all|other|two|multiple|several|open)\s+files?\b|\bacross\s+(the\s+)?files\b|\bbetween\s+\S+\s+and\s+\S+\.\w+|这些文件|多个文件|两个文件|其他文件|ファイル間|複数のファイル|этих файл|varios archivos|mehrere dateien|plusieurs fichiers`)
	thisFile   = regexp.MustCompile(`(?i)\b(this|the|whole|entire|current)\s+file\b|这个文件|本文件|整个文件|当前文件|このファイル|этот файл|este archivo|diese datei|ce fichier`)
)

func referenceOf(query, cursor string) string {
	switch {
	case multiFiles.MatchString(query):
		return vocab.RefOpenFiles
	case cursor == vocab.CursorWholeFile || thisFile.MatchString(query):
		return vocab.RefCurrentFile
	case slices.Contains([]string{vocab.CursorWholeFunction, vocab.CursorPartialBlock, vocab.CursorSingleLine}, cursor):
		return vocab.RefSelection
	case cursor == vocab.CursorInsideFunction && deictic.MatchString(query):
		return vocab.RefEnclosingFunction
	}
	return vocab.RefNone
}

// QueryStyle classifies a query's length and whether code is pasted
// into it: vocab.QueryStyleOf.
func QueryStyle(query string) string { return vocab.QueryStyleOf(query) }

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
