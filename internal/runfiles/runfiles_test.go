package runfiles

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.Mode().Perm()
}

func TestModes(t *testing.T) {
	base := t.TempDir()
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(base, "run", "failures", "c1")
	if err := MkdirAll(run); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Join(base, "run"), filepath.Join(base, "run", "failures"), run} {
		if m := mode(t, d); m != 0o700 {
			t.Errorf("%s: mode %o, want 700", d, m)
		}
	}
	if m := mode(t, base); m != 0o755 {
		t.Errorf("an existing parent was changed: %o", m)
	}

	// Files left by an older version are narrowed; their folder is left as
	// it is.
	old := filepath.Join(base, "old")
	if err := os.Mkdir(old, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := MkdirAll(old); err != nil {
		t.Fatal(err)
	}
	if m := mode(t, old); m != 0o755 {
		t.Errorf("an existing folder was changed: mode %o", m)
	}
	f1, f2 := filepath.Join(old, "a.json"), filepath.Join(old, "b.jsonl")
	for _, p := range []string{f1, f2} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteFile(f1, []byte("new")); err != nil {
		t.Fatal(err)
	}
	f, err := OpenAppend(f2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("y"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	fresh, err := OpenAppend(filepath.Join(old, "c.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	fresh.Close()
	for _, p := range []string{f1, f2, filepath.Join(old, "c.jsonl")} {
		if m := mode(t, p); m != 0o600 {
			t.Errorf("%s: mode %o, want 600", p, m)
		}
	}
	if b, _ := os.ReadFile(f2); string(b) != "xy" {
		t.Errorf("append: %q", b)
	}
}

// TestWriteAtomic: the file is replaced whole with FileMode and no
// temporary file is left; writers of one path at the same time each
// replace it whole (with a fixed temporary name, one writer's rename finds
// its file gone or renames another's half-written one).
func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "plan.json")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteAtomic(path, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Errorf("content %q", b)
	}
	if m := mode(t, path); m != 0o600 {
		t.Errorf("mode %o, want 600", m)
	}

	const writers = 8
	bodies := make([][]byte, writers)
	errs := make(chan error, writers)
	for i := range bodies {
		bodies[i] = []byte(strings.Repeat(string(rune('a'+i)), 1<<20))
		go func() { errs <- WriteAtomic(path, bodies[i]) }()
	}
	for range writers {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	got, _ := os.ReadFile(path)
	if !slices.ContainsFunc(bodies, func(b []byte) bool { return bytes.Equal(b, got) }) {
		t.Errorf("the file is no writer's whole body (%d bytes)", len(got))
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("folder holds %d entries, want only plan.json: %v", len(entries), entries)
	}

	if err := WriteAtomic(filepath.Join(dir, "missing", "x.json"), nil); err == nil || !strings.Contains(err.Error(), "missing/x.json") {
		t.Errorf("write into a missing folder: err = %v", err)
	}
}
