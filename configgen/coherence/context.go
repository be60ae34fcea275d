package coherence

import (
	"strings"

	"dialogfarm/dialog"
)

// ContextOf is the context of a chat config's first query as the
// reference plugin builds it from the open file's text: the selection's
// text, or, without one, the contextLines lines before and after the
// cursor's line (positions are 1-based, columns in characters). Files
// are left for the caller to add.
func ContextOf(c dialog.ChatConfig, src string, contextLines int) Context {
	lines := strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n")
	ctx := Context{File: c.File}
	if s := c.Selection; s != nil && s.Start != s.End {
		ctx.Shown = between(lines, s.Start, s.End)
		return ctx
	}
	row := 0
	if c.Cursor != nil {
		row = c.Cursor.Line - 1
	}
	from, to := max(0, row-contextLines), min(len(lines)-1, row+contextLines)
	if from <= to {
		ctx.Shown = strings.Join(lines[from:to+1], "\n")
	}
	return ctx
}

// between is the text from start to end (exclusive).
func between(lines []string, start, end dialog.Position) string {
	at := func(p dialog.Position) (int, int) {
		r := min(max(p.Line-1, 0), len(lines)-1)
		return r, min(max(p.Col-1, 0), len([]rune(lines[r])))
	}
	sr, sc := at(start)
	er, ec := at(end)
	if sr == er {
		return string([]rune(lines[sr])[sc:max(sc, ec)])
	}
	parts := []string{string([]rune(lines[sr])[sc:])}
	parts = append(parts, lines[sr+1:er]...)
	return strings.Join(append(parts, string([]rune(lines[er])[:ec])), "\n")
}
