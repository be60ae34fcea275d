package workbench

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"dialogfarm/dialog"
)

// sourceFile is the text of the file a config opens, used to check its
// positions and to know what the editor's status bar will show.
type sourceFile struct {
	lines   [][]rune
	tabSize int
	eolLen  int // 2 in a CRLF file: the editor counts a line break as 2 characters
}

func readSource(repo, rel string, tabSize int) (*sourceFile, error) {
	data, err := os.ReadFile(filepath.Join(repo, filepath.FromSlash(rel)))
	if err != nil {
		return nil, err
	}
	text := string(data)
	f := &sourceFile{tabSize: tabSize, eolLen: 1}
	if strings.Contains(text, "\r\n") {
		text, f.eolLen = strings.ReplaceAll(text, "\r\n", "\n"), 2
	}
	for _, l := range strings.Split(text, "\n") {
		f.lines = append(f.lines, []rune(l))
	}
	return f, nil
}

// check reports a position outside the file. Col may be one past the end
// of the line (the position after its last character).
func (f *sourceFile) check(p dialog.Position) error {
	if p.Line > len(f.lines) {
		return fmt.Errorf("line %d is past the end of the file (%d lines)", p.Line, len(f.lines))
	}
	if n := len(f.lines[p.Line-1]); p.Col > n+1 {
		return fmt.Errorf("col %d is past the end of line %d (%d characters)", p.Col, p.Line, n)
	}
	return nil
}

// visualCol is the column the status bar shows for p: tabs advance to the
// next tab stop.
func (f *sourceFile) visualCol(p dialog.Position) int {
	return len(f.widen(f.lines[p.Line-1][:p.Col-1])) + 1
}

// lineLen is the number of characters on a 1-based line.
func (f *sourceFile) lineLen(line int) int { return len(f.lines[line-1]) }

// text returns the characters from start up to end (exclusive).
func (f *sourceFile) text(s dialog.Selection) string {
	if s.Start.Line == s.End.Line {
		return string(f.lines[s.Start.Line-1][s.Start.Col-1 : s.End.Col-1])
	}
	var b strings.Builder
	b.WriteString(string(f.lines[s.Start.Line-1][s.Start.Col-1:]))
	for l := s.Start.Line + 1; l < s.End.Line; l++ {
		b.WriteByte('\n')
		b.WriteString(string(f.lines[l-1]))
	}
	b.WriteByte('\n')
	b.WriteString(string(f.lines[s.End.Line-1][:s.End.Col-1]))
	return b.String()
}

// selectedCount is the number the status bar shows as "(N selected)":
// characters, each line break counted at the file's end-of-line length.
func (f *sourceFile) selectedCount(s dialog.Selection) int {
	return len([]rune(f.text(s))) + (s.End.Line-s.Start.Line)*(f.eolLen-1)
}

// shown is line's text as the editor draws it: each tab widened with
// spaces to the next tab stop.
func (f *sourceFile) shown(line int) string {
	return string(f.widen(f.lines[line-1]))
}

// widen returns the characters of a line's start with each tab widened
// with spaces to the next tab stop.
func (f *sourceFile) widen(rs []rune) []rune {
	out := make([]rune, 0, len(rs))
	for _, r := range rs {
		if r == '\t' {
			for n := f.tabSize - len(out)%f.tabSize; n > 0; n-- {
				out = append(out, ' ')
			}
			continue
		}
		out = append(out, r)
	}
	return out
}
