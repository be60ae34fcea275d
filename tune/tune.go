package tune

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"

	"go.uber.org/zap"

	"dialogfarm/analyst"
	"dialogfarm/dialog"
	"dialogfarm/internal/jsonl"
	"dialogfarm/internal/runfiles"
	"dialogfarm/pipeline"
	"dialogfarm/profiles"
	"dialogfarm/sft"
)

// Files in a tuning folder.
const (
	ManifestFile = "tune.json"
	PilotDir     = "pilot"
	PlanFile     = "tuned-plan.json"
	ReportFile   = "tune-report.json"
)

// Config is a tuning run.
type Config struct {
	// Out is the tuning folder: the pilot and each round's run folders,
	// the tuned plan and the report.
	Out string
	// Run are the default pipeline's arguments (profile, repositories,
	// seed, export); its N and PlanFile are set per round.
	Run pipeline.DefaultOptions
	// Pilot is the number of dialogues of the pilot and of each later
	// round's tranche.
	Pilot int
	// MaxDialogues and BudgetUSD bound the whole tuning (pilot and
	// rounds) and the tuned plan together; at least one is needed (0:
	// no bound).
	MaxDialogues int
	BudgetUSD    float64
	// Rounds is how many times to re-plan: 1 plans once after the pilot;
	// each further round first runs Pilot dialogues of the current tuned
	// plan and re-estimates from everything driven so far.
	Rounds int
	// MaxFactor caps oversampling (DefaultMaxFactor when 0); a value
	// whose keep rate is below MinKeep is not oversampled at all.
	MaxFactor, MinKeep float64
	// Sigma fixes the keep-rate model's prior standard deviation; 0
	// estimates one per dimension from the pilot (see Model).
	Sigma float64
	// MaxJSD is the per-dimension divergence (bits) of the expected kept
	// shares from the fitted ones the tuned plan aims at.
	MaxJSD float64
}

// DefaultConfig: a pilot of 40 dialogues, one round, oversampling at
// most 4×, no oversampling below a keep rate of 0.1, prior scales
// estimated, JSD 0.02.
func DefaultConfig() Config {
	return Config{Pilot: 40, Rounds: 1, MaxFactor: DefaultMaxFactor, MinKeep: DefaultMinKeep, MaxJSD: 0.02}
}

// Validate checks the numbers.
func (c Config) Validate() error {
	switch {
	case c.Out == "":
		return errors.New("tune: the tuning folder is required")
	case c.Pilot < 1:
		return fmt.Errorf("tune: pilot %d: want at least 1 dialogue", c.Pilot)
	case c.MaxDialogues <= 0 && c.BudgetUSD <= 0:
		return errors.New("tune: give a budget: --max-dialogues and/or --budget-usd")
	case c.MaxDialogues > 0 && c.MaxDialogues <= c.Pilot:
		return fmt.Errorf("tune: max dialogues %d leave nothing after a pilot of %d", c.MaxDialogues, c.Pilot)
	case c.Rounds < 1:
		return fmt.Errorf("tune: rounds %d: want at least 1", c.Rounds)
	case c.MaxFactor < 1:
		return fmt.Errorf("tune: max factor %v: want at least 1", c.MaxFactor)
	case c.MinKeep < 0 || c.MinKeep >= 1:
		return fmt.Errorf("tune: min keep %v: want 0 to below 1", c.MinKeep)
	case c.Sigma < 0:
		return fmt.Errorf("tune: sigma %v: want 0 (estimate) or more", c.Sigma)
	}
	return nil
}

// RoundRunner runs the default pipeline with o into the run folder out,
// as `run` does (pipeline.RunDefault with the run's editor, pool and
// judge).
type RoundRunner func(ctx context.Context, o pipeline.DefaultOptions, out string) error

// manifest is tune.json: the arguments that decide the tuning; a later
// tune on the folder must repeat them.
type manifest struct {
	Profile      string   `json:"profile"`
	ProfileHash  string   `json:"profile_hash"`
	Repos        []string `json:"repos"`
	Seed         *int64   `json:"seed,omitempty"`
	Pilot        int      `json:"pilot"`
	MaxDialogues int      `json:"max_dialogues,omitempty"`
	BudgetUSD    float64  `json:"budget_usd,omitempty"`
	Rounds       int      `json:"rounds"`
	MaxFactor    float64  `json:"max_factor"`
	MinKeep      float64  `json:"min_keep"`
	Sigma        float64  `json:"sigma"`
	MinScore     float64  `json:"min_score"`
}

