package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"dialogfarm/analyst"
	"dialogfarm/configgen"
	"dialogfarm/dialog"
	"dialogfarm/driver"
	"dialogfarm/pipeline"
	"dialogfarm/profiles"
	"dialogfarm/sft"
)

func runCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Plan, generate configs, drive the editor, export SFT JSONL and a dataset folder, report fidelity, in one resumable run",
		Long: `run executes the whole pipeline into one run folder:

  plan → configs → drive → export → report → dataset

OUT/plan.json, OUT/configs.jsonl, OUT/dialogues.jsonl (+ exchanges.jsonl,
failures/), OUT/sft.jsonl, OUT/report.json and the dataset folder
OUT/dataset/ (train/validation JSONL, dataset card, LLaMA-Factory
dataset_info.json, stats.json; see export). Killed at any point and started
again with the same arguments, it resumes: plan and configs are reused, no
config recorded ok is driven again, export and report are recomputed. Other
arguments on an existing OUT are refused.

Answers come from the pool and judge of --config/--pool (dialogfarm.yaml), one
upstream model (--responder openai), or the offline stand-in.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.run(cmd.Context()) },
	}
	f := cmd.Flags()
	f.String("profile", "default", "behaviour profile YAML or built-in name")
	f.StringSlice("repos", nil, "local repositories to take files from (required; repeat or comma-separate)")
	f.Int("n", 0, "number of dialogues (required)")
	f.Int64("seed", 0, "random seed (default: the profile's seed)")
	f.String("out", "", "run folder (required)")
	f.String("pipeline", "", "run this pipeline file (see `dialogfarm pipeline`) instead of the default stages; --profile, --repos, --n, --seed and the export flags then come from the file")
	f.Int("limit", 0, "with --pipeline: drive at most this many configs per drive node (0: all)")
	addQueryModelFlags(cmd)
	def := sft.DefaultOptions()
	f.String("format", def.Format, "SFT format: openai or sharegpt")
	f.Float64("min-score", def.MinScore, "lowest final score a kept turn may have")
	f.String("meta", def.Meta, "metadata: inline, sidecar or none")
	f.Bool("allow-offline", false, "export records of the offline stand-in (placeholders; for trying the pipeline only)")
	addDatasetFlags(cmd)
	addDriveFlags(cmd)
	addResponderFlags(cmd)
	addToolFlags(cmd)
	return cmd
}

func (a *app) run(ctx context.Context) error {
	if path := a.v.GetString("pipeline"); path != "" {
		return a.runPipeline(ctx, path)
	}
	out, n := a.v.GetString("out"), a.v.GetInt("n")
	repos := a.v.GetStringSlice("repos")
	if out == "" || n <= 0 || len(repos) == 0 {
		return errors.New("run: --out, --repos and a positive --n are required")
	}
	lock, err := driver.LockRunFolder(out)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	for i, r := range repos {
		abs, err := filepath.Abs(r)
		if err != nil {
			return fmt.Errorf("run: --repos %s: %w", r, err)
		}
		repos[i] = abs
	}
	profileName := a.v.GetString("profile")
	p, err := profiles.Load(profileName)
	if err != nil {
		return err
	}
	cfg := pipeline.Config{Out: out, Profile: p, ProfileName: profileName, Progress: a.stderr, Table: a.stdout}
	cfg.Plan = analyst.PlanConfig{N: n, Seed: p.Seed}
	if a.v.IsSet("seed") {
		cfg.Plan.Seed = a.v.GetInt64("seed")
	}
	model, err := a.queryModel()
	if err != nil {
		return err
	}
	cfg.Configs = configgen.DefaultConfig()
	cfg.Configs.Repos, cfg.Configs.Seed, cfg.Configs.Model = repos, cfg.Plan.Seed, model
	cfg.Configs.CachePath = filepath.Join(out, "queries.cache.jsonl")
	cfg.Configs.ContextLines = a.v.GetInt("context-lines")
	if cfg.Drive, err = a.driveConfig(out); err != nil {
		return err
	}
	if err := a.startMetrics(ctx, &cfg.Drive); err != nil {
		return err
	}
	cfg.Export = sft.Options{Format: a.v.GetString("format"), MinScore: a.v.GetFloat64("min-score"),
		Meta: a.v.GetString("meta"), AllowOffline: a.v.GetBool("allow-offline")}
	if err := cfg.Export.Validate(); err != nil {
		return err
	}
	cfg.Dataset = a.datasetOptions(cfg.Export, cfg.Plan.Seed)
	if err := cfg.Dataset.Validate(); err != nil {
		return err
	}
	cfg.Report = analyst.DefaultReportConfig()
	cfg.Report.KeptTurns = func(d dialog.Dialogue) int { return sft.KeptTurns(d, cfg.Export) }

	responder, report, err := a.responder(out, cfg.Drive.Run)
	if err != nil {
		return err
	}
	defer report(a.stderr)
	deps := pipeline.Deps{Responder: responder, FollowUps: configgen.NewFollowUpWriter(model)}
	res, err := pipeline.Run(ctx, cfg, deps, a.log)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "\ndialogues: %d ok, %d failed, %d already recorded\nSFT: %d records → %s\nreport: %s\n",
		res.Drive.OK, res.Drive.Failed, res.Drive.Skipped, res.Export.Records,
		filepath.Join(out, pipeline.SFTFile), filepath.Join(out, pipeline.ReportFile))
	printDatasetStats(a.stdout, filepath.Join(out, pipeline.DatasetDir), res.Dataset)
	if err := pipeline.WriteRunDashboard(out, cfg.Export); err != nil {
		a.log.Warn("dashboard not written", zap.Error(err))
	}
	return nil
}
