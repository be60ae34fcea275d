// Package pipeline runs dialogfarm end to end. The order of the stages is
// written once, in DefaultSpec, as a pipeline (a DAG of operators) that
// RunSpec runs; `dialogfarm run` is RunDefault, `run --pipeline FILE` is
// RunSpec on the file:
//
//	profile → plan → configs → drive → export
//	                       └──────────┴→ report
//	                                 └──────→ dataset
//
// Each node reads its inputs' files in the run folder and writes its own
// (the default pipeline's nodes the folder's usual names: plan.json,
// configs.jsonl, dialogues.jsonl, sft.jsonl, report.json, dataset/), so a
// run killed at any point and started again with the same arguments
// resumes: a node whose inputs and params are unchanged is not run again,
// the drive node skips configs already recorded ok, and a plan or configs
// file already written is reused (they are deterministic and written
// atomically). RunDefault refuses a run folder made with other arguments
// (run.json) rather than mixing them in.
package pipeline

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"go.uber.org/zap"

	"dialogfarm/analyst"
	"dialogfarm/analyst/realism"
	"dialogfarm/capture"
	"dialogfarm/configgen"
	"dialogfarm/dataset"
	"dialogfarm/dialog"
	"dialogfarm/driver"
	"dialogfarm/driver/workbench"
	"dialogfarm/internal/buildinfo"
	"dialogfarm/internal/runfiles"
	"dialogfarm/profiles"
	"dialogfarm/sft"
)

// stageConfig is what the stage functions the operators share take.
type stageConfig struct {
	// Out is the run folder.
	Out string
	// Profile is the behaviour profile; ProfileName names it in the
	// manifest (a path or a built-in name).
	Profile     *profiles.Profile
	ProfileName string
	Plan        analyst.PlanConfig
	// Index, when set, is what the repositories can realise: the plan
	// is fitted to it (analyst.PlanForRepos).
	Index   *profiles.RepoIndex
	Configs configgen.Config
	Drive   DriveConfig
	Export  sft.Options
	Report  analyst.ReportConfig
	// Dataset configures the dataset folder (its Export is replaced by
	// Export, its Run by what the run folder holds).
	Dataset dataset.Options
	// Progress receives progress lines of the long stages; nil is silent.
	Progress io.Writer
	// Table receives the fidelity report's table; nil is silent.
	Table io.Writer
}

// Files in the run folder.
const (
	ManifestFile  = "run.json"
	PlanFile      = "plan.json"
	ConfigsFile   = "configs.jsonl"
	DialoguesFile = "dialogues.jsonl"
	SFTFile       = "sft.jsonl"
	ReportFile    = "report.json"
	DatasetDir    = "dataset"
)

// Deps are the parts a run needs that the caller builds: who answers the
// plugin, and who writes follow-up queries.
type Deps struct {
	Responder capture.Responder
	FollowUps workbench.FollowUps
}

// RunDefault runs the default pipeline of o (DefaultSpec) into env.Out:
// the run folder's manifest (run.json) is written on the first run and
// must match on every later one (ErrOtherRun otherwise; its export
// settings are those of the latest run), then RunSpec runs the nodes.
func RunDefault(ctx context.Context, o DefaultOptions, env RunEnv) ([]NodeState, error) {
	p, err := profiles.Load(o.Profile)
	if err != nil {
		return nil, err
	}
	m := Manifest{Profile: o.Profile, ProfileHash: p.Hash(), N: o.N, Seed: p.Seed, Repos: o.Repos,
		Format: o.Export.Format, Meta: o.Export.Meta, MinScore: &o.Export.MinScore, AllowOffline: o.Export.AllowOffline}
	if o.Seed != nil {
		m.Seed = *o.Seed
	}
	if o.PlanFile != "" {
		data, err := os.ReadFile(o.PlanFile)
		if err != nil {
			return nil, fmt.Errorf("read plan: %w", err)
		}
		sum := sha256.Sum256(data)
		m.Plan = hex.EncodeToString(sum[:])
	}
	if err := runfiles.MkdirAll(env.Out); err != nil {
		return nil, fmt.Errorf("create run folder: %w", err)
	}
	if err := checkManifest(filepath.Join(env.Out, ManifestFile), m); err != nil {
		return nil, err
	}
	return RunSpec(ctx, DefaultSpec(o), NewRegistry(), env)
}

// Result is what the default pipeline's stages reported, read from the
// node states of a run (a node cached from an earlier run reports what it
// reported then).
type Result struct {
	Drive   driver.Summary
	Export  sft.Summary
	Dataset dataset.Stats
}

// ResultOf reads the results of the nodes with the default pipeline's ids
// (drive, export, dataset) from a run's node states.
func ResultOf(states []NodeState) (Result, error) {
	var res Result
	for _, st := range states {
		var v any
		switch st.ID {
		case "drive":
			v = &res.Drive
		case "export":
			v = &res.Export
		case "dataset":
			v = &res.Dataset
		default:
			continue
		}
		if st.Result == nil {
			continue
		}
		data, err := json.Marshal(st.Result)
		if err == nil {
			err = json.Unmarshal(data, v)
		}
		if err != nil {
			return res, fmt.Errorf("node %s: result: %w", st.ID, err)
		}
	}
	return res, nil
}

