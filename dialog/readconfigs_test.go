package dialog_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"dialogfarm/dialog"
	"dialogfarm/internal/jsonl"
)

const okConfig = `{"id":"%s","repo":"r","file":"f.go","trigger":"panel","instruction":"free_text","turns":[{"query":"q"}]}`

func config(id string) string { return strings.Replace(okConfig, "%s", id, 1) }

// xs is an endless reader of 'x'.
type xs struct{}

func (xs) Read(p []byte) (int, error) {
	if len(p) > 0 {
		p[0] = 'x'
		for n := 1; n < len(p); n *= 2 {
			copy(p[n:], p[:n])
		}
	}
	return len(p), nil
}

// TestReadConfigsOversizeLine: a line over the limit is an error naming
// its line and size; the lines before and after it still run.
func TestReadConfigsOversizeLine(t *testing.T) {
	huge := io.MultiReader(
		strings.NewReader(config("a")+"\n"+`{"id":"huge","repo":"r","file":"f.go","trigger":"panel","instruction":"free_text","turns":[{"query":"`),
		io.LimitReader(xs{}, jsonl.MaxLine),
		strings.NewReader(`"}]}`+"\n"+config("b")+"\n"+config("c")))
	got, err := dialog.ReadConfigs(huge, "configs.jsonl")
	var ids []string
	for _, c := range got {
		ids = append(ids, c.ID)
	}
	if diff := cmp.Diff([]string{"a", "b", "c"}, ids); diff != "" {
		t.Errorf("configs read (-want +got):\n%s", diff)
	}
	var fe *dialog.FieldError
	if !errors.As(err, &fe) || fe.Line != 2 || fe.File != "configs.jsonl" ||
		!strings.HasPrefix(err.Error(), "configs.jsonl:2: line too long: 671") || !strings.Contains(err.Error(), "64 MiB") {
		t.Errorf("err = %v, want configs.jsonl:2 over the limit", err)
	}
}
