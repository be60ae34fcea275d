package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// editorRoot is the checkout's root for a test that drives the real
// editor; it fails the test when `make setup` has not installed it.
func editorRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "tools", "code-server.sh")); err != nil {
		t.Fatalf("code-server is not installed (%v): run `make setup`", err)
	}
	return root
}

// shortTempDir is a temporary folder with a short path (Chromium's sockets
// live under a run folder, and t.TempDir's path is too long for them). It
// stays when the test fails, for its records, logs and failure artifacts.
func shortTempDir(t *testing.T, prefix string) string {
	t.Helper()
	tmp, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("folder kept: %s", tmp)
			return
		}
		os.RemoveAll(tmp)
	})
	return tmp
}

// buildBinary builds the dialogfarm command into dir, as a user runs it.
func buildBinary(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "dialogfarm")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
