package pool

import (
	"errors"
	"math"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

func TestKeyRules(t *testing.T) {
	for _, c := range []struct {
		env, url string
		allowEnv bool
		allowTLS bool
		refused  string // "" when sent
	}{
		{"OPENAI_API_KEY", "https://api.openai.com/v1", false, false, ""},
		{"HF_TOKEN", "https://router.huggingface.co/v1", false, false, ""},
		{"VLLM_API_KEY", "http://127.0.0.1:8000/v1", false, false, ""},
		{"MY_LLM_SECRET", "http://localhost:8000/v1", false, false, ""},
		{"LOCAL_KEY", "http://[::1]:8000/v1", false, false, ""},
		{"AZURE_OPENAI_API_KEY", "https://x.openai.azure.com/openai/v1", false, false, ""},
		{"GITHUB_TOKEN", "https://models.github.ai/inference", false, false, ""},
		{"HOME", "https://api.openai.com/v1", false, false, "HOME does not name an API credential"},
		{"PATH", "http://127.0.0.1:8000/v1", false, false, "PATH does not name an API credential"},
		{"USER", "https://api.openai.com/v1", false, false, "USER does not name an API credential"},
		{"SHELL", "https://api.openai.com/v1", false, false, "SHELL does not name an API credential"},
		{"GOOGLE_APPLICATION_CREDENTIALS", "https://api.openai.com/v1", false, false, "does not name an API credential"},
		{"AWS_SECRET_ACCESS_KEY", "https://evil.example/v1", false, false, "AWS_SECRET_ACCESS_KEY is a credential of AWS, not a model key"},
		{"AZURE_CLIENT_SECRET", "https://evil.example/v1", false, false, "credential of Azure,"},
		{"GITHUB_TOKEN", "https://evil.example/v1", false, false, "GITHUB_TOKEN is a key of GitHub, sent only to models.github.ai"},
		{"NPM_TOKEN", "http://127.0.0.1:8000/v1", false, false, "credential of package registries"},
		{"OPENAI_API_KEY", "https://api.openai.com.evil.example/v1", false, false, "OPENAI_API_KEY is a key of OpenAI, sent only to openai.com, not to api.openai.com.evil.example"},
		{"ANTHROPIC_API_KEY", "https://api.openai.com/v1", false, false, "sent only to anthropic.com"},
		{"HOME", "https://api.openai.com/v1", true, false, ""},
		{"OPENAI_API_KEY", "http://gpu-box.lan:8000/v1", true, false, "plain http to gpu-box.lan"},
		{"GPU_BOX_KEY", "http://10.0.0.5:8000/v1", false, false, "plain http to 10.0.0.5, not a loopback host"},
		{"GPU_BOX_KEY", "http://10.0.0.5:8000/v1", false, true, ""},
		{"", "http://10.0.0.5:8000/v1", false, false, ""}, // no key, nothing to leak
	} {
		m := member("m", c.url)
		m.APIKeyEnv, m.AllowKeyEnv, m.AllowInsecure = c.env, c.allowEnv, c.allowTLS
		read := false
		err := m.ResolveKey(func(string) (string, bool) { read = true; return "sk-x", true })
		if c.refused == "" {
			if err != nil {
				t.Errorf("%s to %s: %v", c.env, c.url, err)
			}
			if err := m.Validate(); err != nil {
				t.Errorf("%s to %s: validate: %v", c.env, c.url, err)
			}
			continue
		}
		if err == nil || !errors.Is(err, ErrKeyPolicy) || !strings.Contains(err.Error(), c.refused) {
			t.Errorf("%s to %s: err = %v, want %q", c.env, c.url, err, c.refused)
		}
		if read {
			t.Errorf("%s to %s: a refused variable was read", c.env, c.url)
		}
		// NewMember refuses it too, for callers that set APIKey themselves.
		m.APIKey = "sk-x"
		if _, err := NewMember(m, DefaultPolicy(), nil, zap.NewNop()); !errors.Is(err, ErrKeyPolicy) {
			t.Errorf("%s to %s: NewMember: %v", c.env, c.url, err)
		}
	}
}

func TestNewMemberSaysWhichVariableGoesWhere(t *testing.T) {
	core, logs := observer.New(zap.InfoLevel)
	cfg := member("coder-a", "https://api.openai.com/v1")
	cfg.APIKeyEnv = "OPENAI_API_KEY"
	if err := cfg.ResolveKey(func(string) (string, bool) { return "sk-route-secret", true }); err != nil {
		t.Fatal(err)
	}
	if _, err := NewMember(cfg, DefaultPolicy(), nil, zap.New(core)); err != nil {
		t.Fatal(err)
	}
	local := member("local", "http://127.0.0.1:8000/v1")
	if _, err := NewMember(local, DefaultPolicy(), nil, zap.New(core)); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, e := range logs.All() {
		lines = append(lines, e.Message+" "+e.ContextMap()["member"].(string))
	}
	want := []string{"key: $OPENAI_API_KEY → api.openai.com (https) coder-a", "key: no key → 127.0.0.1 (http) local"}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("log lines:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

func TestRangesNameFieldAndRange(t *testing.T) {
	cfg := DefaultConfig()
	m := member("a", "http://127.0.0.1:1/v1")
	nan := float32(math.NaN())
	m.Temperature, m.InputPrice, m.MaxTokens, m.RPM = &nan, -1, -3, 2_000_000
	cfg.Members = []MemberConfig{m}
	cfg.Retry.MaxAttempts, cfg.FailingAfter, cfg.Concurrency = 0, -1, 5000
	err := cfg.ValidateRanges()
	for _, want := range []string{
		"retry.max_attempts is 0, want 1 to 100",
		"failing_after is -1, want 0 to 1000",
		"concurrency is 5000, want 0 to 1024",
		"members.0.max_tokens is -3, want 0 to 10000000",
		"rpm is 2000000, want 0 to 1000000",
		"input_price is -1, want 0 to 10000",
		"temperature is NaN, want 0 to 2",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ranges: %v\nlacks %q", err, want)
		}
	}
	if err := DefaultConfig().ValidateRanges(); err != nil {
		t.Errorf("defaults: %v", err)
	}
	if err := DefaultMemberConfig().ValidateRanges(); err != nil {
		t.Errorf("member defaults: %v", err)
	}
}
