package main

// Every model the CLI reaches goes through one gateway, pool.Member: the
// pool's members and the judge (poolconfig.go), the single model of
// --responder openai (a pool of one), and the stage models below (the
// analyst's classifier, configs' query writer, the follow-up writer). So
// they share one retry policy (backoff, Retry-After), the rpm limit, the
// circuit breaker, usage and cost accounting, and key redaction.

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
	"go.uber.org/zap"

	"dialogfarm/configgen"
	"dialogfarm/pool"
)

// defaultModelURL is the base URL of a model named without one.
const defaultModelURL = "https://api.openai.com/v1"

// stageModel is a stage's chat model through the gateway: deterministic
// (temperature 0), one JSON answer per call, the default retry policy and
// breaker. It is nil (no model: templates or keywords) when model is "".
// The key is read now from the variable keyEnv names; an unset or empty
// variable is an error naming it.
func stageModel(name, baseURL, model, keyEnv string, timeout time.Duration, allow keyAllow, limits pool.Limits, log *zap.Logger) (configgen.Model, error) {
	if model == "" {
		return nil, nil
	}
	cfg := pool.DefaultMemberConfig()
	zero := float32(0)
	cfg.Name, cfg.BaseURL, cfg.Model, cfg.APIKeyEnv = name, baseURL, model, keyEnv
	cfg.Temperature, cfg.Stream = &zero, false
	if cfg.BaseURL == "" {
		cfg.BaseURL = defaultModelURL
	}
	if timeout > 0 {
		cfg.Timeout = timeout
	}
	allow.apply(&cfg)
	if err := cfg.ResolveKey(os.LookupEnv); err != nil {
		return nil, err
	}
	policy := pool.DefaultPolicy()
	policy.Limits = limits
	m, err := pool.NewMember(cfg, policy, nil, log.Named(name))
	if err != nil {
		return nil, fmt.Errorf("%s model: %w", name, err)
	}
	return m, nil
}

// onePool is the pool of one member that --responder openai answers from.
// It takes a call from each of the sessions simulators at once (at least
// the member default): with fewer slots the other windows would wait for
// one, idle.
func onePool(baseURL, model, keyEnv, runDir string, sessions int) pool.Config {
	m := pool.DefaultMemberConfig()
	m.Name, m.BaseURL, m.Model, m.APIKeyEnv = "openai", baseURL, model, keyEnv
	m.MaxConcurrency = max(m.MaxConcurrency, sessions)
	if m.BaseURL == "" {
		m.BaseURL = defaultModelURL
	}
	if m.Model == "" {
		m.Model = "gpt-4o-mini"
	}
	cfg := pool.DefaultConfig()
	cfg.Members = []pool.MemberConfig{m}
	cfg.CacheDir = filepath.Join(runDir, cfg.CacheDir)
	return cfg
}

// keyEnvNames are the variables that the command's --*api-key-env flags
// and the api_key_env fields of settings name.
func (a *app) keyEnvNames(cmd *cobra.Command, settings []poolSettings) []string {
	var names []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if strings.HasSuffix(f.Name, "api-key-env") {
			names = append(names, a.v.GetString(flagKey(f.Name)))
		}
	})
	for _, s := range settings {
		for _, m := range s.Pool.Members {
			names = append(names, m.APIKeyEnv)
		}
		if s.JudgeModel != nil {
			names = append(names, s.JudgeModel.APIKeyEnv)
		}
	}
	return slices.DeleteFunc(names, func(n string) bool { return n == "" })
}

// apiKeys are the values of the variables names: the logger cuts them from
// every line, behind the gateway's own redaction.
func apiKeys(names []string) []pool.Secret {
	var keys []pool.Secret
	for _, n := range names {
		if v, ok := os.LookupEnv(n); ok {
			keys = append(keys, pool.Secret(strings.TrimSpace(v)))
		}
	}
	return keys
}

// keyAllow is what the config file's top-level allow-key-env and
// allow-insecure-hosts lists allow beyond the key rules (pool/keys.go), for
// every model a command calls: the variables that may be sent although
// they do not look like a credential of their host, and the hosts
// ("host" or "host:port") a key may reach over plain http. Only the config
// file sets them: they are no flags, so no variable does.
type keyAllow struct {
	KeyEnvs       []string
	InsecureHosts []string
}

// apply sets the member's exemptions that the lists give it.
func (k keyAllow) apply(m *pool.MemberConfig) {
	if m.APIKeyEnv != "" && slices.Contains(k.KeyEnvs, m.APIKeyEnv) {
		m.AllowKeyEnv = true
	}
	if u, err := url.Parse(m.BaseURL); err == nil && (slices.Contains(k.InsecureHosts, u.Host) || slices.Contains(k.InsecureHosts, u.Hostname())) {
		m.AllowInsecure = true
	}
}

// applyAll applies the lists to every member and the judge model of s.
func (k keyAllow) applyAll(s *poolSettings) {
	for i := range s.Pool.Members {
		k.apply(&s.Pool.Members[i])
	}
	if s.JudgeModel != nil {
		k.apply(s.JudgeModel)
	}
}

// readKeyAllow reads the allow lists from the config file in v (read, with
// no environment bound yet).
func readKeyAllow(v *viper.Viper, path string) (keyAllow, error) {
	var k keyAllow
	for key, dst := range map[string]*[]string{allowKeyEnvKey: &k.KeyEnvs, allowInsecureKey: &k.InsecureHosts} {
		if !v.InConfig(key) {
			continue
		}
		vals, _, err := configValues(v.Get(key))
		if err != nil {
			return k, fmt.Errorf("config file %s: key %s: %w", path, key, err)
		}
		*dst = slices.DeleteFunc(vals, func(s string) bool { return s == "" })
	}
	return k, nil
}

// The config file's top-level allow lists.
const (
	allowKeyEnvKey   = "allow-key-env"
	allowInsecureKey = "allow-insecure-hosts"
)
