package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"dialogfarm/analyst"
	"dialogfarm/configgen"
	"dialogfarm/dialog/vocab"
	"dialogfarm/internal/runfiles"
	"dialogfarm/profiles"
)

func configsCmd(a *app) *cobra.Command {
	def := configgen.DefaultConfig()
	cmd := &cobra.Command{
		Use:   "configs [--repos] DIR...",
		Short: "Turn a plan into chat configs on real files of local repositories",
		Long: `configs realises every planned dialogue on a real file of the given
repositories: a file in the cell's language, parsed with tree-sitter, with the
cell's cursor behaviour turned into a concrete cursor or selection, a first
query (model-written with --model, else templates, marked in query_source) and
a follow-up policy. Vendored, generated, minified, binary and oversized files
are skipped and counted; regions holding secrets are never selected. The same
plan, repositories and seed give the same configs.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return a.configs(cmd, args) },
	}
	f := cmd.Flags()
	f.String("plan", "", "plan JSON made by dialogfarm plan (required)")
	f.StringSlice("repos", nil, "repository directories (repeat or comma-separate; extra arguments are repositories too)")
	f.String("out", "", "chat configs JSONL to write (required)")
	f.Int64("seed", 0, "random seed (default: the plan's seed)")
	f.Int64("max-file-bytes", def.MaxFileBytes, "skip larger files")
	f.Int("context-lines", def.ContextLines, "lines the plugin sends around the cursor (askplugin.contextLines)")
	addStageModelFlags(cmd, "writes first queries")
	f.String("exemplars", "", "interaction logs (JSONL, the analyze format) whose first queries the query model imitates: a few redacted ones of each config's cell in its prompt (needs --model)")
	f.String("cache", "", "query cache file (JSONL, appended as answers arrive), reused across runs")
	f.String("stats", "", "also write the generation stats as JSON to this file")
	return cmd
}

func (a *app) configs(cmd *cobra.Command, args []string) error {
	planPath, out := a.v.GetString("plan"), a.v.GetString("out")
	repos := append(a.v.GetStringSlice("repos"), args...)
	if planPath == "" || out == "" || len(repos) == 0 {
		return errors.New("configs: --plan, --repos and --out are required")
	}
	pl, err := profiles.ReadPlan(planPath)
	if err != nil {
		return err
	}
	cfg := configgen.DefaultConfig()
	cfg.Repos, cfg.Seed = repos, pl.Seed
	if a.v.IsSet("seed") {
		cfg.Seed = a.v.GetInt64("seed")
	}
	cfg.MaxFileBytes, cfg.ContextLines = a.v.GetInt64("max-file-bytes"), a.v.GetInt("context-lines")
	if cfg.Model, err = a.stageModel("queries"); err != nil {
		return err
	}
	cfg.Concurrency, cfg.CachePath = a.v.GetInt("jobs"), a.v.GetString("cache")
	if path := a.v.GetString("exemplars"); path != "" {
		if cfg.Exemplars, err = readExemplars(path); err != nil {
			return err
		}
	}
	start := time.Now()
	bars := map[string]*progress{}
	var mu sync.Mutex // files are parsed in parallel
	cfg.Progress = func(step string, done, total int) {
		mu.Lock()
		defer mu.Unlock()
		bar, ok := bars[step]
		if !ok {
			bar = a.newProgress("configs "+step, total)
			bars[step] = bar
		}
		bar.Set(done)
	}
	res, err := configgen.Generate(cmd.Context(), pl, cfg, a.log)
	for _, bar := range bars {
		bar.Finish()
	}
	if err != nil {
		return err
	}
	if err := configgen.WriteConfigs(out, res.Configs); err != nil {
		return err
	}
	if path := a.v.GetString("stats"); path != "" {
		data, err := json.MarshalIndent(res.Stats, "", "  ")
		if err != nil {
			return fmt.Errorf("encode stats: %w", err)
		}
		if err := runfiles.WriteAtomic(path, append(data, '\n')); err != nil {
			return err
		}
	}
	fmt.Fprintf(a.stdout, "%d configs for plan %s (n=%d) → %s in %s\n", len(res.Configs), pl.ID, pl.N, out,
		time.Since(start).Round(time.Millisecond))
	fmt.Fprint(a.stdout, res.Stats.Summary())
	return nil
}

// addStageModelFlags adds the flags naming the OpenAI-compatible model a
// front-half stage (analyze, configs) uses; without --model none is used.
func addStageModelFlags(cmd *cobra.Command, what string) {
	f := cmd.Flags()
	f.String("model-base-url", "", "OpenAI-compatible base URL (ending in /v1) of the model that "+what)
	f.String("model", "", "model that "+what+" (empty: no model, template/keyword fallback)")
	f.String("api-key-env", "", "environment variable holding that model's API key, e.g. OPENAI_API_KEY (empty: no key)")
	f.Int("jobs", 4, "model requests at once")
	f.Duration("model-timeout", 60*time.Second, "longest wait for one model request")
}

// stageModel is the model the flags addStageModelFlags added name, nil
// for none.
func (a *app) stageModel(name string) (configgen.Model, error) {
	return stageModel(name, a.v.GetString("model-base-url"), a.v.GetString("model"), a.v.GetString("api-key-env"),
		a.v.GetDuration("model-timeout"), a.keyAllow, nil, a.log)
}

// readExemplars reads the first query of every session of interaction
// logs, with its cell as the analyst reads it.
func readExemplars(path string) ([]configgen.Exemplar, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("exemplars: %w", err)
	}
	defer f.Close()
	recs, _, err := analyst.ReadLogs(f, analyst.Mapping{})
	if err != nil {
		return nil, fmt.Errorf("exemplars %s: %w", path, err)
	}
	var out []configgen.Exemplar
	for _, s := range analyst.GroupSessions(recs) {
		o := analyst.Observe(s)
		intent := o.CommandIntent
		if intent == "" {
			intent = vocab.IntentOf(s.First.Query)
		}
		out = append(out, configgen.Exemplar{Query: s.First.Query, Intent: intent, Locale: o.Locale, Style: o.QueryStyle})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("exemplars %s: no usable session", path)
	}
	return out, nil
}
