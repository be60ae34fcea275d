package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
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

// built is the dialogfarm command built once for the whole test binary
// (a build links for 5-20 s here; nine tests run it); TestMain removes
// its folder.
var built struct {
	once sync.Once
	dir  string
	err  error
}

// buildBinary puts the dialogfarm command, as a user runs it, into dir
// (a link to the one build of this test process).
func buildBinary(t *testing.T, dir string) string {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "dialogfarm-bin-"); built.err != nil {
			return
		}
		if out, err := exec.Command("go", "build", "-o", filepath.Join(built.dir, "dialogfarm"), ".").CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	bin := filepath.Join(dir, "dialogfarm")
	if err := os.Link(filepath.Join(built.dir, "dialogfarm"), bin); err != nil {
		data, err := os.ReadFile(filepath.Join(built.dir, "dialogfarm"))
		if err == nil {
			err = os.WriteFile(bin, data, 0o755)
		}
		if err != nil {
			t.Fatalf("copy the dialogfarm binary: %v", err)
		}
	}
	return bin
}

// twoCoderConfig writes a dialogfarm.yaml into dir with a pool of two
// coders and a judge, all on the fake model at url, and returns its path.
func twoCoderConfig(t *testing.T, dir, url string) string {
	t.Helper()
	path := filepath.Join(dir, "dialogfarm.yaml")
	yaml := "pool:\n  members:\n" +
		"    - {name: coder-a, base_url: " + url + ", model: coder-a}\n" +
		"    - {name: coder-b, base_url: " + url + ", model: coder-b}\n" +
		"judge:\n  endpoint: {base_url: " + url + ", model: judge}\n"
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
