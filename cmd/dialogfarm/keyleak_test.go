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

// TestKeyNeverLeaksFromTheBinary runs the built binary's model-using
// commands that need no editor — analyze (classifier), configs (query
// writer) and judge (judge model) — against upstreams that echo the bearer
// token in their 500, 429 and 401 bodies. The key reaches every upstream
// but appears nowhere in stdout, stderr (the logs) or any file the
// commands write.
func TestKeyNeverLeaksFromTheBinary(t *testing.T) {
	const key = "sk-live-BinaryEcho0123456789abcdefSECRET"
	dir := t.TempDir()
	bin := buildBinary(t, dir)
	up := llmtest.New(t, llmtest.EchoKey)
	model := []string{"--model-base-url", up.URL, "--model", "m1", "--api-key-env", "ECHO_TEST_KEY", "-v"}
	judged := filepath.Join(dir, "judged.jsonl")
	in := fixtureDialogues(t)
	cfg := writePoolYAML(t, "pool:\n  retry: {base_delay: 1ms, max_delay: 2ms}\n"+
		"judge:\n  endpoint: {base_url: \""+up.URL+"\", model: judge-9, api_key_env: ECHO_TEST_KEY}\n")
	plan := filepath.Join(dir, "plan.json")
	runs := []struct {
		name    string
		args    []string
		wantErr bool
	}{
		{"analyze", append([]string{"analyze", "--logs", "../../analyst/testdata/logs.jsonl", "--out", filepath.Join(dir, "p.yaml")}, model...), true},
		{"plan", []string{"plan", "--profile", "default", "--n", "4", "--out", plan}, false},
		{"configs", append([]string{"configs", "--plan", plan, "--repos", "../../examples/sample-repo", "--out", filepath.Join(dir, "configs.jsonl")}, model...), true},
		{"judge", []string{"judge", "--config", cfg, "--in", in, "--out", judged, "-v"}, false},
	}
	var all bytes.Buffer
	for _, r := range runs {
		cmd := exec.Command(bin, r.args...)
		cmd.Env = append(os.Environ(), "ECHO_TEST_KEY="+key)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if (err != nil) != r.wantErr {
			t.Errorf("%s: exit %v (want failure: %v)\nstdout:\n%s\nstderr:\n%s", r.name, err, r.wantErr, stdout.String(), stderr.String())
		}
		for name, b := range map[string][]byte{"stdout": stdout.Bytes(), "stderr": stderr.Bytes()} {
			if bytes.Contains(b, []byte(key)) {
				t.Errorf("%s: the key is in %s:\n%s", r.name, name, b)
			}
		}
		all.Write(stderr.Bytes())
		// Each command that calls a model says first which variable goes
		// to which host, by name.
		if route := "key: $ECHO_TEST_KEY → 127.0.0.1 (http)"; r.name != "plan" && !strings.Contains(stderr.String(), route) {
			t.Errorf("%s: stderr does not say %q:\n%s", r.name, route, stderr.String())
		}
		if r.name == "judge" && !strings.Contains(stdout.String(), "verdicts fell back to the rules because the judge model failed") {
			t.Errorf("judge does not report its rules-only fallbacks:\n%s", stdout.String())
		}
	}
	n := 0
	for _, req := range up.Requests() {
		if req.Header.Get("Authorization") == "Bearer "+key {
			n++
		}
	}
	if n < 9 {
		t.Errorf("the upstream saw the key in %d requests; the test needs every command to have sent it", n)
	}
	if !strings.Contains(all.String(), "[redacted]") {
		t.Error("stderr shows no redacted upstream error: the commands never logged one")
	}
	if b, err := os.ReadFile(judged); err != nil || !bytes.Contains(b, []byte(`"judge_error"`)) {
		t.Errorf("judged dialogues hold no judge_error (rules-only fallback): %v", err)
	}
	for _, root := range []string{dir, filepath.Dir(in), filepath.Dir(cfg)} {
		err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || path == bin {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if bytes.Contains(b, []byte(key)) {
				t.Errorf("the key is in %s", path)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// The CLI's logger cuts every key an --*api-key-env flag names from every
// line, even from text that never passed through the gateway: here the
// key is part of a log file's name, which analyze logs with its unusable
// lines.
func TestLogLinesCutKeys(t *testing.T) {
	const key = "sk-live-LogCore0123456789abcdefSECRET"
	t.Setenv("LOG_TEST_KEY", key)
	data, err := os.ReadFile("../../analyst/testdata/logs.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs-"+key+".jsonl")
	if err := os.WriteFile(logs, data, 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	err = run(t.Context(), []string{"analyze", "--logs", logs, "--out", filepath.Join(dir, "p.yaml"), "--api-key-env", "LOG_TEST_KEY"}, &stdout, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), "unusable log lines") || !strings.Contains(stderr.String(), "logs-[redacted].jsonl") {
		t.Errorf("stderr does not show the log line with the name cut:\n%s", stderr.String())
	}
	if strings.Contains(stderr.String(), key) {
		t.Errorf("a log line holds the key:\n%s", stderr.String())
	}
}
