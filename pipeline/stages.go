package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/jsonschema-go/jsonschema"
	"golang.org/x/sync/errgroup"

	"dialogfarm/adapter"
	"dialogfarm/analyst"
	"dialogfarm/configgen"
	"dialogfarm/dialog"
	"dialogfarm/judge"
	"dialogfarm/profiles"
	"dialogfarm/sft"
)

// MaxDialogues is the most dialogues one run plans (the plan node's n,
// run and plan --n). Each dialogue is driven in a real editor, seconds to
// minutes apiece (a million is weeks of a farm's time), and the configs,
// drive and export stages hold a run's configs in memory; a larger dataset
// is made of several runs with different seeds, merged.
const MaxDialogues = 1_000_000

// stageOperators are the stages as operators.
func stageOperators() []*Operator {
	def := sft.DefaultOptions()
	return []*Operator{
		{
			Name: "profile", Category: "source", Doc: "A behaviour profile: a built-in name or a profile YAML file.",
			Outputs:   []Port{{Name: "profile", Type: TypeProfile}},
			Params:    object([]string{"name"}, map[string]*jsonschema.Schema{"name": str("built-in profile name or profile YAML path", "default")}),
			Resources: map[string]string{"name": ResourceProfile},
			run:       runProfile,
		},
		{
			Name: "analyze", Category: "stage", Doc: "Fits a behaviour profile to interaction logs (JSONL); intent and difficulty by rules unless a model is configured.",
			Outputs: []Port{{Name: "profile", Type: TypeProfile}},
			Params: object([]string{"logs"}, map[string]*jsonschema.Schema{
				"logs": str("interaction log JSONL", nil),
				"name": str("name of the fitted profile", "fitted"),
				"seed": integer("seed written into the profile", 0, 1<<53, 42),
			}),
			Resources: map[string]string{"logs": ResourceFile},
			run:       runAnalyze,
		},
		{
			Name: "plan", Category: "stage", Doc: "Plans n dialogues stratified over the profile's cells, fitted to the repositories when given; or takes a plan file (plan or tune wrote it).",
			Inputs:  []Port{{Name: "profile", Type: TypeProfile}},
			Outputs: []Port{{Name: "plan", Type: TypePlan}},
			Params: object([]string{"n"}, map[string]*jsonschema.Schema{
				"n":     integer("number of dialogues (with file: the file's n)", 1, MaxDialogues, nil),
				"seed":  integer("random seed (default: the profile's)", 0, 1<<53, nil),
				"repos": strList("repositories the plan must fit (the configs node's; empty: plan blind to them)", 0),
				"file":  str("a plan file made for the profile (by plan or tune) to use instead of planning", nil),
			}),
			Resources: map[string]string{"repos": ResourceDir, "file": ResourceFile},
			run:       runPlan,
		},
		{
			Name: "configs", Category: "stage", Doc: "Turns the plan into chat configs: files, cursors, selections and queries from the repositories.",
			Inputs:  []Port{{Name: "plan", Type: TypePlan}},
			Outputs: []Port{{Name: "configs", Type: TypeConfigs}},
			Params: object([]string{"repos"}, map[string]*jsonschema.Schema{
				"repos": strList("local repository folders", 1),
				"seed":  integer("random seed (default: the plan's)", 0, 1<<53, nil),
			}),
			Resources: map[string]string{"repos": ResourceDir},
			fields: func(map[string][]string, map[string]any) map[string][]string {
				return map[string][]string{"configs": configFields}
			},
			run: runConfigs,
		},
		{
			Name: "drive", Category: "stage", Doc: "Drives the real editor through every config; the plugin's requests are answered by the run's responder and judged.",
			Inputs:  []Port{{Name: "configs", Type: TypeConfigs}},
			Outputs: []Port{{Name: "dialogues", Type: TypeDialogues}},
			Params: object(nil, map[string]*jsonschema.Schema{
				"plugin": str("editor plugin (adapter) to drive; empty: the installed one", ""),
			}),
			Resources: map[string]string{"plugin": ResourcePlugin},
			fields: func(map[string][]string, map[string]any) map[string][]string {
				return map[string][]string{"dialogues": judgedFields}
			},
			run: runDrive,
		},
		{
			Name: "judge", Category: "stage", Doc: "Re-judges recorded candidates with the run's judge (rules only when it has no model).",
			Inputs:  []Port{{Name: "dialogues", Type: TypeDialogues}},
			Outputs: []Port{{Name: "dialogues", Type: TypeDialogues}},
			Params: object(nil, map[string]*jsonschema.Schema{
				"rules_only": boolean("rule deductions only, no judge model", false),
				"endpoint":   str("judge model endpoint name from the config; empty: the config's judge", ""),
			}),
			Resources: map[string]string{"endpoint": ResourceEndpoint},
			fields: func(in map[string][]string, _ map[string]any) map[string][]string {
				return map[string][]string{"dialogues": union(in["dialogues"], []string{"score"})}
			},
			run: runJudge,
		},
		{
			Name: "export", Category: "stage", Doc: "Exports kept turns as SFT JSONL.",
			Inputs:  []Port{{Name: "dialogues", Type: TypeDialogues}},
			Outputs: []Port{{Name: "sft", Type: TypeSFT}},
			Params: object(nil, map[string]*jsonschema.Schema{
				"format":        str("SFT format", def.Format, sft.FormatOpenAI, sft.FormatShareGPT),
				"min_score":     number("lowest final score a kept turn may have", 0, 5, def.MinScore),
				"meta":          str("metadata placement", def.Meta, sft.MetaInline, sft.MetaSidecar, sft.MetaNone),
				"allow_offline": boolean("export the offline stand-in's placeholder answers", false),
			}),
			NeedsFields: map[string][]string{"dialogues": {"score"}},
			fields: func(map[string][]string, map[string]any) map[string][]string {
				return map[string][]string{"sft": {"messages"}}
			},
			run: runExport,
		},
		{
			Name: "report", Category: "stage", Doc: "Compares configs and kept dialogues with the profile (JSD per dimension, keep rate and cost per cell).",
			Inputs: []Port{{Name: "profile", Type: TypeProfile}, {Name: "configs", Type: TypeConfigs},
				{Name: "dialogues", Type: TypeDialogues, Optional: true}},
			Outputs: []Port{{Name: "report", Type: TypeReport}},
			Params: object(nil, map[string]*jsonschema.Schema{
				"min_score":     number("lowest score a kept turn may have", 0, 5, def.MinScore),
				"allow_offline": boolean("count the offline stand-in's turns as kept", false),
				"cells":         strList("dimensions forming the keep-rate and cost cells", 1, dims()...),
			}),
			fields: func(map[string][]string, map[string]any) map[string][]string {
				return map[string][]string{"report": nil}
			},
			run: runReport,
		},
	}
}

