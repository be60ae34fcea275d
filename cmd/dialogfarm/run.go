package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"dialogfarm/dashboard"
	"dialogfarm/driver"
	"dialogfarm/pipeline"
	"dialogfarm/profiles"
	"dialogfarm/sft"
)

func runCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Plan, generate configs, drive the editor, export SFT JSONL and a dataset folder, report fidelity, in one resumable run",
		Long: `run runs the default pipeline (dialogfarm pipeline default prints it) into
one run folder OUT: plan → configs → drive → export, report, dataset.

OUT/plan.json, OUT/configs.jsonl, OUT/dialogues.jsonl (+ exchanges.jsonl,
failures/), OUT/sft.jsonl, OUT/report.json and the dataset folder
OUT/dataset/ (train/validation JSONL, dataset card, LLaMA-Factory
dataset_info.json, stats.json; see export), each stage's state under
OUT/nodes/. Killed at any point and started again with the same arguments,
it resumes: plan and configs are reused, no config recorded ok is driven
again, and a stage whose inputs and params did not change is not run
again. Other arguments on an existing OUT are refused. With --pipeline FILE
it runs that pipeline instead.

The plan is fitted to the repositories (see plan --repos): a language,
cursor behaviour or reference they cannot realise gives its share to those
they can, and the table of what moved is printed. With --plan FILE, the plan
is that file (a tuned plan from tune, or one from plan) instead.

Answers come from the pool and judge of --config/--pool (dialogfarm.yaml), one
upstream model (--responder openai), or the offline stand-in.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.run(cmd.Context()) },
	}
	f := cmd.Flags()
	f.String("profile", "default", "behaviour profile YAML or built-in name")
	f.StringSlice("repos", nil, "local repositories to take files from (required; repeat or comma-separate)")
	f.Int("n", 0, "number of dialogues (required unless --plan gives them)")
	f.String("plan", "", "run this plan file (plan or tune wrote it, for --profile) instead of planning; --n is its n")
	f.Int64("seed", 0, "random seed (default: the profile's seed)")
	f.String("out", "", "run folder (required)")
	f.String("pipeline", "", "run this pipeline file (see dialogfarm pipeline) instead of the default pipeline; --profile, --repos, --n, --seed and the export flags then come from the file")
	f.Int("limit", 0, "drive at most this many configs per drive node (0: all)")
	addPipelineFlags(cmd)
	return cmd
}

func (a *app) run(ctx context.Context) error {
	out, path := a.v.GetString("out"), a.v.GetString("pipeline")
	var o pipeline.DefaultOptions
	switch {
	case path != "" && out == "":
		return errors.New("run --pipeline: --out is required")
	case path == "":
		var err error
		if o, err = a.defaultOptions(out); err != nil {
			return err
		}
	}
	lock, err := driver.LockRunFolder(out)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	env, done, err := a.runEnv(out)
	if err != nil {
		return err
	}
	defer done()
	if err := a.startMetrics(ctx, &env.Drive); err != nil {
		return err
	}
	env.Limit = a.v.GetInt("limit")
	if path != "" {
		return a.runPipeline(ctx, path, env)
	}
	states, err := pipeline.RunDefault(ctx, o, env)
	if err != nil {
		return err
	}
	res, err := pipeline.ResultOf(states)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "\ndialogues: %d ok, %d failed, %d already recorded\nSFT: %d records → %s\n",
		res.Drive.OK, res.Drive.Failed, res.Drive.Skipped, res.Export.Records, filepath.Join(out, pipeline.SFTFile))
	printDatasetStats(a.stdout, filepath.Join(out, pipeline.DatasetDir), res.Dataset)
	a.warnDataset(res.Dataset)
	a.finishRun(pipeline.DefaultSpec(o), states, out)
	return nil
}

// finishRun writes the run's dashboard and ends with where to look: the
// HTML report(s), the dashboard and the dataset folder(s).
func (a *app) finishRun(s *pipeline.Spec, states []pipeline.NodeState, out string) {
	fmt.Fprintln(a.stdout)
	for _, st := range states {
		for _, v := range st.Outputs {
			switch v.Type {
			case pipeline.TypeReport:
				fmt.Fprintf(a.stdout, "report: %s\n", pipeline.ReportHTMLPath(v.Path))
			case pipeline.TypeDataset:
				fmt.Fprintf(a.stdout, "dataset: %s\n", v.Path)
			}
		}
	}
	if err := pipeline.WriteDashboard(s, states, out, pipeline.RunDone); err != nil {
		a.log.Warn("dashboard not written", zap.Error(err))
		return
	}
	fmt.Fprintf(a.stdout, "dashboard: %s\n", filepath.Join(out, dashboard.File))
}

// defaultOptions reads the default pipeline's arguments from the flags.
func (a *app) defaultOptions(out string) (pipeline.DefaultOptions, error) {
	n, repos, planFile := a.v.GetInt("n"), a.v.GetStringSlice("repos"), a.v.GetString("plan")
	if planFile != "" {
		pl, err := profiles.ReadPlan(planFile)
		if err != nil {
			return pipeline.DefaultOptions{}, fmt.Errorf("run --plan: %w", err)
		}
		if n > 0 && n != pl.N {
			return pipeline.DefaultOptions{}, fmt.Errorf("run: --n %d, but plan %s holds %d dialogues: give one of them", n, planFile, pl.N)
		}
		if a.v.IsSet("seed") {
			return pipeline.DefaultOptions{}, fmt.Errorf("run: --seed with --plan: the plan %s has its seed (%d)", planFile, pl.Seed)
		}
		n = pl.N
		if planFile, err = filepath.Abs(planFile); err != nil {
			return pipeline.DefaultOptions{}, fmt.Errorf("run --plan: %w", err)
		}
	}
	if out == "" || n <= 0 || len(repos) == 0 {
		return pipeline.DefaultOptions{}, errors.New("run: --out, --repos and a positive --n (or --plan) are required")
	}
	return a.pipelineOptions("run", n, planFile)
}

// pipelineOptions reads the default pipeline's arguments other than n and
// the plan file (run and tune share them): profile, repositories, seed,
// export and dataset.
func (a *app) pipelineOptions(cmd string, n int, planFile string) (pipeline.DefaultOptions, error) {
	repos := a.v.GetStringSlice("repos")
	o := pipeline.DefaultOptions{Profile: a.v.GetString("profile"), N: n, PlanFile: planFile}
	for _, r := range repos {
		abs, err := filepath.Abs(r)
		if err != nil {
			return o, fmt.Errorf("%s: --repos %s: %w", cmd, r, err)
		}
		o.Repos = append(o.Repos, abs)
	}
	p, err := profiles.Load(o.Profile)
	if err != nil {
		return o, err
	}
	seed := p.Seed
	if a.v.IsSet("seed") {
		seed = a.v.GetInt64("seed")
		o.Seed = &seed
	}
	o.Export = sft.Options{Format: a.v.GetString("format"), MinScore: a.v.GetFloat64("min-score"),
		Meta: a.v.GetString("meta"), AllowOffline: a.v.GetBool("allow-offline")}
	if err := o.Export.Validate(); err != nil {
		return o, err
	}
	o.Dataset = a.datasetOptions(o.Export, seed)
	return o, o.Dataset.Validate()
}
