package workbench

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"dialogfarm/dialog"
)

// source writes content to repo/pkg/file.go in a fresh folder and reads it
// back with readSource and a tab size of 4, as the driver does.
func source(tb testing.TB, content string) *sourceFile {
	tb.Helper()
	repo := tb.TempDir()
	if err := os.MkdirAll(filepath.Join(repo, "pkg"), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "pkg", "file.go"), []byte(content), 0o644); err != nil {
		tb.Fatal(err)
	}
	f, err := readSource(repo, "pkg/file.go", 4)
	if err != nil {
		tb.Fatalf("readSource: %v", err)
	}
	return f
}

func lineStrings(f *sourceFile) []string {
	out := make([]string, len(f.lines))
	for i, l := range f.lines {
		out[i] = string(l)
	}
	return out
}

func TestReadSource(t *testing.T) {
	cases := []struct {
		name    string
		content string
		want    []string
	}{
		{"LF", "a\n\tb\nc", []string{"a", "\tb", "c"}},
		{"trailing newline is an empty last line", "a\nb\n", []string{"a", "b", ""}},
		{"CRLF", "a\r\n\tb\r\nc\r\n", []string{"a", "\tb", "c", ""}},
		{"mixed endings", "a\r\nb\nc", []string{"a", "b", "c"}},
		{"empty file", "", []string{""}},
		{"trailing blanks are kept", "a  \n\t\n", []string{"a  ", "\t", ""}},
		{"non-ASCII", "héllo\n世界 😀\n", []string{"héllo", "世界 😀", ""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, lineStrings(source(t, c.content))); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadSourceMissingFile(t *testing.T) {
	_, err := readSource(t.TempDir(), "pkg/missing.go", 4)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("err = %v, want fs.ErrNotExist", err)
	}
}

func TestSourceCheck(t *testing.T) {
	// 3 lines: "ab", "\tx", and the empty line after the last newline.
	lf := "ab\n\tx\n"
	crlf := "ab\r\n\tx\r\n"
	wide := "héllo 世界\n" // 8 characters, 13 bytes
	cases := []struct {
		name    string
		content string
		p       dialog.Position
		wantErr string // "" when the position is inside the file
	}{
		{"first character", lf, pos(1, 1), ""},
		{"last character", lf, pos(1, 2), ""},
		{"one past the end of the line", lf, pos(1, 3), ""},
		{"two past the end of the line", lf, pos(1, 4), "col 4 is past the end of line 1 (2 characters)"},
		{"a tab is one column", lf, pos(2, 3), ""},
		{"past a line with a tab", lf, pos(2, 4), "col 4 is past the end of line 2 (2 characters)"},
		{"empty last line", lf, pos(3, 1), ""},
		{"past the empty last line", lf, pos(3, 2), "col 2 is past the end of line 3 (0 characters)"},
		{"line past the end of the file", lf, pos(4, 1), "line 4 is past the end of the file (3 lines)"},
		{"far past the end of the file", lf, pos(100, 7), "line 100 is past the end of the file (3 lines)"},
		{"CRLF one past the end", crlf, pos(1, 3), ""},
		{"CRLF carriage return is not a column", crlf, pos(1, 4), "col 4 is past the end of line 1 (2 characters)"},
		{"CRLF line past the end", crlf, pos(4, 1), "line 4 is past the end of the file (3 lines)"},
		{"non-ASCII one past the end", wide, pos(1, 9), ""},
		{"non-ASCII counts characters, not bytes", wide, pos(1, 10), "col 10 is past the end of line 1 (8 characters)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := source(t, c.content).check(c.p)
			switch {
			case c.wantErr == "" && err != nil:
				t.Errorf("check(%v) = %v, want nil", c.p, err)
			case c.wantErr != "" && (err == nil || err.Error() != c.wantErr):
				t.Errorf("check(%v) = %v, want %q", c.p, err, c.wantErr)
			}
		})
	}
}

func TestSourceVisualCol(t *testing.T) {
	cases := []struct {
		name    string
		content string
		p       dialog.Position
		want    int
	}{
		{"start of line", "\tx", pos(1, 1), 1},
		{"after a leading tab", "\tx", pos(1, 2), 5},
		{"after the character behind a tab", "\tx", pos(1, 3), 6},
		{"tab after one character", "a\tb", pos(1, 3), 5},
		{"tab after three characters", "abc\tx", pos(1, 5), 5},
		{"tab on a tab stop is a full stop", "abcd\tx", pos(1, 6), 9},
		{"two tabs", "\t\tx", pos(1, 3), 9},
		{"no tabs", "x := 1", pos(1, 6), 6},
		{"one past the end", "\tx", pos(1, 3), 6},
		{"second line", "a\n\t\tb", pos(2, 3), 9},
		{"CRLF", "a\r\n\tb\r\n", pos(2, 3), 6},
		{"non-ASCII before a tab", "é\tx", pos(1, 3), 5},
		// The status bar counts code points, not display width.
		{"wide characters", "世界\tx", pos(1, 4), 5},
		{"emoji", "😀x", pos(1, 3), 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := source(t, c.content).visualCol(c.p); got != c.want {
				t.Errorf("visualCol(%v) of %q = %d, want %d", c.p, c.content, got, c.want)
			}
		})
	}
}

