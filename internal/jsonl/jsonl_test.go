package jsonl_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"dialogfarm/internal/jsonl"
)

func TestReader(t *testing.T) {
	input := "short\n" + strings.Repeat("y", 200_000) + "\n\nend"
	lr := jsonl.NewReader(strings.NewReader(input))
	lr.Max = 100_000
	type got struct {
		N, Size               int
		Data                  string
		TooLong, Unterminated bool
	}
	var lines []got
	for {
		l, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, got{l.N, l.Size, string(l.Data), l.TooLong, l.Unterminated})
	}
	want := []got{
		{1, 5, "short", false, false},
		{2, 200_000, "", true, false},
		{3, 0, "", false, false},
		{4, 3, "end", false, true},
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
}

// TestEachLogTornLastLine: a killed writer's partial last line is skipped
// and reported by EachLog, and is an error for Each; a bad line elsewhere,
// or a complete last line without its newline, is not torn.
func TestEachLogTornLastLine(t *testing.T) {
	cases := []struct {
		name, input string
		lines       []int
		torn        bool
	}{
		{"whole", "{\"a\":1}\n{\"a\":2}\n", []int{1, 2}, false},
		{"torn last line", "{\"a\":1}\n{\"a\":2}\n{\"a\":", []int{1, 2}, true},
		{"last line without newline", "{\"a\":1}\n{\"a\":2}", []int{1, 2}, false},
		{"blank lines", "\n{\"a\":1}\n\n  ", []int{2}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var lines []int
			torn, err := jsonl.EachLog(strings.NewReader(c.input), "d.jsonl", func(n int, _ []byte) error {
				lines = append(lines, n)
				return nil
			})
			if err != nil || torn != c.torn || !cmp.Equal(lines, c.lines) {
				t.Errorf("lines %v torn %v err %v; want %v torn %v", lines, torn, err, c.lines, c.torn)
			}
		})
	}
	// A bad line that is not last goes to fn, whose error names the line.
	_, err := jsonl.EachLog(strings.NewReader("{\"a\":\n{\"a\":2}\n"), "d.jsonl", func(n int, b []byte) error {
		if n == 1 {
			return errors.New("bad line")
		}
		return nil
	})
	if err == nil || err.Error() != "d.jsonl:1: bad line" {
		t.Errorf("err = %v", err)
	}
}

func TestRead(t *testing.T) {
	dir := t.TempDir()
	type row struct {
		A int `json:"a"`
	}
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ok := write("ok.jsonl", "{\"a\":1}\n\n{\"a\":2}\n{\"a\":")
	if _, err := jsonl.Read[row](ok); err == nil || !strings.Contains(err.Error(), "ok.jsonl:4: ") {
		t.Errorf("Read of a cut file: err = %v, want the error of line 4", err)
	}
	rows, torn, err := jsonl.ReadLog[row](ok)
	if err != nil || !torn || !cmp.Equal(rows, []row{{1}, {2}}) {
		t.Errorf("ReadLog = %v torn %v err %v", rows, torn, err)
	}
	bad := write("bad.jsonl", "{\"a\":1}\n{\"a\":\"x\"}\n")
	_, err = jsonl.Read[row](bad)
	var le *jsonl.Error
	if !errors.As(err, &le) || le.Line != 2 || le.File != bad {
		t.Errorf("err = %v, want line 2 of %s", err, bad)
	}
	if _, err := jsonl.Read[row](filepath.Join(dir, "missing.jsonl")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: err = %v, want os.ErrNotExist", err)
	}
}
