package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"dialogfarm/analyst"
)

func analyzeCmd(a *app) *cobra.Command {
	def := analyst.DefaultAnalyzeConfig()
	cmd := &cobra.Command{
		Use:   "analyze",
		Short: "Fit a behaviour profile from interaction logs",
		Long: `analyze reads interaction logs (JSONL, one object per query with session_id,
turn and query, and where logged file or language, selection, cursor, trigger
and command), derives the observable dimensions by rules, classifies intent
and difficulty with the model given by --model (or, without one, a keyword
fallback that the fitted profile names as such), and writes the profile with
the counts behind each weight as comments, plus OUT.counts.json. Lines that
cannot be used are listed with their line numbers.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.analyze(cmd) },
	}
	f := cmd.Flags()
	f.String("logs", "", "interaction logs, JSONL (required)")
	f.String("out", "", "profile YAML to write (required); counts go to NAME.counts.json next to it")
	f.String("map", "", "field mapping YAML for logs whose field names differ")
	f.String("name", def.Name, "name of the fitted profile")
	f.Int64("seed", def.Seed, "seed written into the fitted profile")
	addStageModelFlags(cmd, "classifies intent and difficulty")
	f.Int("batch", def.Classify.BatchSize, "queries per classification request")
	f.String("cache", "", "classification cache file (JSON), reused across runs")
	return cmd
}

func (a *app) analyze(cmd *cobra.Command) error {
	cfg := analyst.DefaultAnalyzeConfig()
	cfg.LogsPath = a.v.GetString("logs")
	out := a.v.GetString("out")
	if cfg.LogsPath == "" || out == "" {
		return errors.New("analyze: --logs and --out are required")
	}
	if path := a.v.GetString("map"); path != "" {
		m, err := analyst.ReadMapping(path)
		if err != nil {
			return err
		}
		cfg.Mapping = m
	}
	cfg.Name, cfg.Seed = a.v.GetString("name"), a.v.GetInt64("seed")
	m, err := a.stageModel("classifier")
	if err != nil {
		return err
	}
	cfg.Classify.Model = m
	cfg.Classify.BatchSize, cfg.Classify.Concurrency = a.v.GetInt("batch"), a.v.GetInt("jobs")
	cfg.Classify.CachePath = a.v.GetString("cache")
	var bar *progress // made at the first report: only model classification takes long
	cfg.Classify.Progress = func(done, total int) {
		if bar == nil {
			bar = a.newProgress("analyze", total)
		}
		bar.Set(done)
	}
	fit, err := analyst.Analyze(cmd.Context(), cfg, a.log)
	if bar != nil {
		bar.Finish()
	}
	if err != nil {
		return err
	}
	if err := analyst.WriteFit(out, fit); err != nil {
		return err
	}
	c := fit.Counts
	fmt.Fprintf(a.stdout, "profile %s: %d sessions from %d records; intent and difficulty by %s\n",
		out, c.Sessions, c.Records, c.Classifier)
	if len(c.BadLines) > 0 {
		fmt.Fprintf(a.stdout, "%d unusable lines:\n", len(c.BadLines))
		for _, b := range c.BadLines {
			fmt.Fprintf(a.stdout, "  %s:%d: %s\n", cfg.LogsPath, b.Line, b.Reason)
		}
	}
	fmt.Fprintf(a.stdout, "counts: %s\n", analyst.CountsPath(out))
	a.log.Debug("fitted", zap.Int("sessions", c.Sessions))
	return nil
}
