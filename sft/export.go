package sft

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"dialogfarm/dialog"
	"dialogfarm/internal/bounds"
	"dialogfarm/internal/jsonl"
	"dialogfarm/internal/runfiles"
)

// Formats.
const (
	FormatOpenAI   = "openai"
	FormatShareGPT = "sharegpt"
)

// Metadata placements.
const (
	MetaInline  = "inline"
	MetaSidecar = "sidecar"
	MetaNone    = "none"
)

// Options configures an export.
type Options struct {
	Format string
	// MinScore is the lowest final score a kept turn may have.
	MinScore float64
	Meta     string
	// AllowOffline exports records of the offline stand-in responder,
	// which are placeholders; off by default.
	AllowOffline bool
	// Secrets is the safety net: a sample in which it finds a secret is
	// not written (Summary.Skipped["secret"], Summary.SecretRules). Nil
	// uses redact's default detector.
	Secrets SecretFinder `json:"-"`
	// MaxTokens, when > 0, skips records of more tokens, as Tokens counts
	// them (Summary.Skipped["too_long"]).
	MaxTokens int
	Tokens    TokenCounter `json:"-"`
	// AllowEmpty lets ExportFiles write files with no record; without it
	// an export that keeps nothing fails with ErrEmpty and writes nothing.
	AllowEmpty bool
}

// ErrEmpty means an export kept no record; the Summary returned with it
// says why.
var ErrEmpty = errors.New("no record to write")

// TokenCounter counts the tokens of a record's messages; the dataset
// package's Tokenizer is one.
type TokenCounter interface {
	CountMessages(msgs []dialog.Message) int
}

// MaxMaxTokens is the largest MaxTokens: 2^31, beyond any model's context.
const MaxMaxTokens = 1 << 31

// DefaultOptions: OpenAI format, only 5-point turns, metadata in a sidecar
// so the records stay loadable by OpenAI fine-tuning as they are.
func DefaultOptions() Options {
	return Options{Format: FormatOpenAI, MinScore: 5, Meta: MetaSidecar}
}

// Validate checks the format, the metadata placement and the numbers:
// MinScore 0 to 5 (judge scores are 1 to 5; 0 also keeps shown answers
// with no verdict, which score 0), MaxTokens 0 to MaxMaxTokens.
func (o Options) Validate() error {
	if err := bounds.Check(bounds.Float("min score", o.MinScore, 0, 5), bounds.Int("max tokens", o.MaxTokens, 0, MaxMaxTokens)); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if o.MaxTokens > 0 && o.Tokens == nil {
		return errors.New("export: a max tokens without a token counter")
	}
	if o.Format != FormatOpenAI && o.Format != FormatShareGPT {
		return fmt.Errorf("export format %q: want %s or %s", o.Format, FormatOpenAI, FormatShareGPT)
	}
	if o.Meta != MetaInline && o.Meta != MetaSidecar && o.Meta != MetaNone {
		return fmt.Errorf("export metadata %q: want %s, %s or %s", o.Meta, MetaInline, MetaSidecar, MetaNone)
	}
	return nil
}

// Summary counts what an export read and wrote.
type Summary struct {
	// Dialogues counts the input lines, Records the records written,
	// Turns the assistant turns in them.
	Dialogues int `json:"dialogues"`
	Records   int `json:"records"`
	Turns     int `json:"turns"`
	// Skipped counts the dialogues that gave no record, by reason (the
	// Skip... constants).
	Skipped map[string]int `json:"skipped"`
	// HistoryCuts counts records cut short because a later request's
	// history did not match the kept turns.
	HistoryCuts int `json:"history_cuts"`
	// SecretRules counts, per rule, the samples the safety net dropped
	// (a sample found by two rules counts under both).
	SecretRules map[string]int `json:"secret_rules,omitempty"`
	// Keep is the keep rate of the dialogues read (dialog.KeepRate: the
	// turns and dialogues the judge's scores keep, before the safety net
	// and the token limit).
	Keep dialog.KeepRate `json:"keep"`
	// Provenance describes the records written.
	Provenance dialog.Provenance `json:"provenance"`
}

// Export reads dialogues (JSONL of dialog.Dialogue) from in and writes one
// record per dialogue with a kept turn to out, sorted by id, and, with
// MetaSidecar, one metadata line per record to sidecar.
func Export(in io.Reader, out, sidecar io.Writer, opt Options) (Summary, error) {
	return export(in, "dialogues", out, sidecar, opt)
}

func export(in io.Reader, name string, out, sidecar io.Writer, opt Options) (Summary, error) {
	if opt.Meta == MetaSidecar && sidecar == nil {
		return Summary{}, errors.New("export: metadata goes to a sidecar but none was given")
	}
	samples, sum, err := Select(in, name, opt)
	if err != nil {
		return sum, err
	}
	w := NewRecordWriter(out, sidecar, opt.Format, opt.Meta)
	for _, s := range samples {
		if err := w.Write(s.Messages, s.Meta); err != nil {
			return sum, fmt.Errorf("export %s: %w", s.Meta.ID, err)
		}
	}
	return sum, nil
}

