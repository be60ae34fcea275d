package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"dialogfarm/internal/llmtest"
)

// TestDriveKeyNeverLeaks drives one config with the built binary, the real
// editor and browser, and `--responder openai` pointed at an upstream that
// echoes the bearer token in its 500, 429 and 401 bodies. The turn fails
// (the plugin shows the capture endpoint's error in its bubble, and the
// failure's dom.html and screenshot are written), yet the key is nowhere in
// the run folder — records, exchanges.jsonl, dom.html, logs — nor in
// stdout or stderr. It runs once per browser backend (--browser), with one
// attempt: the farm's retries drive the same failure again on a fresh
// window, which only costs time here.
func TestDriveKeyNeverLeaks(t *testing.T) {
	const key = "sk-live-DriveEcho0123456789abcdefSECRET"
	root := editorRoot(t)
	tmp := t.TempDir()
	bin := buildBinary(t, tmp)
	demo, err := os.ReadFile(filepath.Join(root, "examples", "demo-configs.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(demo), "\n")
	configs := filepath.Join(tmp, "configs.jsonl")
	if err := os.WriteFile(configs, []byte(strings.ReplaceAll(first, `"repo":"examples/`, `"repo":"`+root+`/examples/`)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, backend := range []string{"rod", "chromedp"} {
		t.Run(backend, func(t *testing.T) {
			driveKeyNeverLeaks(t, bin, root, configs, filepath.Join(tmp, "run-"+backend), backend, key)
		})
	}
}

func driveKeyNeverLeaks(t *testing.T, bin, root, configs, out, backend, key string) {
	up := llmtest.New(t, llmtest.EchoKey)
	cmd := exec.Command(bin, "drive", "--root", root, "--configs", configs, "--out", out, "--answer-timeout", "2m", "--browser", backend, "--attempts", "1",
		"--responder", "openai", "--model-base-url", up.URL, "--model", "gpt-x", "--api-key-env", "ECHO_DRIVE_KEY")
	cmd.Env = append(os.Environ(), "ECHO_DRIVE_KEY="+key)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err == nil {
		t.Fatalf("drive succeeded against an upstream that only fails:\n%s", stdout.String())
	}
	// go-rod's DevTools port is written to the profile; chromedp's pipe
	// has none: the file shows which backend ran.
	_, err := os.Stat(filepath.Join(out, "browser", "chromium-profile", "DevToolsActivePort"))
	if port := err == nil; port != (backend == "rod") {
		t.Errorf("--browser %s: DevToolsActivePort written: %v", backend, port)
	}
	if n := len(up.Requests()); n == 0 || up.Requests()[0].Header.Get("Authorization") != "Bearer "+key {
		t.Fatalf("the upstream got %d requests; the test needs the key sent:\nstderr:\n%s", n, stderr.String())
	}
	for name, b := range map[string][]byte{"stdout": stdout.Bytes(), "stderr": stderr.Bytes()} {
		if bytes.Contains(b, []byte(key)) {
			t.Errorf("the key is in %s", name)
		}
	}
	doms := 0
	err = filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err // folders, and sockets code-server leaves in editor/tmp
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(key)) {
			t.Errorf("the key is in %s", path)
		}
		if d.Name() == "dom.html" && bytes.Contains(b, []byte("[redacted]")) {
			doms++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if doms == 0 {
		t.Errorf("no dom.html shows the plugin's (redacted) error bubble; the DOM check proves nothing\nstderr:\n%s", stderr.String())
	}
}
