package configgen

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path"
	"regexp"
	"strings"
	"sync"

	"dialogfarm/configgen/coherence"
	"dialogfarm/dialog"
	"dialogfarm/dialog/vocab"
	"dialogfarm/internal/runfiles"
	"dialogfarm/profiles"
)

// querySpec is what a first query is conditioned on.
type querySpec struct {
	Intent, Locale, Difficulty, Style, Instruction, Reference, Language string
	File, Symbol                                                        string
	OpenFiles                                                           []string
	// Code is the code in view: the selection, or the lines the plugin
	// sends around the cursor.
	Code string
	// Paste is what a "_code" style pastes: code from elsewhere, never
	// the code in view; nil when nothing qualifies.
	Paste *paste
	// TypoRate is the share of template queries that get a typo.
	TypoRate float64
	// Exemplars are redacted real queries of the same cell the model's
	// prompt shows (see Config.Exemplars).
	Exemplars []string
}

func (s querySpec) baseStyle() (string, bool) {
	return strings.TrimSuffix(s.Style, "_code"), strings.HasSuffix(s.Style, "_code")
}

// symbolInView reports whether the function's name is in the code in
// view, so that a query may name it.
func (s querySpec) symbolInView() bool {
	return s.Symbol != "" && regexp.MustCompile(`\b`+regexp.QuoteMeta(s.Symbol)+`\b`).MatchString(s.Code)
}

// templater writes template queries and follow-ups.
type templater struct {
	texts  map[string]localeText
	topics map[string][]topic
	tasks  map[string][]string
	names  map[string]string
	// canonical takes every list's first wording (tests).
	canonical bool
}

func newTemplater() *templater {
	return &templater{texts: texts(), topics: generalTopics(), tasks: generalTasks(), names: languageNames()}
}

func (t *templater) locale(loc string) localeText {
	if lt, ok := t.texts[loc]; ok {
		return lt
	}
	return t.texts["en"]
}

// joiner separates sentences: none in Chinese and Japanese.
func joiner(loc string) string {
	if loc == "zh" || loc == "ja" {
		return ""
	}
	return " "
}

// pick draws one of v; a canonical templater takes the first.
func (t *templater) pick(rng *rand.Rand, v []string) string {
	if t.canonical {
		return v[0]
	}
	return v[rng.IntN(len(v))]
}

// query writes a first query from the paraphrase banks, rng drawing the
// wordings: the request about the reference (or a general question
// grounded in the code in view), background for verbose and hard
// requests, the pasted code of a "_code" style, the casual style and
// typos of fast typing, and the slash command.
func (t *templater) query(s querySpec, rng *rand.Rand) string {
	if s.Instruction == "command" {
		return profiles.PluginCommands()[s.Intent]
	}
	lt := t.locale(s.Locale)
	base, withCode := s.baseStyle()
	lang := t.names[s.Language]
	var q string
	if s.Reference == vocab.RefNone || s.Reference == "" {
		q = t.general(s, lt, lang, rng)
	} else {
		tmpl := t.pick(rng, lt.normal[s.Intent])
		if base == vocab.StyleTerse {
			tmpl = t.pick(rng, lt.terse[s.Intent])
		}
		key := s.Reference
		if key == vocab.RefEnclosingFunction {
			key = refUnnamedFunction
			if s.symbolInView() {
				key = refFunction
			}
		}
		ref := strings.NewReplacer("{sym}", s.Symbol, "{file}", path.Base(s.File)).Replace(t.pick(rng, lt.ref[key]))
		q = strings.NewReplacer("{ref}", ref, "{lang}", lang).Replace(tmpl)
	}
	switch {
	case base == vocab.StyleNormal && s.Difficulty == vocab.DifficultyHard:
		q += joiner(s.Locale) + t.pick(rng, lt.hardHint)
	case base == vocab.StyleVerbose:
		q += joiner(s.Locale) + strings.NewReplacer("{lang}", lang, "{file}", path.Base(s.File)).Replace(t.pick(rng, lt.verbose[s.Difficulty]))
	}
	q = roughen(q, s.Locale, base, s.TypoRate, rng)
	if withCode && s.Paste != nil {
		intro := strings.NewReplacer("{other}", path.Base(s.Paste.File), "{file}", path.Base(s.File)).Replace(t.pick(rng, lt.paste[s.Paste.Kind]))
		q += "\n\n" + intro + "\n```" + s.Language + "\n" + s.Paste.Code + "\n```"
	}
	if s.Instruction == "slash_command" {
		cmd := profiles.SlashCommands()[s.Intent]
		if base == vocab.StyleTerse && (!withCode || s.Paste == nil) {
			return cmd
		}
		return cmd + " " + q
	}
	return q
}

// maxAttempts is how many wordings a template query gets before its
// config is dropped as incoherent; the last one pastes nothing.
const maxAttempts = 5