// makePlan reuses the plan file when it exists, else plans (fitted to
// cfg.Index when set) and writes it.
func makePlan(cfg stageConfig, path string) (*profiles.Plan, error) {
	if _, err := os.Stat(path); err == nil {
		return profiles.ReadPlan(path)
	}
	var pl *profiles.Plan
	var err error
	if cfg.Index != nil {
		pl, err = analyst.PlanForRepos(cfg.Profile, cfg.Index, cfg.Plan)
	} else {
		pl, err = analyst.MakePlan(cfg.Profile, cfg.Plan)
	}
	if err != nil {
		return nil, err
	}
	return pl, profiles.WritePlan(path, pl)
}

// makeConfigs makes the sanitised copies of the repositories (see
// sanitiseRepos; on a resumed run it checks and reuses them), then reuses
// the configs file when it exists, else generates it from the copies, so
// that the configs' positions are those of the text the editor shows.
func makeConfigs(ctx context.Context, cfg stageConfig, pl *profiles.Plan, path string, log *zap.Logger) ([]dialog.ChatConfig, error) {
	r, err := redactor(cfg.Drive.Redact)
	if err != nil {
		return nil, err
	}
	if cfg.Configs.Repos, err = sanitiseRepos(ctx, r, cfg.Out, cfg.Configs.Repos, log); err != nil {
		return nil, err
	}
	cfg.Configs.Secrets = r.Detector()
	if f, err := os.Open(path); err == nil {
		defer f.Close()
		return dialog.ReadConfigs(f, path)
	}
	res, err := configgen.Generate(ctx, pl, cfg.Configs, log)
	if err != nil {
		return nil, err
	}
	log.Info("configs generated", zap.String("stats", strings.ReplaceAll(strings.TrimSpace(res.Stats.Summary()), "\n", "; ")))
	return res.Configs, configgen.WriteConfigs(path, res.Configs)
}

// writeReport builds the fidelity report, prints its table and writes it.
func writeReport(cfg stageConfig, configsPath, dialoguesPath, path string) (*analyst.Report, error) {
	configs, dialogues, err := analyst.ReadRun(configsPath, dialoguesPath)
	if err != nil {
		return nil, err
	}
	r := analyst.BuildReport(cfg.Profile, configs, dialogues, cfg.Report)
	r.Version = buildinfo.Version()
	if logs, err := analyst.FittedLogs(cfg.ProfileName); err != nil {
		return nil, err
	} else if logs != "" {
		if r.Realism, err = analyst.Realism(configs, logs, analyst.Mapping{}, realism.DefaultThresholds()); err != nil {
			return nil, err
		}
	}
	if r.Secrets, err = SecretCounts(cfg.Out, dialoguesPath, cfg.Export); err != nil {
		return nil, err
	}
	if r.Fit, err = PlanFit(cfg.Out); err != nil {
		return nil, err
	}
	if cfg.Table != nil {
		if err := r.WriteTable(cfg.Table); err != nil {
			return nil, err
		}
		if err := r.Secrets.WriteSummary(cfg.Table); err != nil {
			return nil, err
		}
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode report: %w", err)
	}
	if err := runfiles.WriteAtomic(path, append(data, '\n')); err != nil {
		return nil, err
	}
	return r, WriteReportHTML(r, ReportHTMLPath(path))
}

// ReportHTMLPath is where the HTML report goes next to a JSON report:
// "report.json" → "report.html".
func ReportHTMLPath(jsonPath string) string {
	return strings.TrimSuffix(jsonPath, filepath.Ext(jsonPath)) + ".html"
}

// WriteReportHTML writes r as a self-contained HTML page to path.
func WriteReportHTML(r *analyst.Report, path string) error {
	var b bytes.Buffer
	if err := r.WriteHTML(&b); err != nil {
		return err
	}
	return runfiles.WriteAtomic(path, b.Bytes())
}

// writeDataset builds the run's dataset folder, its card naming what the
// run folder says about the run.
func writeDataset(ctx context.Context, cfg stageConfig, dialoguesPath, dir string) (dataset.Stats, error) {
	opt := cfg.Dataset
	ri, err := dataset.ReadRunInfo(cfg.Out)
	if err != nil {
		return dataset.Stats{}, err
	}
	if cfg.Profile != nil {
		ri.Profile, ri.ProfileHash = cfg.ProfileName, cfg.Profile.Hash()
	}
	ri.RubricVersion, ri.Version = opt.Run.RubricVersion, buildinfo.Version()
	opt.Export, opt.Run = cfg.Export, ri
	return dataset.BuildFiles(ctx, dialoguesPath, dir, opt)
}

// PlanFit is the fit of the run folder's plan to its repositories (what
// they hold and what moved), nil when the folder has no plan or the plan
// was not fitted.
func PlanFit(dir string) (*profiles.Fit, error) {
	path := filepath.Join(dir, PlanFile)
	if _, err := os.Stat(path); err != nil {
		return nil, nil
	}
	pl, err := profiles.ReadPlan(path)
	if err != nil {
		return nil, err
	}
	return pl.Fit, nil
}
