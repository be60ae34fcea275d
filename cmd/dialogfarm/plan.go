package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"dialogfarm/analyst"
	"dialogfarm/configgen"
	"dialogfarm/profiles"
)

func planCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Allocate N dialogues over a behaviour profile's cells",
		Long: `plan makes a deterministic stratified production plan: N dialogues over
the profile's cells, every dimension's quotas within one unit of its weights
(largest-remainder rounding), every cell allowed by the constraints. --profile
takes a file or a built-in profile name (` + "`default`" + `).

With --repos, the plan fits the repositories: they are indexed first (the
files configs would use), the share of a language, cursor behaviour or
reference they cannot realise moves to the values they can (see
docs/commands.md, plan), a table says what moved and why, and N is capped
at the number of distinct targets they hold (said in one line).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.plan(cmd.Context()) },
	}
	f := cmd.Flags()
	f.String("profile", "", "profile YAML or built-in name (required)")
	f.Int("n", 0, "number of dialogues (required)")
	f.Int64("seed", 0, "random seed (default: the profile's seed)")
	f.String("out", "", "plan JSON to write (required)")
	f.StringSlice("repos", nil, "repositories the plan must fit (repeat or comma-separate; default: plan blind to them)")
	return cmd
}

func (a *app) plan(ctx context.Context) error {
	path, out, n := a.v.GetString("profile"), a.v.GetString("out"), a.v.GetInt("n")
	if path == "" || out == "" || n <= 0 {
		return errors.New("plan: --profile, --out and a positive --n are required")
	}
	p, err := profiles.Load(path)
	if err != nil {
		return err
	}
	cfg := analyst.PlanConfig{N: n, Seed: p.Seed}
	if a.v.IsSet("seed") {
		cfg.Seed = a.v.GetInt64("seed")
	}
	var pl *profiles.Plan
	if repos := a.v.GetStringSlice("repos"); len(repos) > 0 {
		gc := configgen.DefaultConfig()
		gc.Repos = repos
		ix, _, err := configgen.IndexRepos(ctx, gc)
		if err != nil {
			return err
		}
		pl, err = analyst.PlanForRepos(p, ix, cfg)
		if err != nil {
			return err
		}
	} else if pl, err = analyst.MakePlan(p, cfg); err != nil {
		return err
	}
	if err := profiles.WritePlan(out, pl); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "plan %s: %d dialogues in %d cells (profile %s, seed %d) → %s\n",
		pl.ID, pl.N, len(pl.Cells), p.Name, pl.Seed, out)
	return analyst.WriteMoves(a.stdout, pl.Fit)
}