// coherentQuery writes config i's template query, drawing other wordings
// (and at last leaving out pasted code) while the coherence checker finds
// something in it; ok is false when no attempt was coherent. The first
// attempt's findings are counted by rule.
func (t *templater) coherentQuery(s *querySpec, seed int64, i int, stats *Stats) (string, bool) {
	for attempt := range maxAttempts {
		if attempt == maxAttempts-1 {
			s.Paste = nil
		}
		rng := queryRNG(seed, i)
		if attempt > 0 {
			rng = queryRNG(seed+int64(attempt)*0x9e3779b9, i)
		}
		q := t.query(*s, rng)
		findings := coherence.CheckQuery(q, s.context())
		if len(findings) == 0 {
			if attempt > 0 {
				stats.Regenerated++
			}
			return q, true
		}
		if attempt == 0 {
			for _, f := range findings {
				stats.Incoherent[f.Rule]++
			}
		}
	}
	return "", false
}

// context is what the plugin sends with the query, and the file pasted
// code comes from.
func (s querySpec) context() coherence.Context {
	ctx := coherence.Context{File: s.File, Shown: s.Code}
	if s.Paste != nil {
		ctx.Files = map[string]string{s.Paste.File: s.Paste.Code}
	}
	return ctx
}

// general writes a question about no code in particular: about a topic
// or task the code in view shows when there is one, else about the
// language.
func (t *templater) general(s querySpec, lt localeText, lang string, rng *rand.Rand) string {
	topics := groundedTopics(t.topics[s.Language], s.Code)
	tasks := groundedTasks(s.Code)
	var usable []string
	for _, v := range lt.general[s.Intent] {
		if (strings.Contains(v, "{topic}") && len(topics) == 0) || (strings.Contains(v, "{task}") && len(tasks) == 0) {
			continue
		}
		usable = append(usable, v)
	}
	names := t.tasks[s.Locale]
	if len(names) == 0 {
		names = t.tasks["en"]
	}
	task := ""
	if len(tasks) > 0 {
		task = names[tasks[rng.IntN(len(tasks))]]
	}
	top := ""
	if len(topics) > 0 {
		top = t.pick(rng, topics)
	}
	return strings.NewReplacer("{topic}", top, "{task}", task, "{lang}", lang).Replace(t.pick(rng, usable))
}

// queryWriter asks a model for first queries, with an answer cache. The
// cache file is JSONL, one {"key","query"} line appended per answer as it
// arrives, so a run killed half-way keeps what it paid for and a rerun
// gets the same queries; a torn last line is ignored on reading.
type queryWriter struct {
	chat  Model
	model string
	mu    sync.Mutex
	cache map[string]string
	// flight holds the prompts being asked right now, so concurrent
	// configs with the same prompt pay for one call.
	flight map[string]chan struct{}
	file   *os.File // nil without a cache path
	err    error    // first error appending to the cache
}

type cacheLine struct {
	Key   string `json:"key"`
	Query string `json:"query"`
}

// queryPromptVersion changes with the prompt, invalidating cached queries.
const queryPromptVersion = "query-v2"

func newQueryWriter(m Model, cachePath string) (*queryWriter, error) {
	w := &queryWriter{chat: m, model: m.Model(), cache: map[string]string{}, flight: map[string]chan struct{}{}}
	if cachePath == "" {
		return w, nil
	}
	data, err := os.ReadFile(cachePath)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read query cache: %w", err)
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		var cl cacheLine
		if json.Unmarshal([]byte(line), &cl) == nil && cl.Key != "" {
			w.cache[cl.Key] = cl.Query
		}
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		data = append(data, '\n') // a torn last line: start the next one cleanly
		if err := runfiles.WriteFile(cachePath, data); err != nil {
			return nil, fmt.Errorf("repair query cache: %w", err)
		}
	}
	if w.file, err = runfiles.OpenAppend(cachePath); err != nil {
		return nil, fmt.Errorf("open query cache: %w", err)
	}
	return w, nil
}