// Run tunes: it runs the pilot (Pilot dialogues of the plan fitted to the
// repositories) into OUT/pilot through run, fits the keep-rate model to
// what the judge kept, and re-plans; with more rounds it runs Pilot
// dialogues of the tuned plan into OUT/round-K and re-plans on all
// dialogues so far. It writes the last tuned plan (OUT/tuned-plan.json,
// the format plan writes; `run --plan` runs it) and the report
// (OUT/tune-report.json). Killed and run again with the same arguments it
// resumes: each round's run folder resumes as run does (no dialogue
// recorded ok is driven again) and a round's plan, once written, is
// reused.
func Run(ctx context.Context, cfg Config, runRound RoundRunner, log *zap.Logger) (*Report, error) {
	if log == nil {
		log = zap.NewNop()
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	p, err := profiles.Load(cfg.Run.Profile)
	if err != nil {
		return nil, err
	}
	if err := runfiles.MkdirAll(cfg.Out); err != nil {
		return nil, fmt.Errorf("create tuning folder: %w", err)
	}
	m := manifest{Profile: cfg.Run.Profile, ProfileHash: p.Hash(), Repos: cfg.Run.Repos, Seed: cfg.Run.Seed, Pilot: cfg.Pilot,
		MaxDialogues: cfg.MaxDialogues, BudgetUSD: cfg.BudgetUSD, Rounds: cfg.Rounds, MaxFactor: cfg.MaxFactor, MinKeep: cfg.MinKeep, Sigma: cfg.Sigma,
		MinScore: cfg.Run.Export.MinScore}
	if err := checkManifest(filepath.Join(cfg.Out, ManifestFile), m); err != nil {
		return nil, err
	}
	seed := p.Seed
	if cfg.Run.Seed != nil {
		seed = *cfg.Run.Seed
	}
	keptTurns := func(d dialog.Dialogue) int { return sft.KeptTurns(d, cfg.Run.Export) }

	// The pilot: run as `run` would, on fewer dialogues.
	pilot := cfg.Run
	pilot.N, pilot.PlanFile = cfg.Pilot, ""
	dirs := []string{filepath.Join(cfg.Out, PilotDir)}
	log.Info("tune: pilot", zap.Int("dialogues", cfg.Pilot), zap.String("out", dirs[0]))
	if err := runRound(ctx, pilot, dirs[0]); err != nil {
		return nil, fmt.Errorf("tune: pilot: %w", err)
	}
	pilotPlan, err := profiles.ReadPlan(filepath.Join(dirs[0], pipeline.PlanFile))
	if err != nil {
		return nil, fmt.Errorf("tune: pilot: %w", err)
	}
	fitted, fit := p, pilotPlan.Fit
	if fit != nil && fit.Index != nil {
		if fitted, fit, err = analyst.FitToRepos(p, fit.Index); err != nil {
			return nil, err
		}
		fit.Asked, fit.Capacity = pilotPlan.Fit.Asked, pilotPlan.Fit.Capacity
	}
	var st *state
	for round := 1; ; round++ {
		st, err = estimate(dirs, p, fit, keptTurns, cfg.Sigma)
		if err != nil {
			return nil, err
		}
		w, err := Reweight(fitted, fit, st.model, st.obs, cfg.MaxFactor, cfg.MinKeep, seed)
		if err != nil {
			return nil, fmt.Errorf("tune: round %d: %w", round, err)
		}
		if round == cfg.Rounds {
			return finish(cfg, p, fitted, fit, st, w, seed, round)
		}
		// A tranche of the current tuned plan, driven and measured.
		dir := filepath.Join(cfg.Out, fmt.Sprintf("round-%d", round+1))
		planPath := filepath.Join(dir, "tranche-plan.json")
		if err := writeOnce(planPath, func() (*profiles.Plan, error) {
			return TunedPlan(p, fit, w, st.model, cfg.Pilot, seed+int64(round), round, cfg.MaxFactor)
		}); err != nil {
			return nil, err
		}
		o := cfg.Run
		o.N, o.PlanFile, o.Seed = cfg.Pilot, planPath, nil
		log.Info("tune: round", zap.Int("round", round+1), zap.Int("dialogues", cfg.Pilot), zap.String("out", dir))
		if err := runRound(ctx, o, dir); err != nil {
			return nil, fmt.Errorf("tune: round %d: %w", round+1, err)
		}
		dirs = append(dirs, dir)
	}
}

// state is what the rounds so far measured.
type state struct {
	dirs      []string
	obs       []Obs
	dialogues []dialog.Dialogue
	configs   []dialog.ChatConfig
	model     *Model
	cost      costModel
	spentUSD  float64
	keptTurns func(dialog.Dialogue) int
}

// estimate reads every round's dialogues and fits the model.
func estimate(dirs []string, p *profiles.Profile, fit *profiles.Fit, keptTurns func(dialog.Dialogue) int, sigma float64) (*state, error) {
	st := &state{dirs: dirs, keptTurns: keptTurns}
	for _, dir := range dirs {
		configs, err := jsonl.Read[dialog.ChatConfig](filepath.Join(dir, pipeline.ConfigsFile))
		if err != nil {
			return nil, err
		}
		ds, _, err := jsonl.ReadLog[dialog.Dialogue](filepath.Join(dir, pipeline.DialoguesFile))
		if err != nil {
			return nil, err
		}
		st.configs = append(st.configs, configs...)
		st.dialogues = append(st.dialogues, latest(ds)...)
	}
	st.obs = Observe(st.dialogues, keptTurns)
	if len(st.obs) == 0 {
		return nil, errors.New("tune: no dialogue of the pilot finished ok: nothing to estimate keep rates from")
	}
	st.model = FitModel(st.obs, sigma)
	st.cost = newCostModel(st.obs)
	for _, o := range st.obs {
		st.spentUSD += o.CostUSD
	}
	return st, nil
}

// latest keeps the last record of each config (a resumed drive appends a
// new record for a config that failed before).
func latest(ds []dialog.Dialogue) []dialog.Dialogue {
	last := map[string]int{}
	for i, d := range ds {
		last[d.ConfigID] = i
	}
	var out []dialog.Dialogue
	for i, d := range ds {
		if last[d.ConfigID] == i {
			out = append(out, d)
		}
	}
	return out
}

// finish sizes the tuned plan to what is left of the budget, writes it
// and the report.
func finish(cfg Config, p, fitted *profiles.Profile, fit *profiles.Fit, st *state, w *Weighting, seed int64, round int) (*Report, error) {
	spent := len(st.dialogues)
	n := 1 << 30
	if cfg.MaxDialogues > 0 {
		n = cfg.MaxDialogues - spent
	}
	if fit != nil && fit.Capacity > 0 {
		n = min(n, fit.Capacity)
	}
	// The cost of one dialogue of the weighting, from a plan of it.
	probe, err := TunedPlan(p, fit, w, st.model, rakeSample, seed, round, cfg.MaxFactor)
	if err != nil {
		return nil, err
	}
	if cfg.BudgetUSD > 0 && st.cost.PerTurn > 0 {
		per := expectedCost(probe, st.cost) / float64(probe.N)
		n = min(n, int((cfg.BudgetUSD-st.spentUSD)/per))
	}
	if n <= 0 {
		return nil, fmt.Errorf("tune: the pilot and rounds spent the budget (%d dialogues, %.4f USD): nothing is left for a tuned plan", spent, st.spentUSD)
	}
	path := filepath.Join(cfg.Out, PlanFile)
	if err := writeOnce(path, func() (*profiles.Plan, error) {
		return BestPlan(p, fitted, fit, w, st.model, n, seed, round, cfg.MaxFactor)
	}); err != nil {
		return nil, err
	}
	tuned, err := profiles.ReadPlan(path)
	if err != nil {
		return nil, err
	}
	r, err := buildReport(cfg, p, fitted, fit, st, w, tuned)
	if err != nil {
		return nil, err
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode tune report: %w", err)
	}
	return r, runfiles.WriteAtomic(filepath.Join(cfg.Out, ReportFile), append(data, '\n'))
}

// writeOnce writes the plan make returns to path unless path exists: a
// resumed tuning reuses the plan it wrote.
func writeOnce(path string, make func() (*profiles.Plan, error)) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	pl, err := make()
	if err != nil {
		return err
	}
	if err := runfiles.MkdirAll(filepath.Dir(path)); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	return profiles.WritePlan(path, pl)
}

// checkManifest writes tune.json in a new folder, or checks that the
// folder's was written with the same arguments.
func checkManifest(path string, m manifest) error {
	data, err := os.ReadFile(path)
	if err == nil {
		var old manifest
		if err := json.Unmarshal(data, &old); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if !reflect.DeepEqual(old, m) {
			return fmt.Errorf("%s: the tuning folder was made with other arguments (%+v, now %+v): use a new --out", path, old, m)
		}
		return nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("read %s: %w", path, err)
	}
	data, _ = json.MarshalIndent(m, "", "  ")
	return runfiles.WriteAtomic(path, append(data, '\n'))
}
