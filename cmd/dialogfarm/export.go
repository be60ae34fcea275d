package main

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/spf13/cobra"

	"dialogfarm/sft"
)

func exportCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Write SFT JSONL from recorded dialogues, keeping only turns at or above the minimum score",
		Long: `export turns DIR/dialogues.jsonl (from drive, or from judge after a re-judge) into
SFT records: one per dialogue, its turns up to the first one below --min-score,
each user message exactly as the plugin sent it and each assistant message the
answer the plugin was shown. Records are sorted by id, each id once; exporting
twice gives byte-identical files. Records answered by the offline stand-in are
refused unless --allow-offline.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error { return a.export() },
	}
	f := cmd.Flags()
	def := sft.DefaultOptions()
	f.String("in", "", "dialogues file, e.g. run/dialogues.jsonl (required)")
	f.String("out", "", "SFT JSONL to write (required); a sidecar goes next to it as NAME.meta.jsonl")
	f.String("format", def.Format, "record format: openai ({\"messages\":[...]}) or sharegpt ({\"conversations\":[...]})")
	f.Float64("min-score", def.MinScore, "lowest final judge score a kept turn may have")
	f.String("meta", def.Meta, "metadata: inline (under \"metadata\"), sidecar (NAME.meta.jsonl, keyed by id and line) or none")
	f.Bool("allow-offline", false, "also export records answered by the offline stand-in (placeholders, not training data)")
	return cmd
}

func (a *app) export() error {
	in, out := a.v.GetString("in"), a.v.GetString("out")
	if in == "" || out == "" {
		return errors.New("export: --in and --out are required")
	}
	opt := sft.Options{
		Format: a.v.GetString("format"), MinScore: a.v.GetFloat64("min-score"),
		Meta: a.v.GetString("meta"), AllowOffline: a.v.GetBool("allow-offline"),
	}
	sum, err := sft.ExportFiles(in, out, opt)
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
	return nil
}
