package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"dialogfarm/dialog"
	"dialogfarm/judge"
	"dialogfarm/pool"
)

func judgeCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "judge",
		Short: "Re-judge recorded candidates (new rubric, rules or judge model) without re-running the editor",
		Long: `judge reads DIR/dialogues.jsonl, judges every turn's recorded candidates again
with the judge: section of the config (rules-only when it names no endpoint, or
with --rules-only) and writes the dialogues with the new verdicts, in the same
order and format, for export. The answers the plugin was shown stay as they
were. --scores writes one judge-eval line per turn: {"id":"<config id>#<turn>",
"score", "intent", "language", "locale"}. Judge model calls are cached in the
input's folder (pool.cache_dir), so a second run costs nothing.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.judge(cmd.Context()) },
	}
	f := cmd.Flags()
	f.String("in", "", "dialogues file, e.g. run/dialogues.jsonl (required)")
	f.String("out", "", "judged dialogues to write (required)")
	f.String("scores", "", "also write judge-eval lines per turn to this file")
	f.Bool("rules-only", false, "ignore the judge endpoint: rule deductions only, said in every verdict")
	f.Int("jobs", 4, "dialogues judged at once")
	addPoolFlags(cmd)
	return cmd
}

func (a *app) judge(ctx context.Context) error {
	in, out := a.v.GetString("in"), a.v.GetString("out")
	if in == "" || out == "" {
		return errors.New("judge: --in and --out are required")
	}
	cfg, err := a.loadPoolSettings("")
	if err != nil {
		return err
	}
	if a.v.GetBool("rules-only") {
		cfg.JudgeModel = nil
	}
	if err := cfg.resolveKeys(false); err != nil {
		return err
	}
	var cache *pool.Cache
	if dir := cfg.Pool.CacheDir; cfg.JudgeModel != nil && dir != "" {
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(filepath.Dir(in), dir)
		}
		if cache, err = pool.OpenCache(dir); err != nil {
			return err
		}
	}
	j, jm, err := newJudge(cfg, cache, a.log)
	if err != nil {
		return err
	}
	dialogues, err := readDialogues(in)
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(1, a.v.GetInt("jobs")))
	for i := range dialogues {
		g.Go(func() error {
			d, err := j.Rejudge(gctx, dialogues[i])
			dialogues[i] = d
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	var buf, scores bytes.Buffer
	turns := 0
	for _, d := range dialogues {
		if err := writeLine(&buf, d); err != nil {
			return err
		}
		for _, s := range judge.TurnScores(d) {
			turns++
			if err := writeLine(&scores, s); err != nil {
				return err
			}
		}
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("judge: %w", err)
	}
	mode := "rules-only"
	if jm != nil {
		mode = "judge model " + cfg.JudgeModel.Model
	}
	fmt.Fprintf(a.stdout, "judged %d turns of %d dialogues (%s); wrote %s\n", turns, len(dialogues), mode, out)
	if path := a.v.GetString("scores"); path != "" {
		if err := os.WriteFile(path, scores.Bytes(), 0o644); err != nil {
			return fmt.Errorf("judge: %w", err)
		}
		fmt.Fprintf(a.stdout, "scores: %s\n", path)
	}
	if jm != nil {
		writeStats(a.stdout, []pool.Stats{jm.Stats()})
	}
	return nil
}

// readDialogues reads a dialogues JSONL file.
func readDialogues(path string) ([]dialog.Dialogue, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read dialogues: %w", err)
	}
	defer f.Close()
	var out []dialog.Dialogue
	r := bufio.NewReader(f)
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var d dialog.Dialogue
			if jerr := json.Unmarshal(line, &d); jerr != nil {
				return nil, fmt.Errorf("read %s line %d: %w", path, n, jerr)
			}
			out = append(out, d)
		}
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read %s line %d: %w", path, n, err)
		}
	}
}

// writeLine appends v as one line of JSON, without HTML escaping.
func writeLine(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
