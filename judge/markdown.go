package judge

import (
	"strings"

	"dialogfarm/dialog/vocab"
)

// codeBlock is one fenced code block of an answer.
type codeBlock struct {
	Lang   string // the info string's first word, lower-cased ("" if none)
	Code   string // the lines between the fences
	Closed bool   // false if the answer ended inside the block
}

// markdown is an answer split into fenced code blocks and the prose around
// them.
type markdown struct {
	Blocks []codeBlock
	Prose  string
}

// parseMarkdown splits text into fenced code blocks (``` or ~~~, indented by
// at most three spaces, closed by a fence of the same character at least as
// long with no info string, as CommonMark has it) and prose.
func parseMarkdown(text string) markdown {
	var md markdown
	var prose, code []string
	var open *codeBlock
	var fenceChar byte
	var fenceLen int
	for _, line := range strings.Split(text, "\n") {
		ch, n, info, ok := fence(line)
		switch {
		case open == nil && ok:
			open = &codeBlock{Lang: firstWord(info)}
			fenceChar, fenceLen, code = ch, n, nil
		case open != nil && ok && ch == fenceChar && n >= fenceLen && strings.TrimSpace(info) == "":
			open.Code, open.Closed = strings.Join(code, "\n"), true
			md.Blocks = append(md.Blocks, *open)
			open = nil
		case open != nil:
			code = append(code, line)
		default:
			prose = append(prose, line)
		}
	}
	if open != nil {
		open.Code = strings.Join(code, "\n")
		md.Blocks = append(md.Blocks, *open)
	}
	md.Prose = strings.Join(prose, "\n")
	return md
}

// fence reports whether line is a code fence: its character, length and
// info string.
func fence(line string) (ch byte, n int, info string, ok bool) {
	indent := len(line) - len(strings.TrimLeft(line, " "))
	if indent > 3 {
		return 0, 0, "", false
	}
	rest := line[indent:]
	if !strings.HasPrefix(rest, "```") && !strings.HasPrefix(rest, "~~~") {
		return 0, 0, "", false
	}
	ch = rest[0]
	for n < len(rest) && rest[n] == ch {
		n++
	}
	info = strings.TrimSpace(rest[n:])
	if ch == '`' && strings.Contains(info, "`") {
		return 0, 0, "", false // CommonMark: a backtick fence's info has no backticks
	}
	return ch, n, info, true
}

func firstWord(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return strings.ToLower(strings.Trim(f[0], "{}."))
	}
	return ""
}

// code is the concatenated code of every block.
func (md markdown) code() string {
	parts := make([]string, 0, len(md.Blocks))
	for _, b := range md.Blocks {
		parts = append(parts, b.Code)
	}
	return strings.Join(parts, "\n")
}

// neutralLangs are fence tags that never conflict with a file's language:
// commands, data, diffs and output appear in answers about any code.
var neutralLangs = map[string]bool{
	"": true, "text": true, "shell": true, "json": true, "yaml": true, "toml": true, "xml": true,
	"diff": true, "markdown": true, "sql": true, "html": true, "css": true, "ini": true,
	"dockerfile": true, "makefile": true, "graphql": true, "regex": true, "csv": true,
	"mermaid": true, "properties": true, "gomod": true, "protobuf": true, "proto": true,
}

// compatibleLangs are language pairs one file may legitimately be answered in.
var compatibleLangs = map[[2]string]bool{
	{"c", "cpp"}: true, {"cpp", "c"}: true,
}

// normLang is the canonical name of a fence tag or language id.
func normLang(s string) string { return vocab.LanguageName(s) }
