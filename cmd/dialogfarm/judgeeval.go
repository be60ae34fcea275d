package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"dialogfarm/adapter"
	"dialogfarm/judge"
)

func judgeEvalCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "judge-eval [RUN]",
		Short: "Report judge–human agreement: Accuracy5, per-score precision/recall, exact agreement, weighted kappa",
		Long: `judge-eval pairs a judged file with human labels by id. Both are JSONL with at
least {"id", "score"}; judged lines may carry "intent", "language" and "locale"
(judge --scores writes them). It reports, overall and per intent, language and
locale: n; Accuracy5 (of the items the judge scored 5, the share humans also
scored 5); precision and recall for each score 1-5; exact agreement; and
quadratic-weighted Cohen's kappa with a seeded percentile-bootstrap 95%
interval. Ids found in only one file, judged items without a 1..5 score and
repeated ids are counted and listed. Scores are rounded to the nearest
integer.

The judged side is a run (RUN: a run folder, whose dialogues.jsonl is read,
or a dialogues file such as RUN/judged.jsonl), scored per turn as judge
--scores writes it (the verdict on the answer the plugin was shown), or a
scores file given with --judged. Label ids are "<config id>#<turn>".`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error { return a.judgeEval(args) },
	}
	f := cmd.Flags()
	def := judge.DefaultEvalOptions()
	f.String("judged", "", "judged scores, JSONL, as judge --scores writes them (instead of RUN)")
	f.String("labels", "", "human labels, JSONL {\"id\",\"score\"} (required)")
	f.StringSlice("adapter", []string{adapter.DefaultName}, "with RUN: adapter of the plugin that sent the requests, as given to judge")
	f.Bool("json", false, "print the report as JSON")
	f.Int("resamples", def.Resamples, "bootstrap resamples for the kappa interval (at least 1000)")
	f.Uint64("seed", def.Seed, "bootstrap seed: the same seed gives the same interval")
	return cmd
}

func (a *app) judgeEval(args []string) error {
	judgedPath, labelsPath := a.v.GetString("judged"), a.v.GetString("labels")
	if labelsPath == "" {
		return errors.New("judge-eval: --labels is required")
	}
	if (len(args) == 0) == (judgedPath == "") {
		return errors.New("judge-eval: give the judged side once: RUN (a run folder or dialogues file) or --judged FILE")
	}
	var judged []judge.Scored
	var err error
	if judgedPath != "" {
		judged, err = readScored(judgedPath)
	} else {
		judged, err = a.runScores(args)
	}
	if err != nil {
		return err
	}
	labels, err := readScored(labelsPath)
	if err != nil {
		return err
	}
	rep, err := judge.Evaluate(judged, labels, judge.EvalOptions{Resamples: a.v.GetInt("resamples"), Seed: a.v.GetUint64("seed")})
	if err != nil {
		return err
	}
	if a.v.GetBool("json") {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return rep.WriteText(a.stdout)
}

func readScored(path string) ([]judge.Scored, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("judge-eval: %w", err)
	}
	defer f.Close()
	return judge.ReadScored(f, path)
}

// runScores is one judge-eval line per judged turn of RUN's dialogues, as
// judge --scores writes them.
func (a *app) runScores(args []string) ([]judge.Scored, error) {
	src, err := a.runSourceOf("judge-eval", args, "")
	if err != nil {
		return nil, err
	}
	dialogues, _, err := readDialogues(src.Dialogues)
	if err != nil {
		return nil, fmt.Errorf("judge-eval: %w", err)
	}
	formats, err := recordFormats(a.v.GetStringSlice("adapter"), dialogues)
	if err != nil {
		return nil, fmt.Errorf("judge-eval: %w", err)
	}
	var out []judge.Scored
	for _, d := range dialogues {
		out = append(out, judge.TurnScores(d, formats)...)
	}
	return out, nil
}
