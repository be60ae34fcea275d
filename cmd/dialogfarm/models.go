package main

// Every model the CLI reaches goes through one gateway, pool.Member: the
// pool's members and the judge (poolconfig.go), the single model of
// --responder openai (a pool of one), and the stage models below (the
// analyst's classifier, configs' query writer, the follow-up writer). So
// they share one retry policy (backoff, Retry-After), the rpm limit, the
// circuit breaker, usage and cost accounting, and key redaction.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
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
func stageModel(name, baseURL, model, keyEnv string, timeout time.Duration, log *zap.Logger) (configgen.Model, error) {
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
	if err := cfg.ResolveKey(os.LookupEnv); err != nil {
		return nil, err
	}
	m, err := pool.NewMember(cfg, pool.DefaultPolicy(), nil, log.Named(name))
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

// apiKeys are the values of the variables that the command's --*api-key-env
// flags and the pool's, the judge's (and --pool's) api_key_env fields name:
// the logger cuts them from every line, behind the gateway's own redaction.
func (a *app) apiKeys(cmd *cobra.Command, settings poolSettings) []pool.Secret {
	var names []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if strings.HasSuffix(f.Name, "api-key-env") {
			names = append(names, a.v.GetString(flagKey(f.Name)))
		}
	})
	all := []poolSettings{settings}
	if path := a.v.GetString("pool-file"); path != "" {
		if s, err := a.loadPoolSettings(path); err == nil {
			all = append(all, s)
		}
	}
	for _, s := range all {
		for _, m := range s.Pool.Members {
			names = append(names, m.APIKeyEnv)
		}
		if s.JudgeModel != nil {
			names = append(names, s.JudgeModel.APIKeyEnv)
		}
	}
	var keys []pool.Secret
	for _, n := range names {
		if v, ok := os.LookupEnv(n); ok && n != "" {
			keys = append(keys, pool.Secret(strings.TrimSpace(v)))
		}
	}
	return keys
}