// Select reads dialogues (JSONL of dialog.Dialogue; name names in in
// errors) and returns the samples an export writes, sorted by id, with
// what was read, skipped and cut. The safety net has dropped the samples
// in which it found a secret.
func Select(in io.Reader, name string, opt Options) ([]Sample, Summary, error) {
	if err := opt.Validate(); err != nil {
		return nil, Summary{}, err
	}
	net, err := finder(opt)
	if err != nil {
		return nil, Summary{}, err
	}
	sum := Summary{Skipped: map[string]int{}, SecretRules: map[string]int{}, Provenance: dialog.NewProvenance()}
	byID, err := readDialogues(in, name, &sum)
	if err != nil {
		return nil, sum, err
	}
	ids := make([]string, 0, len(byID))
	for id := range byID {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var samples []Sample
	for _, id := range ids {
		s, skip := selectTurns(byID[id], opt)
		sum.Keep.Add(len(byID[id].Turns), len(s.Meta.Turns))
		if skip != "" {
			sum.Skipped[skip]++
			continue
		}
		if opt.MaxTokens > 0 && opt.Tokens.CountMessages(s.Messages) > opt.MaxTokens {
			sum.Skipped[SkipTooLong]++
			continue
		}
		if rules := netRules(net, s); len(rules) > 0 {
			sum.Skipped[SkipSecret]++
			for _, r := range rules {
				sum.SecretRules[r]++
			}
			continue
		}
		if s.cut {
			sum.HistoryCuts++
		}
		sum.Records++
		sum.Turns += len(s.Meta.Turns)
		sum.Provenance.Merge(s.Provenance)
		samples = append(samples, s)
	}
	return samples, sum, nil
}

// readDialogues reads JSONL dialogues keyed by config id; a later line
// supersedes an earlier one. A torn last line (a run killed mid-write) is
// skipped and counted, as drive skips it when it resumes.
func readDialogues(in io.Reader, name string, sum *Summary) (map[string]dialog.Dialogue, error) {
	byID := map[string]dialog.Dialogue{}
	torn, err := jsonl.EachLog(in, name, func(_ int, line []byte) error {
		var d dialog.Dialogue
		if jerr := json.Unmarshal(line, &d); jerr != nil {
			return jerr
		}
		if d.ConfigID == "" {
			return errors.New("no config_id")
		}
		sum.Dialogues++
		if _, dup := byID[d.ConfigID]; dup {
			sum.Skipped[SkipSuperseded]++
		}
		byID[d.ConfigID] = d
		return nil
	})
	if err != nil {
		return nil, err
	}
	if torn {
		sum.Skipped[SkipTorn]++
	}
	return byID, nil
}

// SidecarPath is where ExportFiles puts the metadata of out:
// "sft.jsonl" → "sft.meta.jsonl".
func SidecarPath(out string) string {
	return strings.TrimSuffix(out, filepath.Ext(out)) + ".meta.jsonl"
}

// ExportFiles exports the dialogues file inPath to outPath (and its
// SidecarPath with MetaSidecar); with no record to write and no
// AllowEmpty, it fails with ErrEmpty and writes nothing. Each file is written to a temporary file
// and renamed into place, so a failed export leaves the old files intact.
// Cancelling ctx stops the reading at once, and nothing is written.
func ExportFiles(ctx context.Context, inPath, outPath string, opt Options) (Summary, error) {
	in, err := os.Open(inPath)
	if err != nil {
		return Summary{}, fmt.Errorf("export: %w", err)
	}
	defer in.Close()
	var out, meta bytes.Buffer
	var sidecar io.Writer
	if opt.Meta == MetaSidecar {
		sidecar = &meta
	}
	sum, err := export(jsonl.ContextReader(ctx, in), inPath, &out, sidecar, opt)
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		if le := (*jsonl.Error)(nil); errors.As(err, &le) {
			return sum, fmt.Errorf("export: %w", err) // it names the file
		}
		return sum, fmt.Errorf("export %s: %w", inPath, err)
	}
	if sum.Records == 0 && !opt.AllowEmpty {
		return sum, fmt.Errorf("export %s: %w (%d dialogues read; skipped: %s); --allow-empty writes an empty file", inPath, ErrEmpty,
			sum.Dialogues, dialog.Counts(sum.Skipped))
	}
	if err := runfiles.WriteAtomic(outPath, out.Bytes()); err != nil {
		return sum, err
	}
	if sidecar != nil {
		return sum, runfiles.WriteAtomic(SidecarPath(outPath), meta.Bytes())
	}
	return sum, nil
}