// write returns the model's query for s, from the cache when the same
// prompt was answered before.
func (w *queryWriter) write(ctx context.Context, s querySpec) (string, error) {
	system, user := queryPrompt(s)
	h := sha256.Sum256([]byte(w.model + "\x00" + queryPromptVersion + "\x00" + system + "\x00" + user))
	key := hex.EncodeToString(h[:])
	for {
		w.mu.Lock()
		q, ok := w.cache[key]
		wait, busy := w.flight[key]
		if !ok && !busy {
			done := make(chan struct{})
			w.flight[key] = done
			defer func() {
				w.mu.Lock()
				delete(w.flight, key)
				w.mu.Unlock()
				close(done)
			}()
		}
		w.mu.Unlock()
		if ok {
			return q, nil
		}
		if !busy {
			break
		}
		select {
		case <-wait:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	answer, err := w.chat.Complete(ctx, []dialog.Message{
		{Role: "system", Content: system},
		{Role: "user", Content: user},
	})
	if err != nil {
		return "", err
	}
	q := cleanQuery(answer.Text)
	if s.Instruction == "slash_command" {
		cmd := profiles.SlashCommands()[s.Intent]
		if !strings.HasPrefix(q, cmd) {
			q = strings.TrimSpace(cmd + " " + q)
		}
	}
	if q == "" {
		return "", errors.New("model wrote an empty query")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.cache[key] = q
	if w.file != nil && w.err == nil {
		line, _ := json.Marshal(cacheLine{Key: key, Query: q})
		if _, err := w.file.Write(append(line, '\n')); err != nil {
			w.err = fmt.Errorf("append to query cache: %w", err)
		}
	}
	return q, nil
}

// close closes the cache file and reports the first append error.
func (w *queryWriter) close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.file == nil {
		return w.err
	}
	err := w.file.Close()
	w.file = nil
	if w.err != nil {
		return w.err
	}
	if err != nil {
		return fmt.Errorf("close query cache: %w", err)
	}
	return nil
}

// cleanQuery strips what models wrap a message in: quotes, a "Query:"
// label, surrounding blank lines.
func cleanQuery(s string) string {
	s = strings.TrimSpace(s)
	for _, label := range []string{"Query:", "Message:", "Developer:", "User:"} {
		s = strings.TrimSpace(strings.TrimPrefix(s, label))
	}
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'') {
		s = strings.TrimSpace(s[1 : len(s)-1])
	}
	return s
}

// queryPrompt builds the query writer's prompt: what the developer wants
// (intent, locale, difficulty, style), what the request is about, the
// code the plugin sends with it (never to be pasted again), the code a
// "_code" style may paste instead, and the redacted exemplars of real
// queries of the same cell to imitate.
func queryPrompt(s querySpec) (system, user string) {
	intentGoals := map[string]string{
		"explain": "understand what the code does", "generate": "get new code written", "fix": "get a bug fixed",
		"tests": "get tests written", "docs": "get comments or docs added", "optimize": "make the code faster or leaner",
		"refactor": "restructure the code without changing behaviour", "question": "ask a general programming question",
	}
	styleRules := map[string]string{
		"terse": "terse: a few words, like a busy developer", "normal": "normal: one or two plain sentences",
		"verbose": "verbose: a paragraph with background on what they are doing and why",
	}
	system = "You write the first message a software developer types into the chat of an AI code assistant inside " +
		"their editor. Write only that message: no quotes, no preamble, no answer to it. Sound like a real developer. " +
		"The assistant already receives the file's name and the code in view with the message: never paste that code " +
		"again, and name only files, functions and terms that the code in view, or code you paste, holds."
	base, withCode := s.baseStyle()
	function := fmt.Sprintf("the function `%s` their cursor is in", s.Symbol)
	if !s.symbolInView() {
		function = "the function their cursor is in (its name is not in view: do not name it)"
	}
	ref := map[string]string{
		"selection":          "the code they selected (the code in view)",
		"enclosing_function": function,
		"current_file":       "the open file " + s.File,
		"open_files":         "the open file " + s.File + " and how it fits with the rest of the code",
		"none":               "no code in particular: a general " + s.Language + " question that fits the code in view",
	}[s.Reference]
	var b strings.Builder
	fmt.Fprintf(&b, "Write the developer's message.\n- Goal: %s (intent %q)\n", intentGoals[s.Intent], s.Intent)
	fmt.Fprintf(&b, "- Write it in %s.\n- Difficulty of the request: %s\n", localeName(s.Locale), s.Difficulty)
	fmt.Fprintf(&b, "- Style: %s", styleRules[base])
	switch {
	case withCode && s.Paste != nil:
		fmt.Fprintf(&b, "; paste the code from %s given below into the message in a fenced block", s.Paste.File)
	case withCode:
		b.WriteString("; paste no code (nothing outside the code in view qualifies)")
	}
	fmt.Fprintf(&b, "\n- It is about: %s\n", ref)
	if s.Instruction == "slash_command" {
		fmt.Fprintf(&b, "- Start the message with the assistant's slash command %s, then what they want.\n",
			profiles.SlashCommands()[s.Intent])
	}
	if len(s.Exemplars) > 0 {
		b.WriteString("Real developers in the same situation (same intent, language and style) wrote these messages about other code:\n")
		for _, e := range s.Exemplars {
			fmt.Fprintf(&b, "<example>\n%s\n</example>\n", e)
		}
		b.WriteString("Write like them (length, tone, terseness, typos, how they paste code), but about the code in view, not theirs.\n")
	}
	fmt.Fprintf(&b, "File: %s (%s)\nCode in view (sent with the message):\n```%s\n%s\n```\n", s.File, s.Language, s.Language, firstLinesOf(s.Code, 80))
	if withCode && s.Paste != nil {
		fmt.Fprintf(&b, "Code from %s to paste:\n```%s\n%s\n```\n", s.Paste.File, s.Language, s.Paste.Code)
	}
	return system, b.String()
}

// firstLinesOf returns up to n lines of code, without trailing blank lines.
func firstLinesOf(code string, n int) string {
	lines := strings.Split(strings.TrimRight(code, "\n \t"), "\n")
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

func localeName(loc string) string {
	names := map[string]string{"en": "English", "zh": "Simplified Chinese", "ja": "Japanese", "ko": "Korean",
		"ru": "Russian", "es": "Spanish", "de": "German", "fr": "French"}
	if n, ok := names[loc]; ok {
		return n
	}
	return loc
}