func runProfile(_ context.Context, x *nodeRun) error {
	var p struct{ Name string }
	if err := x.decode(&p); err != nil {
		return err
	}
	if _, err := profiles.Load(p.Name); err != nil {
		return err
	}
	x.out["profile"] = Value{Type: TypeProfile, Path: p.Name}
	return nil
}

func runAnalyze(ctx context.Context, x *nodeRun) error {
	var p struct {
		Logs, Name string
		Seed       int64
	}
	if err := x.decode(&p); err != nil {
		return err
	}
	cfg := analyst.DefaultAnalyzeConfig()
	cfg.LogsPath, cfg.Name, cfg.Seed = p.Logs, p.Name, p.Seed
	fit, err := analyst.Analyze(ctx, cfg, x.env.Log)
	if err != nil {
		return err
	}
	return analyst.WriteFit(x.out["profile"].Path, fit)
}

// stageConfig is the config of the shared stage functions for this node.
func (x *nodeRun) stageConfig() (stageConfig, error) {
	cfg := stageConfig{Out: x.env.Out, Progress: x.env.Progress, Table: x.env.Table}
	if v, ok := x.in["profile"]; ok {
		p, err := profiles.Load(v.Path)
		if err != nil {
			return cfg, err
		}
		cfg.Profile, cfg.ProfileName = p, v.Path
	}
	return cfg, nil
}

