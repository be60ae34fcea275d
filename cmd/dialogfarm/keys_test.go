package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"

	"dialogfarm/internal/llmtest"
)

// TestKeyRulesRefuse runs the judge command with keys a config file or
// environment variables alone would send where they must not go, and
// checks each is refused before any model is called, naming the variable
// and why.
func TestKeyRulesRefuse(t *testing.T) {
	up := llmtest.New(t, func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: `{"score": 5, "reason": "ok"}`} })
	in := fixtureDialogues(t)
	judgeArgs := func(extra ...string) []string {
		return append([]string{"judge", "--in", in, "--out", filepath.Join(t.TempDir(), "j.jsonl")}, extra...)
	}
	endpoint := func(url, keyEnv, more string) string {
		return writePoolYAML(t, "judge:\n  endpoint: {base_url: \""+url+"\", model: j, api_key_env: "+keyEnv+more+"}\n")
	}
	byEnv := map[string]string{"DIALOGFARM_JUDGE_ENDPOINT_MODEL": "j", "DIALOGFARM_JUDGE_ENDPOINT_BASE_URL": up.URL}
	with := func(m map[string]string, kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want []string
	}{
		{"a cloud credential from the file", judgeArgs("--config", endpoint("https://evil.example/v1", "AWS_SECRET_ACCESS_KEY", "")), nil,
			[]string{"AWS_SECRET_ACCESS_KEY is a credential of AWS, not a model key", "allow-key-env"}},
		{"another provider's key", judgeArgs("--config", endpoint("https://evil.example/v1", "OPENAI_API_KEY", "")), nil,
			[]string{"OPENAI_API_KEY is a key of OpenAI, sent only to openai.com, not to evil.example"}},
		{"HOME from environment variables alone", judgeArgs(), with(byEnv, "DIALOGFARM_JUDGE_ENDPOINT_API_KEY_ENV", "HOME"),
			[]string{"api_key_env HOME does not name an API credential"}},
		{"the exemption from an environment variable", judgeArgs(),
			with(byEnv, "DIALOGFARM_JUDGE_ENDPOINT_API_KEY_ENV", "HOME", "DIALOGFARM_JUDGE_ENDPOINT_ALLOW_KEY_ENV", "true"),
			[]string{"DIALOGFARM_JUDGE_ENDPOINT_ALLOW_KEY_ENV", "config file only"}},
		{"the allow list from an environment variable", judgeArgs(),
			with(byEnv, "DIALOGFARM_JUDGE_ENDPOINT_API_KEY_ENV", "HOME", "DIALOGFARM_ALLOW_KEY_ENV", "HOME"),
			[]string{"DIALOGFARM_ALLOW_KEY_ENV", "config file only"}},
		{"the exemption from --set", judgeArgs("--config", endpoint(up.URL, "HOME", ""), "--set", "judge.endpoint.allow_key_env=true"), nil,
			[]string{"--set judge.endpoint.allow_key_env=true", "allow_key_env is set in the config file only"}},
		{"plain http to another host", judgeArgs("--config", endpoint("http://10.255.255.1:9/v1", "GPU_BOX_KEY", "")), map[string]string{"GPU_BOX_KEY": "sk-x"},
			[]string{"base_url http://10.255.255.1:9/v1 is plain http to 10.255.255.1, not a loopback host", "allow_insecure: true"}},
		{"the stage model's key", []string{"analyze", "--logs", "../../analyst/testdata/logs.jsonl", "--out", filepath.Join(t.TempDir(), "p.yaml"),
			"--model-base-url", up.URL, "--model", "m", "--api-key-env", "SHELL"}, nil,
			[]string{"member classifier", "api_key_env SHELL does not name an API credential"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), c.args, &stdout, &stderr)
			if err == nil {
				t.Fatalf("dialogfarm %s succeeded, want an error", strings.Join(c.args, " "))
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
	if n := len(up.Requests()); n > 0 {
		t.Errorf("the upstream was called %d times by commands whose key was refused", n)
	}
}

// TestKeyRulesAllowedByTheFile checks the config file's exemptions: a
// member's allow_key_env sends the variable it names, and the top-level
// allow-insecure-hosts lets a key go over plain http to the host listed.
func TestKeyRulesAllowedByTheFile(t *testing.T) {
	up := llmtest.New(t, func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: `{"score": 4, "reason": "ok"}`} })
	t.Setenv("ODD_NAME", "sk-odd-name-value")
	cfg := writePoolYAML(t, "judge:\n  endpoint: {base_url: \""+up.URL+"\", model: j, api_key_env: ODD_NAME, allow_key_env: true}\n")
	if _, err := runPoolCLI(t, "judge", "--config", cfg, "--in", fixtureDialogues(t), "--out", filepath.Join(t.TempDir(), "j.jsonl")); err != nil {
		t.Fatal(err)
	}
	sent := 0
	for _, r := range up.Requests() {
		if r.Header.Get("Authorization") == "Bearer sk-odd-name-value" {
			sent++
		}
	}
	if sent == 0 {
		t.Errorf("allow_key_env: true: the key was not sent (%d requests)", len(up.Requests()))
	}

	t.Setenv("GPU_BOX_KEY", "sk-gpu")
	dir := t.TempDir()
	file := filepath.Join(dir, "dialogfarm.yaml")
	text := "allow-insecure-hosts: [\"10.255.255.1:9\"]\njudge:\n  endpoint: {base_url: \"http://10.255.255.1:9/v1\", model: j, api_key_env: GPU_BOX_KEY}\n"
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	a := parsedApp(t, []string{"judge", "--config", file, "--in", "x", "--out", "y"})
	s, err := a.loadPoolSettings("")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.resolveKeys(false); err != nil {
		t.Fatalf("allow-insecure-hosts lists the host: %v", err)
	}
	if _, _, err := newJudge(s, nil, nil, zaptest.NewLogger(t)); err != nil {
		t.Errorf("allow-insecure-hosts lists the host: %v", err)
	}
}

// TestPoolFileAllowLists: a --pool file's own allow-insecure-hosts counts
// for its members; without it, the same member is refused.
func TestPoolFileAllowLists(t *testing.T) {
	t.Setenv("GPU_BOX_KEY", "sk-gpu")
	member := "pool:\n  members: [{name: box, base_url: \"http://10.255.255.1:9/v1\", model: m, api_key_env: GPU_BOX_KEY}]\n"
	for _, c := range []struct {
		text    string
		allowed bool
	}{
		{member, false},
		{"allow-insecure-hosts: [10.255.255.1]\n" + member, true},
	} {
		s, err := poolTestApp(t).loadPoolSettings(writePoolYAML(t, c.text))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.resolveKeys(true); (err == nil) != c.allowed {
			t.Errorf("%q: resolve keys: %v, want allowed %v", c.text, err, c.allowed)
		}
	}
}
