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
}

// DefaultOptions: OpenAI format, only 5-point turns, metadata in a sidecar
// so the records stay loadable by OpenAI fine-tuning as they are.
func DefaultOptions() Options {
	return Options{Format: FormatOpenAI, MinScore: 5, Meta: MetaSidecar}
}

// Validate checks the format and metadata placement.
func (o Options) Validate() error {
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
}

// Export reads dialogues (JSONL of dialog.Dialogue) from in and writes one
// record per dialogue with a kept turn to out, sorted by id, and, with
// MetaSidecar, one metadata line per record to sidecar.
func Export(in io.Reader, out, sidecar io.Writer, opt Options) (Summary, error) {
	if err := opt.Validate(); err != nil {
		return Summary{}, err
	}
	if opt.Meta == MetaSidecar && sidecar == nil {
		return Summary{}, errors.New("export: metadata goes to a sidecar but none was given")
	}
	net, err := finder(opt)
	if err != nil {
		return Summary{}, err
	}
	sum := Summary{Skipped: map[string]int{}, SecretRules: map[string]int{}}
	byID, err := readDialogues(in, &sum)
	if err != nil {
		return sum, err
	}
	ids := make([]string, 0, len(byID))
	for id := range byID {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		s, skip := selectTurns(byID[id], opt)
		if skip != "" {
			sum.Skipped[skip]++
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
		sum.Turns += len(s.meta.Turns)
		if err := writeRecord(out, sidecar, sum.Records, s, opt); err != nil {
			return sum, fmt.Errorf("export %s: %w", id, err)
		}
	}
	return sum, nil
}

// readDialogues reads JSONL dialogues keyed by config id; a later line
// supersedes an earlier one. A torn last line (a run killed mid-write) is
// skipped and counted, as drive skips it when it resumes.
func readDialogues(in io.Reader, sum *Summary) (map[string]dialog.Dialogue, error) {
	byID := map[string]dialog.Dialogue{}
	torn, err := dialog.ReadJSONL(in, func(n int, line []byte) error {
		var d dialog.Dialogue
		if jerr := json.Unmarshal(line, &d); jerr != nil {
			return fmt.Errorf("read dialogues line %d: %w", n, jerr)
		}
		if d.ConfigID == "" {
			return fmt.Errorf("read dialogues line %d: no config_id", n)
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

type openaiRecord struct {
	Messages []dialog.Message `json:"messages"`
	Metadata *Metadata        `json:"metadata,omitempty"`
}

type sharegptTurn struct {
	From  string `json:"from"`
	Value string `json:"value"`
}

type sharegptRecord struct {
	Conversations []sharegptTurn `json:"conversations"`
	Metadata      *Metadata      `json:"metadata,omitempty"`
}

type sidecarLine struct {
	Line int `json:"line"`
	Metadata
}

// sharegptFrom maps chat roles to ShareGPT speakers.
var sharegptFrom = map[string]string{"system": "system", "user": "human", "assistant": "gpt"}

func writeRecord(out, sidecar io.Writer, line int, s sample, opt Options) error {
	var meta *Metadata
	if opt.Meta == MetaInline {
		meta = &s.meta
	}
	var rec any = openaiRecord{Messages: s.messages, Metadata: meta}
	if opt.Format == FormatShareGPT {
		sg := sharegptRecord{Metadata: meta}
		for _, m := range s.messages {
			from, ok := sharegptFrom[m.Role]
			if !ok {
				from = m.Role
			}
			sg.Conversations = append(sg.Conversations, sharegptTurn{From: from, Value: m.Content})
		}
		rec = sg
	}
	if err := writeJSONLine(out, rec); err != nil {
		return err
	}
	if opt.Meta == MetaSidecar {
		return writeJSONLine(sidecar, sidecarLine{Line: line, Metadata: s.meta})
	}
	return nil
}

// writeJSONLine writes v as one line of compact JSON, without escaping
// <, > and & (code keeps its characters as sent).
func writeJSONLine(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// SidecarPath is where ExportFiles puts the metadata of out:
// "sft.jsonl" → "sft.meta.jsonl".
func SidecarPath(out string) string {
	return strings.TrimSuffix(out, filepath.Ext(out)) + ".meta.jsonl"
}

// ExportFiles exports the dialogues file inPath to outPath (and its
// SidecarPath with MetaSidecar). Each file is written to a temporary file
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
	sum, err := Export(dialog.ContextReader(ctx, in), &out, sidecar, opt)
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return sum, fmt.Errorf("export %s: %w", inPath, err)
	}
	if err := writeAtomic(outPath, out.Bytes()); err != nil {
		return sum, err
	}
	if sidecar != nil {
		return sum, writeAtomic(SidecarPath(outPath), meta.Bytes())
	}
	return sum, nil
}

// writeAtomic writes data to path through a temporary file in its folder.
func writeAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	_, werr := f.Write(data)
	merr := f.Chmod(runfiles.FileMode)
	cerr := f.Close()
	if err := errors.Join(werr, merr, cerr); err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
