package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"dialogfarm/analyst"
	"dialogfarm/dialog"
	"dialogfarm/dialog/vocab"
	"dialogfarm/internal/runfiles"
	"dialogfarm/pipeline"
	"dialogfarm/profiles"
	"dialogfarm/sft"
)

func reportCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Compare a run's configs and kept dialogues with its profile",
		Long: `report prints, per dimension, the profile's target distribution, the
produced configs' distribution and the kept (5-point) dialogues' distribution,
with the Jensen–Shannon divergence (bits) of each against the target, and the
keep rate and cost per kept turn per cell and a histogram of judge scores; it
also writes the report as JSON and, next to it, as a self-contained HTML page
with plots (report.html). --format markdown prints Markdown tables instead of
the terminal table, for a pull request or a model card. Without a dialogues
file only target and produced are compared.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error { return a.report() },
	}
	f := cmd.Flags()
	f.String("profile", "", "profile YAML or built-in name (required)")
	f.String("run", "", "run folder holding configs.jsonl and dialogues.jsonl")
	f.String("configs", "", "chat configs JSONL (default RUN/configs.jsonl)")
	f.String("dialogues", "", "dialogue records JSONL (default RUN/dialogues.jsonl; optional)")
	f.String("json", "", "report JSON to write (default RUN/report.json; - for stdout only); the HTML report goes next to it (NAME.html)")
	f.String("format", "table", "what to print: table (terminal) or markdown")
	f.StringSlice("cells", analyst.DefaultReportConfig().CellDims, "dimensions forming the keep-rate and cost cells")
	f.Float64("min-score", sft.DefaultOptions().MinScore, "lowest score a kept turn may have")
	f.Bool("allow-offline", false, "count turns of the offline stand-in as kept, as export --allow-offline does")
	return cmd
}

func (a *app) report() error {
	path, run := a.v.GetString("profile"), a.v.GetString("run")
	configsPath, dialoguesPath, jsonPath := a.v.GetString("configs"), a.v.GetString("dialogues"), a.v.GetString("json")
	if configsPath == "" && run != "" {
		configsPath = filepath.Join(run, "configs.jsonl")
	}
	if dialoguesPath == "" && run != "" {
		dialoguesPath = filepath.Join(run, "dialogues.jsonl")
	}
	if jsonPath == "" && run != "" {
		jsonPath = filepath.Join(run, "report.json")
	}
	if path == "" || configsPath == "" {
		return errors.New("report: --profile and --run (or --configs) are required")
	}
	p, err := profiles.Load(path)
	if err != nil {
		return err
	}
	configs, dialogues, err := analyst.ReadRun(configsPath, dialoguesPath)
	if err != nil {
		return err
	}
	cfg := analyst.DefaultReportConfig()
	cfg.CellDims = a.v.GetStringSlice("cells")
	export := sft.DefaultOptions()
	export.MinScore, export.AllowOffline = a.v.GetFloat64("min-score"), a.v.GetBool("allow-offline")
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
	if run == "" {
		run = filepath.Dir(configsPath)
	}
	if r.Secrets, err = pipeline.SecretCounts(run, dialoguesPath, export); err != nil {
		return err
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
