package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"dialogfarm/analyst"
	"dialogfarm/configgen"
	"dialogfarm/profiles"
)

func profilesCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "profiles",
		Short: "Compare behaviour profiles",
	}
	diff := &cobra.Command{
		Use:   "diff A B",
		Short: "Compare two profiles per dimension: weights side by side, JSD, and the plan each implies",
		Long: `profiles diff prints, for each of the ten dimensions, every value's share
in A and in B (normalised weights; changed values marked *), the
Jensen–Shannon divergence (bits) between the two, and the quota each
profile's plan of --n dialogues gives the value (with --repos, the plans
fitted to those repositories, as run makes them). Constraints only one
profile has are listed. A and B are profile files or built-in names.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error { return a.profilesDiff(cmd, args) },
	}
	f := diff.Flags()
	f.Int("n", 100, "dialogues of the plan each profile implies")
	f.Int64("seed", 0, "random seed of both plans (default: each profile's seed)")
	f.StringSlice("repos", nil, "fit both plans to these repositories (as run does)")
	f.Bool("json", false, "print the diff as JSON")
	cmd.AddCommand(diff)
	return cmd
}

func (a *app) profilesDiff(cmd *cobra.Command, args []string) error {
	pa, err := profiles.Load(args[0])
	if err != nil {
		return err
	}
	pb, err := profiles.Load(args[1])
	if err != nil {
		return err
	}
	n := a.v.GetInt("n")
	var ix *profiles.RepoIndex
	if repos := a.v.GetStringSlice("repos"); len(repos) > 0 {
		gc := configgen.DefaultConfig()
		gc.Repos = repos
		if ix, _, err = configgen.IndexRepos(cmd.Context(), gc); err != nil {
			return err
		}
	}
	plan := func(p *profiles.Profile) (*profiles.Plan, error) {
		cfg := analyst.PlanConfig{N: n, Seed: p.Seed}
		if a.v.IsSet("seed") {
			cfg.Seed = a.v.GetInt64("seed")
		}
		if ix != nil {
			return analyst.PlanForRepos(p, ix, cfg)
		}
		return analyst.MakePlan(p, cfg)
	}
	d := analyst.DiffProfiles(pa, pb, n, plan)
	d.A, d.B = args[0], args[1]
	if a.v.GetBool("json") {
		data, err := json.MarshalIndent(d, "", "  ")
		if err != nil {
			return fmt.Errorf("encode diff: %w", err)
		}
		_, err = fmt.Fprintln(a.stdout, string(data))
		return err
	}
	return d.WriteTable(a.stdout)
}
