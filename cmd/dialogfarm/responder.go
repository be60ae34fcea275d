package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"dialogfarm/adapter"
	"dialogfarm/capture"
	"dialogfarm/driver"
	"dialogfarm/judge"
	"dialogfarm/pool"
	"dialogfarm/respond"
)

// addResponderFlags adds the flags that choose who answers the plugin.
func addResponderFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.String("responder", "", "who answers the plugin: pool (the pool: and judge: of --pool or --config), openai (one upstream model), offline (placeholders, never training data); default pool when a pool config is given, else offline")
	f.String("pool", "", "pool and judge config (dialogfarm.yaml); implies --responder pool")
	f.String("model-base-url", "", "OpenAI-compatible base URL for --responder openai, e.g. http://127.0.0.1:8000/v1")
	f.String("model", "", "model name for --responder openai")
	f.String("api-key-env", "", "environment variable holding the API key for --responder openai (empty: send no key)")
	f.String("tasks", "", "folder written by tasks build: with --responder pool, answers to its configs are run against their step's tests before the judge picks one")
	addPoolFlags(cmd)
}

// responder builds the answerer the flags name; it judges each request as
// the plugin of its session's config writes messages (the run's adapters'
// prompt: sections). done prints the pool's accounting (when there is a
// pool) and must be called after the run.
func (a *app) responder(out string, rc driver.RunConfig, limits pool.Limits) (r capture.Responder, done func(io.Writer), err error) {
	asg, adapters := rc.Assignments, rc.Adapters
	name, poolPath := a.responderName(), a.v.GetString("pool-file")
	noop := func(io.Writer) {}
	switch name {
	case "pool":
		settings, err := a.loadPoolSettings(poolPath)
		if err != nil {
			return nil, noop, err
		}
		warnConcurrency(settings, rc.Sessions, a.log)
		pr, err := newPoolResponder(settings, out, limits, a.log)
		if err != nil {
			return nil, noop, err
		}
		if dir := a.v.GetString("tasks"); dir != "" {
			ej, err := newExecJudge(dir, a.log)
			if err != nil {
				return nil, noop, err
			}
			pr.judge.WithExecutor(ej)
		}
		pr.Lookup, pr.Reader = asg.Lookup, adapter.Set(adapters)
		return pr, pr.report, nil
	case "offline":
		a.log.Warn("answers come from the offline stand-in: records are marked offline and are not training data")
		r, err := a.rulesOnly(capture.Offline{}, "offline", asg, adapters)
		return r, noop, err
	case "openai":
		// One upstream model: a pool of one through the same gateway as
		// the pool's members, judged by the rules.
		cfg := onePool(a.v.GetString("model-base-url"), a.v.GetString("model"), a.v.GetString("api-key-env"), out, rc.Sessions)
		a.keyAllow.apply(&cfg.Members[0])
		if err := cfg.ResolveKeys(os.LookupEnv); err != nil {
			return nil, noop, err
		}
		a.log.Info("answers come from an upstream model", zap.String("model", cfg.Members[0].Model))
		p, err := pool.New(cfg, a.log.Named("pool"), pool.WithLimits(limits))
		if err != nil {
			return nil, noop, err
		}
		r, err := a.rulesOnly(p, "openai", asg, adapters)
		return r, func(w io.Writer) { writeStats(w, p.Stats()) }, err
	default:
		return nil, noop, fmt.Errorf("--responder must be pool, openai or offline, got %q", name)
	}
}

// responderName is --responder, or what the config implies: a pool when
// it has one, else the offline stand-in.
func (a *app) responderName() string {
	if name := a.v.GetString("responder"); name != "" {
		return name
	}
	if a.v.GetString("pool-file") != "" || a.v.InConfig("pool") || a.v.IsSet("pool.members") {
		return "pool"
	}
	return "offline"
}

// rulesOnly makes one answerer the sole candidate of a judge in rules-only
// mode, so its records carry verdicts like a pool's (and can be re-judged
// with a judge model later by `dialogfarm judge`).
func (a *app) rulesOnly(p respond.Proposer, name string, asg *driver.Assignments, adapters []*adapter.Adapter) (capture.Responder, error) {
	j, err := judge.New(judge.DefaultConfig(), nil, a.log.Named("judge"))
	if err != nil {
		return nil, err
	}
	r := respond.New(p, j, a.log.Named("responder"))
	r.Name, r.Lookup, r.Reader = name, asg.Lookup, adapter.Set(adapters)
	return r, nil
}

// warnConcurrency says which pool members take fewer calls at once than
// the simulators can make: every turn asks each member, so the windows
// beyond its max_concurrency wait for a slot (the wait counts as model
// time and the editors sit idle).
func warnConcurrency(s poolSettings, sessions int, log *zap.Logger) {
	for _, m := range s.Pool.Members {
		if m.MaxConcurrency < sessions {
			log.Warn("a pool member takes fewer calls at once than there are simulators: the others wait for it; raise its max_concurrency",
				zap.String("member", m.Name), zap.Int("max_concurrency", m.MaxConcurrency), zap.Int("sessions", sessions))
		}
	}
}
