package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"dialogfarm/adapter"
	"dialogfarm/dialog"
	"dialogfarm/internal/jsonl"
	"dialogfarm/internal/runfiles"
	"dialogfarm/judge"
	"dialogfarm/pool"
)

func judgeCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "judge RUN",
		Short: "Re-judge recorded candidates (new rubric, rules or judge model) without re-running the editor",
		Long: `judge reads RUN/dialogues.jsonl (RUN a run folder, or a dialogues file),
judges every turn's recorded candidates again
with the judge: section of the config (rules-only when it names no endpoint, or
with --rules-only) and writes the dialogues with the new verdicts, in the same
order and format, for export. The answers the plugin was shown stay as they
were. --scores writes one judge-eval line per turn: {"id":"<config id>#<turn>",
"score", "intent", "language", "locale"}. Each request is read the way its
plugin writes messages (the prompt: section of the adapter its config's plugin
field names, else of the first --adapter), to find the developer's own words.
Judge model calls are cached in the input's folder (pool.cache_dir), so a
second run costs nothing. export RUN/judged.jsonl --out DIR exports the
judged dialogues.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return a.judge(cmd.Context(), args) },
	}
	f := cmd.Flags()
	f.String("out", "", "judged dialogues to write (default RUN/judged.jsonl; for a dialogues file NAME.jsonl, NAME.judged.jsonl)")
	f.String("scores", "", `also write one judge-eval line per turn to this file: {"id":"<config id>#<turn>","score","intent","language","locale"}`)
	f.Bool("rules-only", false, "ignore the judge endpoint: rule deductions only, said in every verdict")
	f.Int("jobs", 4, "dialogues judged at once")
	f.String("tasks", "", "folder written by tasks build: generate/fix answers of dialogues driven from its configs run against their step's tests in the sandbox")
	f.StringSlice("adapter", []string{adapter.DefaultName}, "adapter of the plugin that sent the requests (how it writes messages): a bundled name or an adapter YAML file; repeat for several, as given to drive (the first reads dialogues without a plugin field)")
	addPoolFlags(cmd)
	deprecateRunFlag(cmd, "in", "dialogues file (give it, or its run folder, as RUN)")
	return cmd
}

func (a *app) judge(ctx context.Context, args []string) error {
	src, err := a.runSourceOf("judge", args, "in")
	if err != nil {
		return err
	}
	in, out := src.Dialogues, a.v.GetString("out")
	switch {
	case out != "":
	case src.File:
		out = strings.TrimSuffix(in, filepath.Ext(in)) + ".judged.jsonl"
	default:
		out = filepath.Join(src.Dir, "judged.jsonl")
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
	j, jm, err := newJudge(cfg, cache, nil, a.log)
	if err != nil {
		return err
	}
	if dir := a.v.GetString("tasks"); dir != "" {
		ej, err := newExecJudge(dir, a.log)
		if err != nil {
			return err
		}
		j.WithExecutor(ej)
	}
	dialogues, torn, err := readDialogues(in)
	if err != nil {
		return err
	}
	formats, err := recordFormats(a.v.GetStringSlice("adapter"), dialogues)
	if err != nil {
		return err
	}
	j.WithReader(formats)
	if torn {
		fmt.Fprintf(a.stderr, "dialogfarm: skipping the torn last line of %s (a run killed mid-write; resuming it drives that config again)\n", in)
	}
	bar := a.newProgress("judge", len(dialogues))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(1, a.v.GetInt("jobs")))
	for i := range dialogues {
		g.Go(func() error {
			d, err := j.Rejudge(gctx, dialogues[i])
			dialogues[i] = d
			bar.Add(1)
			return err
		})
	}
	err = g.Wait()
	bar.Finish()
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("judge: stopped before every dialogue was judged, %s left as it was: %w", out, err)
	}
	var buf, scores bytes.Buffer
	turns := 0
	for _, d := range dialogues {
		if err := writeLine(&buf, d); err != nil {
			return err
		}
		for _, s := range judge.TurnScores(d, formats) {
			turns++
			if err := writeLine(&scores, s); err != nil {
				return err
			}
		}
	}
	// Written whole or not at all: --out may be the dialogues file a
	// later export reads.
	if err := runfiles.WriteAtomic(out, buf.Bytes()); err != nil {
		return fmt.Errorf("judge: %w", err)
	}
	mode := "rules-only"
	if jm != nil {
		mode = "judge model " + cfg.JudgeModel.Model
	}
	fmt.Fprintf(a.stdout, "judged %d turns of %d dialogues (%s); wrote %s\n", turns, len(dialogues), mode, out)
	if n := fallbacks(dialogues); n > 0 {
		fmt.Fprintf(a.stdout, "%d verdicts fell back to the rules because the judge model failed (judge_error in %s); run judge again to score them\n", n, out)
	}
	if path := a.v.GetString("scores"); path != "" {
		if err := runfiles.WriteAtomic(path, scores.Bytes()); err != nil {
			return fmt.Errorf("judge: %w", err)
		}
		fmt.Fprintf(a.stdout, "scores: %s\n", path)
	}
	if jm != nil {
		writeStats(a.stdout, []pool.Stats{jm.Stats()})
	}
	return nil
}

// recordFormats loads the adapters that tell how the recorded requests'
// plugins write messages, and checks that every dialogue's plugin has one.
func recordFormats(names []string, ds []dialog.Dialogue) (adapter.Set, error) {
	var set adapter.Set
	for _, name := range names {
		ad, err := adapter.LoadForRecords(name)
		if err != nil {
			return nil, fmt.Errorf("judge: %w", err)
		}
		set = append(set, ad)
	}
	for _, d := range ds {
		if p := d.Config.Plugin; set.Find(p) == nil {
			return nil, fmt.Errorf("judge: dialogue %s was driven with plugin %q, which no --adapter names (give its adapter file with --adapter)", d.ConfigID, p)
		}
	}
	return set, nil
}

// readDialogues reads a dialogues JSONL file; torn says its partial last
// line (a run killed mid-write) was skipped.
func readDialogues(path string) (out []dialog.Dialogue, torn bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, fmt.Errorf("read dialogues: %w", err)
	}
	defer f.Close()
	torn, err = jsonl.EachLog(f, path, func(_ int, line []byte) error {
		var d dialog.Dialogue
		if err := json.Unmarshal(line, &d); err != nil {
			return err
		}
		out = append(out, d)
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("read dialogues: %w", err)
	}
	return out, torn, nil
}

// writeLine appends v as one line of JSON, without HTML escaping.
func writeLine(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// fallbacks counts the verdicts a failing judge model left rules-only.
func fallbacks(ds []dialog.Dialogue) int {
	n := 0
	for _, d := range ds {
		for _, t := range d.Turns {
			for _, v := range t.Verdicts {
				if v.JudgeError != "" {
					n++
				}
			}
		}
	}
	return n
}
