package capture

import (
	"dialogfarm/dialog"

	"context"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// OfflinePrefix starts every answer of the Offline responder.
const OfflinePrefix = "[offline placeholder]"

// Offline is the built-in stand-in for machines with no model service. Its
// answer says plainly that it is a placeholder, is a deterministic function
// of the request (it echoes what was asked about which file, and shows a
// short fenced code block in the request's language when the request showed
// code), and is marked Offline so records never become training data.
type Offline struct{}

var _ Responder = Offline{}

// Name is "offline".
func (Offline) Name() string { return "offline" }

// Respond writes the placeholder answer for req.
func (Offline) Respond(ctx context.Context, req Request) (Answer, error) {
	ans := Answer{Responder: "offline", Model: "offline", Offline: true}
	if err := ctx.Err(); err != nil {
		return ans, fmt.Errorf("offline answer: %w", err)
	}
	ans.Text = offlineText(req)
	return ans, nil
}

// Candidates makes the placeholder the only candidate of a pool, so an
// offline run goes through the judge (rules-only) like a real one.
func (o Offline) Candidates(ctx context.Context, msgs []dialog.Message, temperature *float32) ([]dialog.Candidate, []dialog.Missing, error) {
	return soleCandidate(ctx, o, "offline", msgs, temperature)
}

// prompt is what the offline stand-in reads from a user message the
// reference plugin built ("File: ...\nLanguage: ...\n```lang\n...\n```\n\nask").
type prompt struct {
	file, language, lines string
	fence                 string // the code block's language tag; "" if none
	code                  []string
	hasCode               bool
	instruction           string
}

var linesPattern = regexp.MustCompile(`\(lines (\d+-\d+)\):\s*$`)

func parsePrompt(text string) prompt {
	var p prompt
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	var rest []string
	inCode := false
	for i, l := range lines {
		switch {
		case inCode && l == "```":
			inCode = false
			rest = lines[i+1:]
		case inCode:
			p.code = append(p.code, l)
		case p.hasCode:
		case strings.HasPrefix(l, "```"):
			inCode, p.hasCode = true, true
			p.fence = strings.TrimSpace(strings.TrimPrefix(l, "```"))
			rest = nil
		case strings.HasPrefix(l, "File: ") && p.file == "":
			p.file = strings.TrimSpace(strings.TrimPrefix(l, "File: "))
		case strings.HasPrefix(l, "Language: ") && p.language == "":
			p.language = strings.TrimSpace(strings.TrimPrefix(l, "Language: "))
		case strings.HasPrefix(l, "Cursor: "):
		case linesPattern.MatchString(l):
			p.lines = linesPattern.FindStringSubmatch(l)[1]
		default:
			rest = append(rest, l)
		}
	}
	p.instruction = strings.TrimSpace(strings.Join(rest, "\n"))
	return p
}

func offlineText(req Request) string {
	user, turn := "", 0
	for _, m := range req.Messages {
		if m.Role == "user" {
			user, turn = m.Content, turn+1
		}
	}
	p := parsePrompt(user)

	var b strings.Builder
	b.WriteString(OfflinePrefix)
	b.WriteString(" No model service is configured, so dialogfarm's offline stand-in wrote this answer." +
		" It is not a real answer and is never training data.\n\n")
	asked, _, _ := strings.Cut(p.instruction, "\n")
	if asked == "" {
		asked = "(no question)"
	}
	fmt.Fprintf(&b, "Request: %s\n", truncate(asked, 160))
	if p.file != "" || p.language != "" {
		fmt.Fprintf(&b, "File: %s (%s)\n", orNone(p.file), orNone(p.language))
	}
	fmt.Fprintf(&b, "Turn: %d\n", turn)
	if p.hasCode {
		lang := p.fence
		if lang == "" {
			lang = p.language
		}
		c := commentFor(lang)
		where := orNone(p.file)
		if p.lines != "" {
			where += ", lines " + p.lines
		}
		fmt.Fprintf(&b, "\n```%s\n%s offline placeholder for %s%s\n", lang, c.open, where, c.close)
		if first := firstCodeLine(p.code); first != "" {
			fmt.Fprintf(&b, "%s first line: %s%s\n", c.open, truncate(first, 120), c.close)
		}
		b.WriteString("```\n")
	}
	return b.String()
}

func firstCodeLine(code []string) string {
	for _, l := range code {
		if t := strings.TrimSpace(l); t != "" {
			return t
		}
	}
	return ""
}

func orNone(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

type comment struct{ open, close string }

// commentFor is a line comment in a language, by VS Code language id or
// fence tag.
func commentFor(lang string) comment {
	switch strings.ToLower(lang) {
	case "python", "py", "ruby", "rb", "shellscript", "sh", "bash", "zsh", "yaml", "yml",
		"toml", "perl", "r", "powershell", "dockerfile", "makefile", "elixir", "julia":
		return comment{"#", ""}
	case "sql", "lua", "haskell", "hs", "ada":
		return comment{"--", ""}
	case "html", "xml", "markdown", "md", "vue", "svelte":
		return comment{"<!--", " -->"}
	case "css", "scss", "less":
		return comment{"/*", " */"}
	case "clojure", "lisp", "scheme":
		return comment{";;", ""}
	case "erlang", "latex", "tex":
		return comment{"%", ""}
	default:
		return comment{"//", ""}
	}
}
