package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"go.uber.org/zap"

	"dialogfarm/dialog"
	"dialogfarm/dialog/vocab"
	"dialogfarm/internal/jsonl"
	"dialogfarm/judge"
	"dialogfarm/profiles"
	"dialogfarm/tasks"
	"dialogfarm/tasks/sandbox"
)

// newExecJudge loads the execution judge on a tasks build folder.
func newExecJudge(dir string, log *zap.Logger) (*tasks.ExecJudge, error) {
	return newExecJudgePython(dir, "", log)
}

// newExecJudgePython is newExecJudge with the interpreter that runs the
// Python tests ("" for /usr/bin/python3).
func newExecJudgePython(dir, python string, log *zap.Logger) (*tasks.ExecJudge, error) {
	sb, err := sandbox.New(sandbox.DefaultConfig())
	if err != nil {
		return nil, err
	}
	if sb.Mode() != "bwrap" {
		log.Warn("execution judge without bubblewrap: the file system is not isolated", zap.String("sandbox", sb.Mode()))
	}
	return tasks.LoadExecJudge(dir, sb, python, log.Named("exec"))
}

func tasksCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tasks",
		Short: "Execution-verified coding tasks from a repository's own tests",
		Long: `tasks traces a repository's tests (Go modules, or Python projects with pytest),
plans incremental steps from the runtime dependency graph, and builds per step a
skeleton, a reference patch, fail-to-pass/pass-to-pass lists and a requirement
document; a three-state audit decides which steps are exported.

  dialogfarm tasks trace --repo DIR --out WORK   → WORK/graph.json
  dialogfarm tasks plan --out WORK               → WORK/plan.json
  dialogfarm tasks build --out WORK              → WORK/steps/, audit.json, instances.jsonl, configs.jsonl
  dialogfarm tasks check --out WORK              → each config's reference answer scored by the execution judge`,
	}
	trace := &cobra.Command{Use: "trace", Short: "Run every test alone (3×) and record the functions it exercises", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return a.tasksTrace(c) }}
	tf := trace.Flags()
	tf.String("repo", "", "repository to trace (required)")
	tf.StringSlice("packages", []string{"./..."}, "Go package patterns to trace")
	tf.Int("runs", 3, "runs per test; a test whose outcome differs is dropped as flaky")
	tf.Duration("test-timeout", 0, "timeout of one test run; 0 means 2m")
	tf.Int("jobs", 1, "tests traced at once (each test's own runs stay sequential)")
	plan := &cobra.Command{Use: "plan", Short: "Group tests by covered functions into ordered steps", Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error { return a.tasksPlan() }}
	build := &cobra.Command{Use: "build", Short: "Build, audit and export the steps' tasks", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return a.tasksBuild(c) }}
	bf := build.Flags()
	bf.String("profile", "default", "profile (file or built-in name) for the chat configs' query style and locale")
	bf.Int("runs", 3, "runs of the original state in the audit")
	bf.Duration("test-timeout", 0, "timeout of one test run; 0 means 2m")
	bf.String("requirement-model", "", "model that writes the requirement documents through the gateway (empty: the deterministic template)")
	bf.String("requirement-model-base-url", "", "OpenAI-compatible base URL of that model")
	bf.String("requirement-api-key-env", "", "environment variable holding that model's API key (empty: no key)")
	check := &cobra.Command{Use: "check", Short: "Score each generate/fix config's reference answer with the execution judge", Args: cobra.NoArgs,
		Long: `check gives the execution judge, for every generate and fix config of a build, the reference
code of the functions the config's query asks for as the answer, with the open file as context,
and prints the score and deductions. It fails when a reference answer does not pass its step's
tests: the config asks for less than its step needs.`,
		RunE: func(c *cobra.Command, _ []string) error { return a.tasksCheck(c) }}
	for _, c := range []*cobra.Command{trace, plan, build, check} {
		c.Flags().String("out", "out/tasks", "work directory (graph.json, plan.json, steps/)")
		c.Flags().String("python", "/usr/bin/python3", "Python interpreter that has pytest")
		cmd.AddCommand(c)
	}
	return cmd
}

func (a *app) tasksTrace(c *cobra.Command) error {
	repo, out := a.v.GetString("repo"), a.v.GetString("out")
	if repo == "" {
		return errors.New("tasks trace: --repo is required")
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	g, err := tasks.Trace(c.Context(), repo, tasks.TraceOptions{
		Runs: a.v.GetInt("runs"), Packages: a.v.GetStringSlice("packages"), TestTimeout: a.v.GetDuration("test-timeout"),
		Python: a.v.GetString("python"), Jobs: a.v.GetInt("jobs"), Log: a.log,
	})
	if err != nil {
		return err
	}
	path := filepath.Join(out, "graph.json")
	if err := tasks.WriteJSON(path, g); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "%s\n", g.Summarize())
	for _, d := range g.Dropped {
		fmt.Fprintf(a.stdout, "dropped %s: %s %s\n", d.Test, d.Reason, firstLine(d.Detail))
	}
	fmt.Fprintf(a.stdout, "graph → %s\n", path)
	return nil
}

func firstLine(s string) string {
	for i, r := range s {
		if r == '\n' {
			return s[:i]
		}
	}
	return s
}

