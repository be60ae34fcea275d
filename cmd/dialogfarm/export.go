package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"

	"dialogfarm/dataset"
	"dialogfarm/dialog"
	"dialogfarm/internal/buildinfo"
	"dialogfarm/pipeline"
	"dialogfarm/sft"
)

func exportCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "export RUN",
		Short: "Write a dataset folder (or one SFT JSONL file) from recorded dialogues, keeping only turns at or above the minimum score",
		Long: `export turns RUN/dialogues.jsonl (RUN a run folder of run or drive; or a
dialogues file, such as the one judge writes after a re-judge) into SFT records: one per dialogue, its turns up to the first one below --min-score,
each user message exactly as the plugin sent it and each assistant message the
answer the plugin was shown. Records are sorted by id, each id once; exporting
twice gives byte-identical files. Records answered by the offline stand-in are
refused unless --allow-offline.

--out DIR (any name not ending in .jsonl) writes a dataset folder:
train.jsonl and validation.jsonl (split by dialogue, --split, seeded by
--seed), a README.md dataset card the Hugging Face Hub reads,
dataset_info.json for LLaMA-Factory and stats.json. Records pass quality
gates first, each drop counted by reason: roles (an optional system message,
then user and assistant alternating, assistant last), empty turns,
--max-tokens, exact and near duplicates (--dedup-exact, --dedup-near). Every
line of a file has the same keys and JSON types in every --meta mode.
--out FILE.jsonl writes the single file as before, without the gates but
--max-tokens (records of more tokens are skipped as too_long).

The format, metadata placement, minimum score, offline setting and split
seed are the run's (RUN/run.json) unless their flags say otherwise, so
export RUN writes what run wrote.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return a.export(cmd.Context(), args) },
	}
	f := cmd.Flags()
	f.String("out", "", "dataset folder to write, or a single FILE.jsonl (default RUN/dataset when RUN is a run folder); a single file's sidecar goes next to it as FILE.meta.jsonl")
	addExportFlags(cmd)
	f.Int64("seed", 0, "seed of the train/validation split (dataset folder; default: the run's seed)")
	addDatasetFlags(cmd)
	deprecateRunFlag(cmd, "in", "dialogues file (give it, or its run folder, as RUN)")
	return cmd
}

func (a *app) export(ctx context.Context, args []string) error {
	src, err := a.runSourceOf("export", args, "in")
	if err != nil {
		return err
	}
	in, out := src.Dialogues, a.v.GetString("out")
	if out == "" && src.File {
		return errors.New("export: --out is required when RUN names a file")
	}
	if out == "" {
		out = filepath.Join(src.Dir, pipeline.DatasetDir)
	}
	m := src.Manifest
	opt := sft.Options{
		Format: a.stringSetting("format", m.Format), MinScore: a.minScore(src, sft.DefaultOptions().MinScore),
		Meta: a.stringSetting("meta", m.Meta), AllowOffline: a.allowOffline(src), AllowEmpty: a.v.GetBool("allow-empty"),
	}
	if isDatasetFolder(out) {
		seed := a.v.GetInt64("seed")
		if !a.v.IsSet("seed") && src.Found {
			seed = m.Seed
		}
		return a.exportFolder(ctx, in, out, opt, seed)
	}
	if n := a.v.GetInt("max-tokens"); n > 0 {
		tok, err := dataset.NewTokenizer(a.v.GetString("tokenizer"))
		if err != nil {
			return err
		}
		opt.MaxTokens, opt.Tokens = n, tok
	}
	sum, err := sft.ExportFiles(ctx, in, out, opt)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "read %d dialogues; wrote %d records (%d turns) to %s\n", sum.Dialogues, sum.Records, sum.Turns, out)
	if opt.Meta == sft.MetaSidecar {
		fmt.Fprintf(a.stdout, "metadata: %s\n", sft.SidecarPath(out))
	}
	for _, reason := range slices.Sorted(maps.Keys(sum.Skipped)) {
		fmt.Fprintf(a.stdout, "skipped %d: %s\n", sum.Skipped[reason], reason)
	}
	if sum.HistoryCuts > 0 {
		fmt.Fprintf(a.stdout, "cut short %d: a later request's history did not match the kept turns\n", sum.HistoryCuts)
	}
	if n := sum.Skipped[sft.SkipOffline]; n > 0 {
		a.log.Warn("records from the offline stand-in were refused; pass --allow-offline to export them anyway")
	}
	if p := sum.Provenance; p.OfflineDialogues > 0 {
		fmt.Fprintf(a.stderr, "warning: export: %d of %d records hold %s\n", p.OfflineDialogues, sum.Records, dialog.OfflineWarning)
	}
	return nil
}

// largeExport is the number of records from which export shows progress.
const largeExport = 2000

// exportFolder writes the dataset folder out from the dialogues file in.
func (a *app) exportFolder(ctx context.Context, in, out string, export sft.Options, seed int64) error {
	opt := a.datasetOptions(export, seed)
	ri, err := dataset.ReadRunInfo(filepath.Dir(in))
	if err != nil {
		return err
	}
	ri.RubricVersion, ri.Version = opt.Run.RubricVersion, buildinfo.Version()
	opt.Run = ri
	var bar *progress
	opt.Progress = func(done, total int) {
		if bar == nil && total >= largeExport {
			bar = a.newProgress("export", total)
		}
		if bar != nil {
			bar.Set(done)
		}
	}
	st, err := dataset.BuildFiles(ctx, in, out, opt)
	if bar != nil {
		bar.Finish()
	}
	if err != nil {
		return err
	}
	printDatasetStats(a.stdout, out, st)
	a.warnDataset(st)
	if n := st.Skipped[sft.SkipOffline]; n > 0 {
		a.log.Warn("records from the offline stand-in were refused; pass --allow-offline to export them anyway")
	}
	return nil
}

// printDatasetStats prints what a dataset folder holds and what was left
// out, in plain words.
func printDatasetStats(w io.Writer, dir string, st dataset.Stats) {
	fmt.Fprintf(w, "read %d dialogues; wrote %d records (%d turns) to %s: %d train, %d validation\n",
		st.Dialogues, st.Records, st.Turns, dir, st.Splits[dataset.SplitTrain], st.Splits[dataset.SplitValidation])
	fmt.Fprintf(w, "tokens per record (%s): mean %.1f, p95 %d, max %d; %d in all\n", st.Tokenizer, st.Tokens.Mean, st.Tokens.P95, st.Tokens.Max, st.Tokens.Total)
	for _, reason := range slices.Sorted(maps.Keys(st.Skipped)) {
		fmt.Fprintf(w, "skipped %d: %s\n", st.Skipped[reason], reason)
	}
	for _, reason := range dataset.DropReasons {
		if n := st.Dropped[reason]; n > 0 {
			fmt.Fprintf(w, "dropped %d: %s\n", n, reason)
		}
	}
	if st.HistoryCuts > 0 {
		fmt.Fprintf(w, "cut short %d: a later request's history did not match the kept turns\n", st.HistoryCuts)
	}
}
