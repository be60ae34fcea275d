package runfiles

import (
	"os"
	"path/filepath"
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
