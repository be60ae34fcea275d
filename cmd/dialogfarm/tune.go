package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"dialogfarm/driver"
	"dialogfarm/pipeline"
	"dialogfarm/tune"
)

func tuneCmd(a *app) *cobra.Command {
	def := tune.DefaultConfig()
	cmd := &cobra.Command{
		Use:   "tune",
		Short: "Pilot a profile, measure what the judge keeps per cell, and write a plan whose kept dialogues match the profile",
		Long: `tune closes the loop between the profile and the judge. It runs a pilot
(--pilot dialogues of the plan fitted to the repositories, through the same
pipeline, editor, pool and judge as run) into OUT/pilot, fits a keep-rate
model per dimension value to what the judge kept (smoothed for small
pilots), and re-plans: values the judge keeps less are oversampled (at most
--max-factor times their share; not at all below a keep rate of
--min-keep) so that the dialogues expected to be kept have the profile's
shares. With --rounds K > 1 it drives --pilot dialogues of each tuned plan
into OUT/round-2... and re-estimates from everything driven so far.

--max-dialogues and/or --budget-usd bound the pilot, the rounds and the
tuned plan together; the tuned plan gets what is left. tune writes
OUT/tuned-plan.json (the format plan writes; run it with
dialogfarm run --plan OUT/tuned-plan.json) and OUT/tune-report.json, and
prints target, produced and kept shares before and after, the expected
JSD per dimension, the cost, and the values it could not bring to their
share with the judge rules that deducted most. Killed and started again
with the same arguments, it resumes: no dialogue is driven twice.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.tune(cmd.Context()) },
	}
	f := cmd.Flags()
	f.String("profile", "default", "behaviour profile YAML or built-in name")
	f.StringSlice("repos", nil, "local repositories to take files from (required; repeat or comma-separate)")
	f.Int64("seed", 0, "random seed (default: the profile's seed)")
	f.String("out", "", "tuning folder (required): OUT/pilot, OUT/round-K, OUT/tuned-plan.json, OUT/tune-report.json")
	f.Int("pilot", def.Pilot, "dialogues in the pilot (and in each later round)")
	f.Int("max-dialogues", 0, "dialogues for the pilot, rounds and tuned plan together (0: bounded by --budget-usd only)")
	f.Float64("budget-usd", 0, "spend for the pilot, rounds and tuned plan together, USD, as the pool accounts it (0: bounded by --max-dialogues only)")
	f.Int("rounds", def.Rounds, "re-plans; each after the first drives --pilot dialogues of the current tuned plan first")
	f.Float64("max-factor", def.MaxFactor, "oversample a value at most this many times its share")
	f.Float64("min-keep", def.MinKeep, "do not oversample a value whose keep rate is below this; report it")
	f.Float64("sigma", def.Sigma, "prior standard deviation of the keep-rate model's effects (0: estimate one per dimension from the pilot)")
	f.Float64("max-jsd", def.MaxJSD, "per-dimension JSD (bits) of the expected kept shares the report marks as met")
	addPipelineFlags(cmd)
	return cmd
}

func (a *app) tune(ctx context.Context) error {
	out := a.v.GetString("out")
	if out == "" || len(a.v.GetStringSlice("repos")) == 0 {
		return errors.New("tune: --out and --repos are required")
	}
	o, err := a.pipelineOptions("tune", 1, "")
	if err != nil {
		return err
	}
	cfg := tune.DefaultConfig()
	cfg.Out, cfg.Run = out, o
	cfg.Pilot, cfg.MaxDialogues, cfg.BudgetUSD = a.v.GetInt("pilot"), a.v.GetInt("max-dialogues"), a.v.GetFloat64("budget-usd")
	cfg.Rounds, cfg.MaxFactor, cfg.MinKeep = a.v.GetInt("rounds"), a.v.GetFloat64("max-factor"), a.v.GetFloat64("min-keep")
	cfg.Sigma, cfg.MaxJSD = a.v.GetFloat64("sigma"), a.v.GetFloat64("max-jsd")
	if err := cfg.Validate(); err != nil {
		return err
	}
	lock, err := driver.LockRunFolder(out)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	round := func(ctx context.Context, o pipeline.DefaultOptions, dir string) error {
		env, done, err := a.runEnv(dir)
		if err != nil {
			return err
		}
		defer done()
		// The metrics server lives as long as its round.
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		if err := a.startMetrics(ctx, &env.Drive); err != nil {
			return err
		}
		_, err = pipeline.RunDefault(ctx, o, env)
		return err
	}
	r, err := tune.Run(ctx, cfg, round, a.log)
	if err != nil {
		return err
	}
	fmt.Fprintln(a.stdout)
	if err := r.WriteTable(a.stdout); err != nil {
		return err
	}
	plan := filepath.Join(out, tune.PlanFile)
	fmt.Fprintf(a.stdout, "\ntuned plan: %s\nreport: %s\nrun it: dialogfarm run --plan %s --profile %s --repos ... --out DIR\n",
		plan, filepath.Join(out, tune.ReportFile), plan, o.Profile)
	return nil
}