func TestSourceVisualColTabSize(t *testing.T) {
	cases := []struct {
		name    string
		tabSize int
		want    int
	}{
		{"2", 2, 3},
		{"4", 4, 5},
		{"8", 8, 9},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := source(t, "\tx")
			f.tabSize = c.tabSize
			if got := f.visualCol(pos(1, 2)); got != c.want {
				t.Errorf("visualCol = %d, want %d", got, c.want)
			}
		})
	}
}

// TestSourceShown checks the line as the editor draws it: a tab widens to
// the next tab stop, so the characters drawn before a column count its
// visual column minus one.
func TestSourceShown(t *testing.T) {
	f := source(t, "\tx\ty = 1\nab\tc\n")
	for _, c := range []struct {
		line int
		want string
	}{
		{1, "    x   y = 1"},
		{2, "ab  c"},
		{3, ""},
	} {
		if got := f.shown(c.line); got != c.want {
			t.Errorf("shown(%d) = %q, want %q", c.line, got, c.want)
		}
	}
	if got, want := len(f.shown(1)[:f.visualCol(pos(1, 4))-1]), len("    x   "); got != want {
		t.Errorf("characters drawn before line 1 col 4 = %d, want %d", got, want)
	}
}

func TestSourceText(t *testing.T) {
	code := "func f() {\n\treturn 1\n}\n"
	cases := []struct {
		name     string
		content  string
		from, to dialog.Position
		want     string
	}{
		{"one line", code, pos(1, 6), pos(1, 9), "f()"},
		{"one character", code, pos(1, 1), pos(1, 2), "f"},
		{"to the end of a line", code, pos(2, 2), pos(2, 10), "return 1"},
		{"whole line with its tab", code, pos(2, 1), pos(2, 10), "\treturn 1"},
		{"several lines", code, pos(1, 6), pos(3, 2), "f() {\n\treturn 1\n}"},
		{"ending at col 1 of the next line", code, pos(2, 1), pos(3, 1), "\treturn 1\n"},
		{"ending at col 1 of a later line", code, pos(1, 1), pos(3, 1), "func f() {\n\treturn 1\n"},
		{"from the end of a line", code, pos(1, 11), pos(2, 2), "\n\t"},
		{"whole file", code, pos(1, 1), pos(4, 1), code},
		{"CRLF has no carriage returns", strings.ReplaceAll(code, "\n", "\r\n"), pos(1, 6), pos(3, 2), "f() {\n\treturn 1\n}"},
		{"non-ASCII on one line", "s := \"héllo, 世界\"\n", pos(1, 7), pos(1, 16), "héllo, 世界"},
		{"non-ASCII over lines", "// 😀 é\nx := \"世\"\n", pos(1, 4), pos(2, 8), "😀 é\nx := \"世"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := source(t, c.content).text(dialog.Selection{Start: c.from, End: c.to})
			if got != c.want {
				t.Errorf("text(%v-%v) = %q, want %q", c.from, c.to, got, c.want)
			}
		})
	}
}

func pos(line, col int) dialog.Position { return dialog.Position{Line: line, Col: col} }
