package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"dialogfarm/analyst"
	"dialogfarm/profiles"
)

func planCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Allocate N dialogues over a behaviour profile's cells",
		Long: `plan makes a deterministic stratified production plan: N dialogues over
the profile's cells, every dimension's quotas within one unit of its weights
(largest-remainder rounding), every cell allowed by the constraints. --profile
takes a file or a built-in profile name (` + "`default`" + `).`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error { return a.plan() },
	}
	f := cmd.Flags()
	f.String("profile", "", "profile YAML or built-in name (required)")
	f.Int("n", 0, "number of dialogues (required)")
	f.Int64("seed", 0, "random seed (default: the profile's seed)")
	f.String("out", "", "plan JSON to write (required)")
	return cmd
}

func (a *app) plan() error {
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
	pl, err := analyst.MakePlan(p, cfg)
	if err != nil {
		return err
	}
	if err := profiles.WritePlan(out, pl); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "plan %s: %d dialogues in %d cells (profile %s, seed %d) → %s\n",
		pl.ID, pl.N, len(pl.Cells), p.Name, pl.Seed, out)
	return nil
}
