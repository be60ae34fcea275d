package redact

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSanitiseCorpus(t *testing.T) {
	ctx := context.Background()
	dst := filepath.Join(t.TempDir(), "workspace", "corpus")
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		t.Fatal(err)
	}
	r := NewRedactor(testDetector(t))
	c, err := Sanitise(ctx, r, "testdata/corpus", dst, "")
	if err != nil {
		t.Fatal(err)
	}
	ps := readPlanted(t)
	if c.Stats.Secrets != len(ps) || c.Files != 10 || c.Binary != 0 {
		t.Errorf("copy %+v, want %d secrets in 10 files", c, len(ps))
	}
	// Same tree, same line counts, no planted value left.
	walkText(t, "testdata/corpus", func(rel, orig string) {
		data, err := os.ReadFile(filepath.Join(dst, rel))
		if err != nil {
			t.Fatalf("copy lacks %s: %v", rel, err)
		}
		got := string(data)
		if strings.Count(got, "\n") != strings.Count(orig, "\n") {
			t.Errorf("%s: %d lines, original has %d", rel, strings.Count(got, "\n"), strings.Count(orig, "\n"))
		}
		for _, p := range ps {
			if strings.Contains(got, p.Value) {
				t.Errorf("%s: planted %s left in the copy", rel, p.Kind)
			}
		}
		// Lines without a secret are unchanged.
		ol, gl := strings.Split(orig, "\n"), strings.Split(got, "\n")
		for i := range ol {
			if i < len(gl) && ol[i] != gl[i] && !strings.Contains(gl[i], "REDACTED_") && gl[i] != "" {
				t.Errorf("%s:%d changed without a placeholder: %q", rel, i+1, gl[i])
			}
		}
	})
	n := 0
	walkText(t, dst, func(string, string) { n++ })
	if n != c.Files {
		t.Errorf("copy has %d files, want %d", n, c.Files)
	}

	// Resume: a fresh Redactor rescans, keeps the copy and learns the same
	// placeholders.
	stamp := filepath.Join(dst, "app", "cloud.go")
	before, _ := os.ReadFile(stamp)
	r2 := NewRedactor(testDetector(t))
	c2, err := Sanitise(ctx, r2, "testdata/corpus", dst, c.Digest)
	if err != nil {
		t.Fatal(err)
	}
	if c2.Digest != c.Digest || c2.Stats.Secrets != c.Stats.Secrets {
		t.Errorf("resume: %+v, first %+v", c2, c)
	}
	after, _ := os.ReadFile(stamp)
	if string(after) != string(before) {
		t.Error("resume rewrote the copy")
	}
	q, _ := r2.Redact("why does " + ps[0].Value + " fail?")
	file, _ := os.ReadFile(filepath.Join(dst, ps[0].File))
	if !strings.Contains(string(file), strings.Fields(q)[2]+"\"") {
		t.Errorf("query placeholder %q is not the one in the copy", strings.Fields(q)[2])
	}

	// A changed source is refused.
	src := filepath.Join(t.TempDir(), "src")
	if err := os.MkdirAll(src, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "a.py"), []byte("x = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Sanitise(ctx, r2, src, dst, c.Digest); !errors.Is(err, ErrSourceChanged) {
		t.Errorf("changed source: %v, want ErrSourceChanged", err)
	}
}

func TestRedactionsFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "redactions.json")
	rs, err := ReadRedactions(path)
	if err != nil || len(rs.Repos) != 0 {
		t.Fatalf("missing file: %+v, %v", rs, err)
	}
	rs.Put(Copy{Source: "/a", Dir: "/w/a", Stats: Stats{Secrets: 2, PerRule: map[string]int{"jwt": 2}}})
	rs.Put(Copy{Source: "/a", Dir: "/w/a", Stats: Stats{Secrets: 1, PerRule: map[string]int{"jwt": 1}}})
	rs.SetQueries(Stats{Secrets: 1, PerRule: map[string]int{"github-pat": 1}})
	if err := WriteRedactions(path, rs); err != nil {
		t.Fatal(err)
	}
	got, err := ReadRedactions(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Repos) != 1 || got.Total.Secrets != 2 || got.Total.PerRule["jwt"] != 1 || !got.IsCopy("/w/a") {
		t.Errorf("read back %+v", got)
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, %v", info.Mode(), err)
	}
}

// A repository's .vscode settings (which could re-enable automatic tasks)
// and .git stay out of the copy; everything else is copied.
func TestSanitiseLeavesOutWorkspaceSettings(t *testing.T) {
	src := t.TempDir()
	for rel, data := range map[string]string{
		".vscode/settings.json": `{"task.allowAutomaticTasks": "on"}`,
		".vscode/tasks.json":    `{"tasks": [{"runOptions": {"runOn": "folderOpen"}}]}`,
		".git/config":           "[core]\n",
		"src/.vscodeignore":     "x\n",
		"main.go":               "package main\n",
	} {
		p := filepath.Join(src, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	dst := filepath.Join(t.TempDir(), "copy")
	c, err := Sanitise(context.Background(), NewRedactor(testDetector(t)), src, dst, "")
	if err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string]bool{".vscode": false, ".git": false, "main.go": true, "src/.vscodeignore": true} {
		_, err := os.Stat(filepath.Join(dst, rel))
		if (err == nil) != want {
			t.Errorf("%s in the copy: %v, want %v", rel, err == nil, want)
		}
	}
	if c.Files != 2 {
		t.Errorf("%d files copied, want 2", c.Files)
	}
}
