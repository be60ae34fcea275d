package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"dialogfarm/judge"
)

func judgeEvalCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "judge-eval",
		Short: "Report judge–human agreement: Accuracy5, per-score precision/recall, exact agreement, weighted kappa",
		Long: `judge-eval pairs a judged file with human labels by id. Both are JSONL with at
least {"id", "score"}; judged lines may carry "intent", "language" and "locale"
(judge --scores writes them). It reports, overall and per intent, language and
locale: n; Accuracy5 (of the items the judge scored 5, the share humans also
scored 5); precision and recall for each score 1-5; exact agreement; and
quadratic-weighted Cohen's kappa with a seeded percentile-bootstrap 95%
interval. Ids found in only one file, judged items without a 1..5 score and
repeated ids are counted and listed. Scores are rounded to the nearest
integer.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error { return a.judgeEval() },
	}
	f := cmd.Flags()
	def := judge.DefaultEvalOptions()
	f.String("judged", "", "judged scores, JSONL (required)")
	f.String("labels", "", "human labels, JSONL (required)")
	f.Bool("json", false, "print the report as JSON")
	f.Int("resamples", def.Resamples, "bootstrap resamples for the kappa interval (at least 1000)")
	f.Uint64("seed", def.Seed, "bootstrap seed: the same seed gives the same interval")
	return cmd
}

func (a *app) judgeEval() error {
	judgedPath, labelsPath := a.v.GetString("judged"), a.v.GetString("labels")
	if judgedPath == "" || labelsPath == "" {
		return errors.New("judge-eval: --judged and --labels are required")
	}
	judged, err := readScored(judgedPath)
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