func (a *app) tasksPlan() error {
	out := a.v.GetString("out")
	g, err := tasks.ReadGraph(filepath.Join(out, "graph.json"))
	if err != nil {
		return err
	}
	p := tasks.MakePlan(g)
	path := filepath.Join(out, "plan.json")
	if err := tasks.WriteJSON(path, p); err != nil {
		return err
	}
	merged := 0
	for _, s := range p.Steps {
		merged += len(s.Merged)
	}
	fmt.Fprintf(a.stdout, "%d steps from %d tests (%d tests merged into earlier steps, %d scaffold tests) → %s\n",
		len(p.Steps), len(g.Tests), merged, len(p.Scaffold), path)
	return nil
}

func (a *app) tasksBuild(c *cobra.Command) error {
	ctx, out := c.Context(), a.v.GetString("out")
	g, err := tasks.ReadGraph(filepath.Join(out, "graph.json"))
	if err != nil {
		return err
	}
	p, err := tasks.ReadPlan(filepath.Join(out, "plan.json"))
	if errors.Is(err, os.ErrNotExist) {
		p = tasks.MakePlan(g)
	} else if err != nil {
		return err
	}
	var prof *profiles.Profile
	if name := a.v.GetString("profile"); name != "" {
		if prof, err = profiles.Load(name); err != nil {
			return err
		}
	}
	python := a.v.GetString("python")
	if err := os.RemoveAll(filepath.Join(out, "steps")); err != nil {
		return err
	}
	m, err := stageModel("requirements", a.v.GetString("requirement-model-base-url"), a.v.GetString("requirement-model"),
		a.v.GetString("requirement-api-key-env"), 0, a.keyAllow, nil, a.log)
	if err != nil {
		return err
	}
	opt := tasks.BuildOptions{Python: python, Log: a.log}
	if m != nil {
		opt.Model = m
	}
	b, err := tasks.BuildTasks(ctx, g, p, out, opt)
	if err != nil {
		return err
	}
	audit, err := tasks.AuditBuild(ctx, b, tasks.AuditOptions{Runs: a.v.GetInt("runs"),
		Runner: tasks.NewRunner(g, python, a.v.GetDuration("test-timeout")), Log: a.log})
	if err != nil {
		return err
	}
	if err := tasks.WriteJSON(filepath.Join(out, "audit.json"), audit); err != nil {
		return err
	}
	audit.Print(a.stdout)
	res, err := tasks.Export(ctx, b, audit, out, tasks.ExportOptions{Profile: prof, Materialize: true})
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "exported %d instances → %s, %d chat configs → %s\n", res.Instances,
		filepath.Join(out, "instances.jsonl"), res.Configs, filepath.Join(out, "configs.jsonl"))
	return nil
}

func (a *app) tasksCheck(c *cobra.Command) error {
	ctx, out := c.Context(), a.v.GetString("out")
	ej, err := newExecJudgePython(out, a.v.GetString("python"), a.log)
	if err != nil {
		return err
	}
	cfgs, err := jsonl.Read[dialog.ChatConfig](filepath.Join(out, "configs.jsonl"))
	if err != nil {
		return err
	}
	j, err := judge.New(judge.DefaultConfig(), nil, a.log.Named("judge"))
	if err != nil {
		return err
	}
	j.WithExecutor(ej)
	checked, passed, five := 0, 0, 0
	for _, cfg := range cfgs {
		if cfg.Intent != vocab.IntentGenerate && cfg.Intent != vocab.IntentFix {
			continue
		}
		checked++
		asked := ej.Asked(cfg)
		v, err := scoreReference(ctx, j, ej, cfg, asked)
		if err != nil {
			fmt.Fprintf(a.stdout, "%s\t%s\terror: %v\n", cfg.ID, strings.Join(asked, ","), err)
			continue
		}
		var ded []string
		for _, d := range v.Deductions {
			ded = append(ded, d.Rule+" ("+d.Reason+")")
		}
		fmt.Fprintf(a.stdout, "%s\t%s\tscore %g\t%s\n", cfg.ID, strings.Join(asked, ","), v.Score, strings.Join(ded, "; "))
		if v.Execution != nil && v.Execution.Passed {
			passed++
		}
		if v.Score == 5 {
			five++
		}
	}
	fmt.Fprintf(a.stdout, "%d generate/fix configs: the reference answer passes the step's tests in %d, scores 5 in %d\n", checked, passed, five)
	if passed < checked {
		return fmt.Errorf("tasks check: %d of %d reference answers do not pass their step's tests", checked-passed, checked)
	}
	return nil
}

// scoreReference judges the reference code of the functions asked for as
// the answer to cfg's first turn, with the open file as context.
func scoreReference(ctx context.Context, j *judge.Judge, ej *tasks.ExecJudge, cfg dialog.ChatConfig, asked []string) (dialog.Verdict, error) {
	answer, err := ej.ReferenceAnswer(ctx, cfg, asked)
	if err != nil {
		return dialog.Verdict{}, err
	}
	prompt, err := tasks.ConfigPrompt(cfg)
	if err != nil {
		return dialog.Verdict{}, err
	}
	s := judge.Subject{Intent: cfg.Intent, Language: cfg.Language, Locale: cfg.Locale, ConfigID: cfg.ID, Query: cfg.Turns[0].Query,
		Messages: []dialog.Message{{Role: "user", Content: prompt}}}
	vs, err := j.Judge(ctx, s, []dialog.Candidate{{Member: "reference", Text: answer}})
	if err != nil {
		return dialog.Verdict{}, err
	}
	return vs[0], nil
}
