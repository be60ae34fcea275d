package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"dialogfarm/dataset"
	"dialogfarm/judge"
	"dialogfarm/sft"
)

// addPipelineFlags adds the flags of every stage a whole pipeline runs
// (run, tune): query model, export, dataset, drive, responder and tools.
func addPipelineFlags(cmd *cobra.Command) {
	addQueryModelFlags(cmd)
	addExportFlags(cmd)
	addDatasetFlags(cmd)
	addDriveFlags(cmd)
	addResponderFlags(cmd)
	addToolFlags(cmd)
}

// addExportFlags adds the flags that select and shape SFT records
// (export, run, tune).
func addExportFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	def := sft.DefaultOptions()
	f.String("format", def.Format, "record format: openai ({\"messages\":[...]}) or sharegpt ({\"conversations\":[...]})")
	f.Float64("min-score", def.MinScore, "lowest final judge score a kept turn may have")
	f.String("meta", def.Meta, "metadata: inline (under \"metadata\"), sidecar (NAME.meta.jsonl, keyed by id and line) or none")
	f.Bool("allow-offline", false, "keep the offline stand-in's answers (placeholders, not training data: for trying the tool only)")
}

// addDatasetFlags adds the flags of a dataset folder (export with a folder
// --out, and run).
func addDatasetFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	def := dataset.DefaultOptions()
	f.Float64("split", def.Split, "share of dialogues in train.jsonl; the rest go to validation.jsonl (split by dialogue, seeded)")
	f.String("tokenizer", def.Tokenizer, "tiktoken encoding tokens are counted with: "+strings.Join(dataset.Encodings, " or "))
	f.Int("max-tokens", def.MaxTokens, "drop records with more tokens than this (0: no limit)")
	f.Bool("dedup-exact", def.Dedup.Exact, "drop records whose user and assistant text repeats an earlier record's")
	f.Float64("dedup-near", def.Dedup.Near, "drop records at or above this estimated Jaccard similarity to a kept record (MinHash/LSH; 0: off)")
	f.String("dataset-name", def.Name, "dataset name: the card's title and the LLaMA-Factory entries NAME_train, NAME_validation")
	f.String("dataset-license", def.License.ID, "license of the dataset card: a Hugging Face Hub license id (an SPDX id such as MIT or Apache-2.0), unknown, or other with --dataset-license-name and --dataset-license-link")
	f.String("dataset-license-name", "", "name of the license when --dataset-license is other (e.g. acme-data-1.0)")
	f.String("dataset-license-link", "", "link to the license's text when --dataset-license is other (a URL, or LICENSE for a file next to the card)")
	f.Bool("allow-empty", false, "when no record is kept, write a dataset folder whose card says so instead of failing")
}

// datasetOptions fills dataset options from the flags; export selects the
// turns, seed seeds the split.
func (a *app) datasetOptions(export sft.Options, seed int64) dataset.Options {
	opt := dataset.DefaultOptions()
	opt.Export, opt.Seed = export, seed
	opt.Split = a.v.GetFloat64("split")
	opt.Tokenizer = a.v.GetString("tokenizer")
	opt.MaxTokens = a.v.GetInt("max-tokens")
	opt.Dedup.Exact = a.v.GetBool("dedup-exact")
	opt.Dedup.Near = a.v.GetFloat64("dedup-near")
	opt.Name = a.v.GetString("dataset-name")
	opt.License = dataset.License{ID: a.v.GetString("dataset-license"), Name: a.v.GetString("dataset-license-name"), Link: a.v.GetString("dataset-license-link")}
	opt.AllowEmpty = a.v.GetBool("allow-empty")
	opt.Run.RubricVersion = judge.RubricVersion(a.v.GetStringMapString("judge.rubrics"))
	return opt
}

// warnDataset prints what a consumer of the dataset folder must know
// (offline placeholders, answers no judge model scored, a split below a
// consumer's minimum) on stderr; the card and stats.json say it too.
func (a *app) warnDataset(st dataset.Stats) {
	for _, w := range st.Warnings {
		fmt.Fprintf(a.stderr, "warning: dataset: %s\n", w)
	}
}

// isDatasetFolder reports whether export's --out names a dataset folder
// rather than a single JSONL file.
func isDatasetFolder(out string) bool {
	return !strings.EqualFold(filepath.Ext(out), ".jsonl")
}
