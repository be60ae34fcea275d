package dialog_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"dialogfarm/dialog"
)

const okConfig = `{"id":"%s","repo":"r","file":"f.go","trigger":"panel","instruction":"free_text","turns":[{"query":"q"}]}`

func config(id string) string { return strings.Replace(okConfig, "%s", id, 1) }

// TestReadConfigsOversizeLine: a line over the limit is an error naming
// its line and size; the lines before and after it still run.
func TestReadConfigsOversizeLine(t *testing.T) {
	huge := `{"id":"huge","repo":"r","file":"f.go","trigger":"panel","instruction":"free_text","turns":[{"query":"` +
		strings.Repeat("x", dialog.MaxConfigLine) + `"}]}`
	input := config("a") + "\n" + huge + "\n" + config("b") + "\n" + config("c")
	got, err := dialog.ReadConfigs(strings.NewReader(input), "configs.jsonl")
	var ids []string
	for _, c := range got {
		ids = append(ids, c.ID)
	}
	if diff := cmp.Diff([]string{"a", "b", "c"}, ids); diff != "" {
		t.Errorf("configs read (-want +got):\n%s", diff)
	}
	var fe *dialog.FieldError
	if !errors.As(err, &fe) || fe.Line != 2 || fe.File != "configs.jsonl" ||
		!strings.HasPrefix(err.Error(), "configs.jsonl:2: line is 16777") || !strings.Contains(err.Error(), "16 MiB") {
		t.Errorf("err = %v, want configs.jsonl:2 over the limit", err)
	}
}

func TestLineReader(t *testing.T) {
	input := "short\n" + strings.Repeat("y", 200_000) + "\n\nend"
	lr := dialog.NewLineReader(strings.NewReader(input), 100_000)
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

// TestReadJSONLTornLastLine: a killed writer's partial last line is
// skipped and reported; a bad line elsewhere, or a complete last line
// without its newline, is not torn.
func TestReadJSONLTornLastLine(t *testing.T) {
	cases := []struct {
		name, input string
		lines       []int
		torn        bool
	}{
		{"whole", "{\"a\":1}\n{\"a\":2}\n", []int{1, 2}, false},
		{"torn last line", "{\"a\":1}\n{\"a\":2}\n{\"a\":", []int{1, 2}, true},
		{"last line without newline", "{\"a\":1}\n{\"a\":2}", []int{1, 2}, false},
		{"blank lines", "\n{\"a\":1}\n\n", []int{2}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var lines []int
			torn, err := dialog.ReadJSONL(strings.NewReader(c.input), func(n int, _ []byte) error {
				lines = append(lines, n)
				return nil
			})
			if err != nil || torn != c.torn || !cmp.Equal(lines, c.lines) {
				t.Errorf("lines %v torn %v err %v; want %v torn %v", lines, torn, err, c.lines, c.torn)
			}
		})
	}
	// A bad line that is not last goes to fn, which decides.
	_, err := dialog.ReadJSONL(strings.NewReader("{\"a\":\n{\"a\":2}\n"), func(n int, b []byte) error {
		if n == 1 {
			return errors.New("bad line 1")
		}
		return nil
	})
	if err == nil || err.Error() != "bad line 1" {
		t.Errorf("err = %v", err)
	}
}
