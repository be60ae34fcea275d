package golden

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that keeps what a check reports.
type recorder struct {
	testing.TB
	errors []string
	fatal  bool
}

func (r *recorder) Helper()                   {}
func (r *recorder) Errorf(f string, a ...any) { r.errors = append(r.errors, f) }
func (r *recorder) Fatalf(f string, a ...any) { r.fatal = true; r.errors = append(r.errors, f) }
func (r *recorder) Fatal(a ...any)            { r.fatal = true }

func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "testdata", "out.golden")
	r := &recorder{TB: t}
	Check(r, path, []byte("a\n"))
	if !r.fatal {
		t.Error("a missing golden file passed")
	}

	*update = true
	r = &recorder{TB: t}
	Check(r, path, []byte("a\nb\n"))
	*update = false
	if b, _ := os.ReadFile(path); string(b) != "a\nb\n" || len(r.errors) > 0 {
		t.Errorf("-update wrote %q, reported %v", b, r.errors)
	}

	r = &recorder{TB: t}
	Check(r, path, []byte("a\nb\n"))
	if len(r.errors) > 0 {
		t.Errorf("equal output reported %v", r.errors)
	}
	r = &recorder{TB: t}
	Check(r, path, []byte("a\nc\n"))
	if len(r.errors) != 1 || !strings.Contains(r.errors[0], "differs") {
		t.Errorf("a different output reported %v", r.errors)
	}
}
