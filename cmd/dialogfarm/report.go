package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"dialogfarm/analyst"
	"dialogfarm/analyst/realism"
	"dialogfarm/dialog"
	"dialogfarm/dialog/vocab"
	"dialogfarm/internal/buildinfo"
	"dialogfarm/internal/runfiles"
	"dialogfarm/pipeline"
	"dialogfarm/profiles"
	"dialogfarm/sft"
)

func reportCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "report RUN",
		Short: "Compare a run's configs and kept dialogues with its profile",
		Long: `report prints, per dimension, the profile's target distribution, the
produced configs' distribution and the kept (5-point) dialogues' distribution,
with the Jensen–Shannon divergence (bits) of each against the target, and the
keep rate and cost per kept turn per cell and a histogram of judge scores; it
also writes the report as JSON and, next to it, as a self-contained HTML page
with plots (report.html). --format markdown prints Markdown tables instead of
the terminal table, for a pull request or a model card. Without a dialogues
file only target and produced are compared.

With reference logs (--reference-logs, or the logs the profile was fitted
from when analyze wrote PROFILE.counts.json), the report also compares the
generated first queries with the logged ones: length (KS), distinct-1/2/3,
gzip compression ratio, vocabulary overlap, code share, locale mix (JSD),
terse and typo rates and a character 3-gram embedding spread, overall and
per intent × locale cell, flagging cells beyond the thresholds (report.json
"realism", report.html "Query realism"; docs/file-formats.md).

RUN is the run folder. The profile, the minimum score and whether the
offline stand-in's answers count as kept are the run's (RUN/run.json), unless
--profile, --min-score or --allow-offline say otherwise; turns of the
offline stand-in left uncounted are reported, never dropped in silence.
Without RUN, --configs (and --dialogues) name the files and --profile is
required.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error { return a.report(args) },
	}
	f := cmd.Flags()
	f.String("profile", "", "profile YAML or built-in name (default: the run's, from RUN/run.json)")
	f.String("configs", "", "chat configs JSONL (default RUN/configs.jsonl)")
	f.String("dialogues", "", "dialogue records JSONL (default RUN/dialogues.jsonl; optional)")
	f.String("json", "", "report JSON to write (default RUN/report.json; - for stdout only); the HTML report goes next to it (NAME.html)")
	f.String("format", "table", "what to print: table (terminal) or markdown")
	f.StringSlice("cells", analyst.DefaultReportConfig().CellDims, "dimensions forming the keep-rate and cost cells")
	f.Float64("min-score", sft.DefaultOptions().MinScore, "lowest score a kept turn may have (default: the run's)")
	f.Bool("allow-offline", false, "count turns of the offline stand-in as kept, as export --allow-offline does (default: as the run did)")
	f.String("reference-logs", "", "interaction logs (JSONL, the analyze format) to compare the generated queries with (default: the logs the profile was fitted from, read from PROFILE.counts.json)")
	deprecateRunFlag(cmd, "run", "run folder (give it as RUN)")
	return cmd
}

func (a *app) report(args []string) error {
	path, run := a.v.GetString("profile"), ""
	configsPath, dialoguesPath, jsonPath := a.v.GetString("configs"), a.v.GetString("dialogues"), a.v.GetString("json")
	var src runSource
	if len(args) > 0 || a.v.GetString("run") != "" || configsPath == "" {
		var err error
		if src, err = a.runSourceOf("report", args, "run"); err != nil {
			return err
		}
		if src.File {
			return fmt.Errorf("report: RUN %s is a file: name the run folder (or give --configs and --dialogues)", src.Dialogues)
		}
		run = src.Dir
		if path == "" {
			path = src.Manifest.Profile
		}
	}
	if configsPath == "" && run != "" {
		configsPath = filepath.Join(run, "configs.jsonl")
	}
	if dialoguesPath == "" && run != "" {
		dialoguesPath = filepath.Join(run, "dialogues.jsonl")
	}
	if jsonPath == "" && run != "" {
		jsonPath = filepath.Join(run, "report.json")
	}
	if path == "" {
		return fmt.Errorf("report: %w: give --profile", errNoProfile)
	}
	p, err := profiles.Load(path)
	if err != nil {
		return err
	}
	if src.Found && a.v.GetString("profile") == "" && p.Hash() != src.Manifest.ProfileHash {
		a.log.Warn("the run's profile has changed since the run; the report compares with it as it is now",
			zap.String("profile", path), zap.String("run_hash", src.Manifest.ProfileHash), zap.String("hash", p.Hash()))
	}
	configs, dialogues, err := analyst.ReadRun(configsPath, dialoguesPath)
	if err != nil {
		return err
	}
	cfg := analyst.DefaultReportConfig()
	cfg.CellDims = a.v.GetStringSlice("cells")
	export := sft.DefaultOptions()
	export.MinScore, export.AllowOffline = a.minScore(src, export.MinScore), a.allowOffline(src)
	cfg.KeptTurns = func(d dialog.Dialogue) int { return sft.KeptTurns(d, export) }
	for _, d := range cfg.CellDims {
		if vocab.DimIndex(d) < 0 {
			return fmt.Errorf("report: --cells: unknown dimension %q", d)
		}
	}
	format := a.v.GetString("format")
	if format != "table" && format != "markdown" {
		return fmt.Errorf("report: --format %q: want table or markdown", format)
	}
	r := analyst.BuildReport(p, configs, dialogues, cfg)
	r.Version = buildinfo.Version()
	if run == "" {
		run = filepath.Dir(configsPath)
	}
	if r.Secrets, err = pipeline.SecretCounts(run, dialoguesPath, export); err != nil {
		return err
	}
	if r.Fit, err = pipeline.PlanFit(run); err != nil {
		return err
	}
	refLogs := a.v.GetString("reference-logs")
	if refLogs == "" {
		if refLogs, err = analyst.FittedLogs(path); err != nil {
			return err
		}
	}
	if refLogs != "" {
		if r.Realism, err = analyst.Realism(configs, refLogs, analyst.Mapping{}, realism.DefaultThresholds()); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	if jsonPath == "-" || jsonPath == "" {
		_, err := fmt.Fprintln(a.stdout, string(data))
		return err
	}
	if format == "markdown" {
		err = r.WriteMarkdown(a.stdout)
	} else {
		err = r.WriteTable(a.stdout)
	}
	if err != nil {
		return err
	}
	if err := r.Secrets.WriteSummary(a.stdout); err != nil {
		return err
	}
	if turns, ds := offlineUncounted(dialogues, export); turns > 0 {
		fmt.Fprintf(a.stdout, "\nnot counted as kept: %d turns of %d dialogues answered by the offline stand-in (placeholders, not training data); --allow-offline counts them, as export --allow-offline exports them\n", turns, ds)
	}
	if err := runfiles.WriteAtomic(jsonPath, append(data, '\n')); err != nil {
		return err
	}
	htmlPath := pipeline.ReportHTMLPath(jsonPath)
	if err := pipeline.WriteReportHTML(r, htmlPath); err != nil {
		return err
	}
	if format == "table" {
		fmt.Fprintf(a.stdout, "\nJSON: %s\nHTML: %s\n", jsonPath, htmlPath)
	}
	return nil
}

// offlineUncounted counts the turns (and their dialogues) that export
// would keep with --allow-offline but does not keep without it.
func offlineUncounted(ds []dialog.Dialogue, export sft.Options) (turns, dialogues int) {
	if export.AllowOffline {
		return 0, 0
	}
	with := export
	with.AllowOffline = true
	for _, d := range ds {
		if n := sft.KeptTurns(d, with) - sft.KeptTurns(d, export); n > 0 {
			turns += n
			dialogues++
		}
	}
	return turns, dialogues
}
