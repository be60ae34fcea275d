package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"dialogfarm/adapter"
	"dialogfarm/configgen"
	"dialogfarm/driver/editor"
	"dialogfarm/judge"
	"dialogfarm/pipeline"
	"dialogfarm/pool"
	"dialogfarm/sft"
)

func pipelineCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pipeline",
		Short: "Pipeline files: print the default one, validate one, list the operators",
		Long: `A pipeline file is a DAG of operators (YAML: apiVersion, kind, nodes, each
node an operator with params and named inputs). run --pipeline FILE runs one;
serve and mcp let people and agents edit them.`,
	}
	def := &cobra.Command{
		Use:   "default",
		Short: "Print today's run (plan → configs → drive → export → report) as a pipeline file",
		Args:  cobra.NoArgs,
		RunE:  func(*cobra.Command, []string) error { return a.pipelineDefault() },
	}
	f := def.Flags()
	f.String("profile", "default", "behaviour profile YAML or built-in name")
	f.StringSlice("repos", nil, "local repositories (required)")
	f.Int("n", 0, "number of dialogues (required)")
	f.Int64("seed", 0, "random seed (default: the profile's seed)")
	val := &cobra.Command{
		Use:   "validate FILE",
		Short: "Check a pipeline file: every finding with its code, node, port or param and a suggestion",
		Args:  cobra.ExactArgs(1),
		RunE:  func(_ *cobra.Command, args []string) error { return a.pipelineValidate(args[0]) },
	}
	addToolFlags(val)
	val.Flags().String("pool", "", "pool and judge config (dialogfarm.yaml) whose endpoint names a judge node may use")
	ops := &cobra.Command{
		Use:   "operators",
		Short: "List the operators, their ports and params (--json for the schemas)",
		Args:  cobra.NoArgs,
		RunE:  func(*cobra.Command, []string) error { return a.pipelineOperators() },
	}
	ops.Flags().Bool("json", false, "print the operators as JSON, params as JSON schemas")
	cmd.AddCommand(def, val, ops)
	return cmd
}

func (a *app) pipelineDefault() error {
	n, repos := a.v.GetInt("n"), a.v.GetStringSlice("repos")
	if n <= 0 || len(repos) == 0 {
		return errors.New("pipeline default: --repos and a positive --n are required")
	}
	o := pipeline.DefaultOptions{Profile: a.v.GetString("profile"), N: n, Repos: repos, Export: sft.DefaultOptions()}
	if a.v.IsSet("seed") {
		seed := a.v.GetInt64("seed")
		o.Seed = &seed
	}
	data, err := pipeline.DefaultSpec(o).YAML()
	if err != nil {
		return err
	}
	_, err = a.stdout.Write(data)
	return err
}

// validationEnv is what Validate checks resources against: the config's
// model endpoints and the installed plugin.
func (a *app) validationEnv() pipeline.Env {
	var env pipeline.Env
	if s, err := a.loadPoolSettings(a.v.GetString("pool-file")); err == nil {
		for _, m := range s.Pool.Members {
			env.Endpoints = append(env.Endpoints, m.Name)
		}
		if s.JudgeModel != nil {
			env.Endpoints = append(env.Endpoints, "judge")
		}
	}
	if m, err := editor.ReadPluginManifest(a.pluginDir()); err == nil {
		env.Plugins = append(env.Plugins, m.ID())
	}
	return env
}

func readSpec(path string) (*pipeline.Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read pipeline: %w", err)
	}
	return pipeline.ParseSpec(path, data)
}

func (a *app) pipelineValidate(path string) error {
	s, err := readSpec(path)
	if err != nil {
		return err
	}
	fs := pipeline.Validate(s, pipeline.NewRegistry(), a.validationEnv())
	for _, f := range fs {
		fmt.Fprintf(a.stdout, "%s: %s\n", path, f)
	}
	if errs := pipeline.Errors(fs); len(errs) > 0 {
		return fmt.Errorf("%s: %d errors", path, len(errs))
	}
	fmt.Fprintf(a.stdout, "%s: valid (%d nodes, %d warnings)\n", path, len(s.Nodes), len(fs))
	return nil
}

func (a *app) pipelineOperators() error {
	reg := pipeline.NewRegistry()
	if a.v.GetBool("json") {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(reg.List())
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "operator\tinputs\toutputs\tparams")
	for _, op := range reg.List() {
		var params []string
		for name := range op.Params.Properties {
			params = append(params, name)
		}
		slices.Sort(params)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", op.Name, ports(op.Inputs), ports(op.Outputs), strings.Join(params, ", "))
	}
	return tw.Flush()
}

func ports(ps []pipeline.Port) string {
	s := ""
	for i, p := range ps {
		if i > 0 {
			s += ", "
		}
		s += p.Name + ":" + string(p.Type)
		if p.Optional {
			s += "?"
		}
	}
	if s == "" {
		return "-"
	}
	return s
}

// runPipeline is run --pipeline FILE, in env.
func (a *app) runPipeline(ctx context.Context, path string, env pipeline.RunEnv) error {
	s, err := readSpec(path)
	if err != nil {
		return err
	}
	states, err := pipeline.RunSpec(ctx, s, pipeline.NewRegistry(), env)
	for _, st := range states {
		fmt.Fprintf(a.stdout, "%-16s %-14s %-7s %s\n", st.ID, st.Op, st.Status, st.Key[:min(12, len(st.Key))])
	}
	if err == nil {
		a.finishRun(s, states, env.Out)
	}
	return err
}

// runEnv builds what a pipeline run needs from the flags; done prints the
// pool's accounting.
func (a *app) runEnv(out string) (pipeline.RunEnv, func(), error) {
	env := pipeline.RunEnv{Out: out, Progress: a.stderr, Table: a.stdout, Log: a.log, Validate: a.validationEnv(),
		Rubrics: a.v.GetStringMapString("judge.rubrics")}
	dc, err := a.driveConfig(out)
	if err != nil {
		return env, nil, err
	}
	env.Drive = dc
	limits := modelLimits(dc.Farm)
	model, err := a.queryModel(limits)
	if err != nil {
		return env, nil, err
	}
	env.QueryModel = model
	responder, report, err := a.responder(out, dc.Run, limits)
	if err != nil {
		return env, nil, err
	}
	env.Deps = pipeline.Deps{Responder: responder, FollowUps: configgen.NewFollowUpWriter(model)}
	env.JudgeFor = func(endpoint string) (pipeline.Rejudger, error) {
		return a.judgeFor(endpoint, adapter.Set(dc.Run.Adapters))
	}
	return env, func() { report(a.stderr) }, nil
}

// judgeFor builds the judge of the config's judge: section, with its
// endpoint replaced by the pool member called endpoint when one is named;
// it reads recorded requests with r.
func (a *app) judgeFor(endpoint string, r judge.MessageReader) (pipeline.Rejudger, error) {
	cfg, err := a.loadPoolSettings(a.v.GetString("pool-file"))
	if err != nil {
		return nil, err
	}
	if endpoint != "" && endpoint != "judge" {
		i := slices.IndexFunc(cfg.Pool.Members, func(m pool.MemberConfig) bool { return m.Name == endpoint })
		if i < 0 {
			return nil, fmt.Errorf("judge endpoint %q is not a pool member", endpoint)
		}
		m := cfg.Pool.Members[i]
		cfg.JudgeModel = &m
	}
	if err := cfg.resolveKeys(false); err != nil {
		return nil, err
	}
	j, _, err := newJudge(cfg, nil, nil, a.log)
	if err != nil {
		return nil, err
	}
	return j.WithReader(r), nil
}