func runPlan(ctx context.Context, x *nodeRun) error {
	var p struct {
		N     int
		Seed  *int64
		Repos []string
		File  string
	}
	if err := x.decode(&p); err != nil {
		return err
	}
	cfg, err := x.stageConfig()
	if err != nil {
		return err
	}
	if p.File != "" {
		return usePlanFile(cfg.Profile, p.File, p.N, x.out["plan"].Path)
	}
	cfg.Plan = analyst.PlanConfig{N: p.N, Seed: cfg.Profile.Seed}
	if p.Seed != nil {
		cfg.Plan.Seed = *p.Seed
	}
	if len(p.Repos) > 0 {
		gc, err := x.configgenConfig(ctx, p.Repos)
		if err != nil {
			return err
		}
		if cfg.Index, _, err = configgen.IndexRepos(ctx, gc); err != nil {
			return err
		}
	}
	pl, err := makePlan(cfg, x.out["plan"].Path)
	if err != nil {
		return err
	}
	if cfg.Table != nil && pl.Fit != nil {
		return analyst.WriteMoves(cfg.Table, pl.Fit)
	}
	return nil
}

// usePlanFile checks that the plan file was made for the profile and
// holds n dialogues, and copies it to path.
func usePlanFile(p *profiles.Profile, file string, n int, path string) error {
	pl, err := profiles.ReadPlan(file)
	if err != nil {
		return err
	}
	if pl.ProfileHash != p.Hash() {
		return fmt.Errorf("plan %s was made for another profile (%s, sha256 %.12s), not %s (sha256 %.12s)",
			file, pl.Profile, pl.ProfileHash, p.Name, p.Hash())
	}
	if pl.N != n {
		return fmt.Errorf("plan %s holds %d dialogues, the node asks for n=%d", file, pl.N, n)
	}
	if err := pl.Check(p); err != nil {
		return fmt.Errorf("plan %s: %w", file, err)
	}
	return profiles.WritePlan(path, pl)
}

// configgenConfig is the configs stage's config on the sanitised copies
// of repos: the plan node indexes the files the configs node will use.
func (x *nodeRun) configgenConfig(ctx context.Context, repos []string) (configgen.Config, error) {
	cfg := configgen.DefaultConfig()
	r, err := redactor(x.env.Drive.Redact)
	if err != nil {
		return cfg, err
	}
	if cfg.Repos, err = sanitiseRepos(ctx, r, x.env.Out, repos, x.env.Log); err != nil {
		return cfg, err
	}
	cfg.Secrets = r.Detector()
	// Regions are chosen with the context the plugin is set to send.
	if n, ok := x.env.Drive.Run.Editor.Settings["askplugin.contextLines"].(int); ok {
		cfg.ContextLines = n
	}
	return cfg, nil
}

func runConfigs(ctx context.Context, x *nodeRun) error {
	var p struct {
		Repos []string
		Seed  *int64
	}
	if err := x.decode(&p); err != nil {
		return err
	}
	pl, err := profiles.ReadPlan(x.in["plan"].Path)
	if err != nil {
		return err
	}
	cfg := stageConfig{Out: x.env.Out, Configs: configgen.DefaultConfig(), Drive: x.env.Drive}
	cfg.Configs.Repos, cfg.Configs.Seed, cfg.Configs.Model = p.Repos, pl.Seed, x.env.QueryModel
	if p.Seed != nil {
		cfg.Configs.Seed = *p.Seed
	}
	cfg.Configs.CachePath = filepath.Join(x.env.Out, "queries.cache.jsonl")
	// Regions are chosen with the context the plugin is set to send.
	if n, ok := x.env.Drive.Run.Editor.Settings["askplugin.contextLines"].(int); ok {
		cfg.Configs.ContextLines = n
	}
	_, err = makeConfigs(ctx, cfg, pl, x.out["configs"].Path, x.env.Log)
	return err
}

