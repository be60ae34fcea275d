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
	"strings"
	"sync"

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
	// sends around the cursor; Snippet what a "_code" style pastes.
	Code, Snippet string
}

func (s querySpec) baseStyle() (string, bool) {
	return strings.TrimSuffix(s.Style, "_code"), strings.HasSuffix(s.Style, "_code")
}

// templater writes template queries and follow-ups.
type templater struct {
	texts  map[string]localeText
	topics map[string][]string
	tasks  map[string][]string
	names  map[string]string
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

// query writes a first query from templates; rng picks general topics.
func (t *templater) query(s querySpec, rng *rand.Rand) string {
	if s.Instruction == "command" {
		return profiles.PluginCommands()[s.Intent]
	}
	lt := t.locale(s.Locale)
	base, withCode := s.baseStyle()
	lang := t.names[s.Language]
	var q string
	if s.Reference == vocab.RefNone || s.Reference == "" {
		topics, tasks := t.topics[s.Language], t.tasks[s.Locale]
		if len(tasks) == 0 {
			tasks = t.tasks["en"]
		}
		q = strings.NewReplacer("{topic}", topics[rng.IntN(len(topics))], "{task}", tasks[rng.IntN(len(tasks))],
			"{lang}", lang).Replace(lt.general[s.Intent])
	} else {
		tmpl := lt.normal[s.Intent]
		if base == vocab.StyleTerse {
			tmpl = lt.terse[s.Intent]
		}
		ref := lt.ref[s.Reference]
		if s.Reference == vocab.RefEnclosingFunction && s.Symbol == "" {
			ref = lt.ref[vocab.RefSelection]
		}
		ref = strings.NewReplacer("{sym}", "`"+s.Symbol+"`", "{file}", path.Base(s.File),
			"{files}", strings.Join(baseNames(append([]string{s.File}, s.OpenFiles...)), ", ")).Replace(ref)
		q = strings.NewReplacer("{ref}", ref, "{lang}", lang).Replace(tmpl)
	}
	switch {
	case base == vocab.StyleNormal && s.Difficulty == vocab.DifficultyHard:
		q += joiner(s.Locale) + lt.hardHint
	case base == vocab.StyleVerbose:
		q += joiner(s.Locale) + strings.NewReplacer("{lang}", lang, "{file}", path.Base(s.File)).Replace(lt.verbose[s.Difficulty])
	}
	if withCode && strings.TrimSpace(s.Snippet) != "" {
		q += "\n\n" + lt.codeIntro + "\n```" + s.Language + "\n" + snippet(s.Snippet, 8) + "\n```"
	}
	if s.Instruction == "slash_command" {
		cmd := profiles.SlashCommands()[s.Intent]
		if base == vocab.StyleTerse && !withCode {
			return cmd
		}
		return cmd + " " + q
	}
	return q
}

func baseNames(files []string) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = path.Base(f)
	}
	return out
}

// snippet returns up to n lines of code, without trailing blank lines.
func snippet(code string, n int) string {
	lines := strings.Split(strings.TrimRight(code, "\n \t"), "\n")
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
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
const queryPromptVersion = "query-v1"

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

// queryPrompt builds the query writer's prompt.
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
		"their editor. Write only that message: no quotes, no preamble, no answer to it. Sound like a real developer."
	base, withCode := s.baseStyle()
	ref := map[string]string{
		"selection":          "the code they selected (shown below)",
		"enclosing_function": fmt.Sprintf("the function `%s` their cursor is in (shown below)", s.Symbol),
		"current_file":       "the whole file " + s.File,
		"open_files":         "the open files " + strings.Join(append([]string{s.File}, s.OpenFiles...), ", "),
		"none":               "no code in particular: a general " + s.Language + " question",
	}[s.Reference]
	var b strings.Builder
	fmt.Fprintf(&b, "Write the developer's message.\n- Goal: %s (intent %q)\n", intentGoals[s.Intent], s.Intent)
	fmt.Fprintf(&b, "- Write it in %s.\n- Difficulty of the request: %s\n", localeName(s.Locale), s.Difficulty)
	fmt.Fprintf(&b, "- Style: %s", styleRules[base])
	if withCode {
		b.WriteString("; paste a few lines of the code into the message in a fenced block")
	}
	fmt.Fprintf(&b, "\n- It is about: %s\n", ref)
	if s.Instruction == "slash_command" {
		fmt.Fprintf(&b, "- Start the message with the assistant's slash command %s, then what they want.\n",
			profiles.SlashCommands()[s.Intent])
	}
	fmt.Fprintf(&b, "File: %s (%s)\nCode in view:\n```%s\n%s\n```\n", s.File, s.Language, s.Language, snippet(s.Code, 80))
	return system, b.String()
}

func localeName(loc string) string {
	names := map[string]string{"en": "English", "zh": "Simplified Chinese", "ja": "Japanese", "ko": "Korean",
		"ru": "Russian", "es": "Spanish", "de": "German", "fr": "French"}
	if n, ok := names[loc]; ok {
		return n
	}
	return loc
}