func runDrive(ctx context.Context, x *nodeRun) error {
	configs, err := readConfigsFile(x.in["configs"].Path)
	if err != nil {
		return err
	}
	if x.env.Limit > 0 && len(configs) > x.env.Limit {
		configs = configs[:x.env.Limit]
	}
	dc := x.env.Drive
	dc.Run.Out = filepath.Dir(x.out["dialogues"].Path)
	dc.Run.Progress = progressPrinter(x.env.Progress)
	if x.env.DriveProgress != nil {
		show := dc.Run.Progress
		dc.Run.Progress = func(p driverProgress) { show(p); x.env.DriveProgress(x.node.ID, p) }
	}
	x.result, err = Drive(ctx, dc, configs, x.env.Deps.Responder, x.env.Deps.FollowUps, x.env.Log)
	return err
}

// Rejudger judges a recorded dialogue's candidates again.
type Rejudger interface {
	Rejudge(ctx context.Context, d dialog.Dialogue) (dialog.Dialogue, error)
}

var _ Rejudger = (*judge.Judge)(nil)

func runJudge(ctx context.Context, x *nodeRun) error {
	var p struct {
		RulesOnly bool `json:"rules_only"`
		Endpoint  string
	}
	if err := x.decode(&p); err != nil {
		return err
	}
	var j Rejudger
	if x.env.JudgeFor != nil && !p.RulesOnly {
		var err error
		if j, err = x.env.JudgeFor(p.Endpoint); err != nil {
			return err
		}
	}
	if j == nil {
		rj, err := judge.New(judge.DefaultConfig(), nil, x.env.Log)
		if err != nil {
			return err
		}
		// Requests are read as the run's plugins write messages.
		j = rj.WithReader(adapter.Set(x.env.Drive.Run.Adapters))
	}
	ds, err := readDialogues(x.in["dialogues"].Path)
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for i := range ds {
		g.Go(func() (err error) {
			ds[i], err = j.Rejudge(gctx, ds[i])
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return writeDialogues(x.out["dialogues"].Path, ds)
}

func (x *nodeRun) exportOptions() (sft.Options, error) {
	var p struct {
		Format, Meta string
		MinScore     float64 `json:"min_score"`
		AllowOffline bool    `json:"allow_offline"`
	}
	if err := x.decode(&p); err != nil {
		return sft.Options{}, err
	}
	return sft.Options{Format: p.Format, MinScore: p.MinScore, Meta: p.Meta, AllowOffline: p.AllowOffline}, nil
}

func runExport(ctx context.Context, x *nodeRun) error {
	opt, err := x.exportOptions()
	if err != nil {
		return err
	}
	if x.env.Drive.Redact != nil {
		opt.Secrets = x.env.Drive.Redact.Detector()
	}
	// A run's sft.jsonl is written even when it holds no record; the
	// dataset node is where a run that kept nothing fails (unless its
	// allow_empty), with the reasons.
	opt.AllowEmpty = true
	x.result, err = sft.ExportFiles(ctx, x.in["dialogues"].Path, x.out["sft"].Path, opt)
	return err
}

func runReport(_ context.Context, x *nodeRun) error {
	var p struct {
		MinScore     float64 `json:"min_score"`
		AllowOffline bool    `json:"allow_offline"`
		Cells        []string
	}
	if err := x.decode(&p); err != nil {
		return err
	}
	cfg, err := x.stageConfig()
	if err != nil {
		return err
	}
	cfg.Report = analyst.DefaultReportConfig()
	if len(p.Cells) > 0 {
		cfg.Report.CellDims = p.Cells
	}
	opt := sft.DefaultOptions()
	opt.MinScore, opt.AllowOffline = p.MinScore, p.AllowOffline
	cfg.Report.KeptTurns = func(d dialog.Dialogue) int { return sft.KeptTurns(d, opt) }
	cfg.Export = opt
	dialogues := ""
	if v, ok := x.in["dialogues"]; ok {
		dialogues = v.Path
	}
	_, err = writeReport(cfg, x.in["configs"].Path, dialogues, x.out["report"].Path)
	return err
}

func readConfigsFile(path string) ([]dialog.ChatConfig, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read configs: %w", err)
	}
	defer f.Close()
	return dialog.ReadConfigs(f, path)
}
