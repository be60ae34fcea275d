package dataset

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"dialogfarm/internal/bounds"
	"dialogfarm/internal/jsonl"
	"dialogfarm/internal/runfiles"
	"dialogfarm/sft"
)

// Options configures a dataset folder.
type Options struct {
	// Export selects the turns (format, minimum score, metadata placement,
	// offline records), exactly as a single-file export does.
	Export sft.Options
	// Split is the share of dialogues in train, in (0, 1]; Seed seeds it.
	Split float64
	Seed  int64
	// Tokenizer names the encoding tokens are counted with (Encodings);
	// MaxTokens drops records with more tokens (0: no limit).
	Tokenizer string
	MaxTokens int
	Dedup     DedupOptions
	// Name prefixes the LLaMA-Factory dataset names (NAME_train,
	// NAME_validation) and titles the card.
	Name string
	// License is the card's license (unknown by default: dialogfarm cannot
	// know the terms of the repositories' code and the models' answers).
	License License
	// AllowEmpty writes a folder with no record (a card that says so, and
	// why) instead of failing with ErrEmpty.
	AllowEmpty bool
	// Run describes where the data came from, for the card.
	Run RunInfo
	// Progress, when set, is called as records pass the gates.
	Progress func(done, total int)
}

// DefaultOptions: the sft defaults, 95% train, o200k_base tokens limited
// to 16,385 per example (the per-example limit OpenAI's data-preparation
// cookbook checks), the default dedup.
func DefaultOptions() Options {
	return Options{
		Export: sft.DefaultOptions(), Split: 0.95, Tokenizer: "o200k_base", MaxTokens: 16385,
		Dedup: DefaultDedup(), Name: "dialogfarm", License: License{ID: LicenseUnknown},
	}
}

// Validate checks the options.
func (o Options) Validate() error {
	if err := o.Export.Validate(); err != nil {
		return err
	}
	// split: a share of train, at least 1%; max tokens: 0 (no limit) to
	// 2^31; near-duplicate threshold: a Jaccard similarity (0 turns it off).
	if err := bounds.Check(bounds.Float("split", o.Split, 0.01, 1), bounds.Int("max tokens", o.MaxTokens, 0, sft.MaxMaxTokens),
		bounds.Float("near-duplicate threshold", o.Dedup.Near, 0, 1)); err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	if o.Name == "" {
		return errors.New("dataset name is empty")
	}
	lic := o.License
	return lic.Check()
}

// ErrEmpty means no record passed the selection and the gates; the Stats
// returned with it say why (skipped and dropped, by reason).
var ErrEmpty = errors.New("no record to write")

// Files in a dataset folder.
const (
	CardFile       = "README.md"
	InfoFile       = "dataset_info.json"
	StatsFile      = "stats.json"
	TrainFile      = SplitTrain + ".jsonl"
	ValidationFile = SplitValidation + ".jsonl"
	TrainMeta      = SplitTrain + ".meta.jsonl"
	ValidationMeta = SplitValidation + ".meta.jsonl"
)

// sample is one record on its way through the gates: what sft selected,
// its token count and its split.
type sample struct {
	sft.Sample
	tokens int
	split  string
}

// Build reads dialogues (JSONL) from in and writes a dataset folder dir.
// Files are written through temporary files renamed into place; files of
// an earlier export that this one does not write (a validation split, a
// sidecar) are removed. Cancelling ctx stops it at once, writing nothing.
func Build(ctx context.Context, in io.Reader, dir string, opt Options) (Stats, error) {
	return build(ctx, in, "dialogues", dir, opt)
}

func build(ctx context.Context, in io.Reader, name, dir string, opt Options) (Stats, error) {
	if err := opt.Validate(); err != nil {
		return Stats{}, err
	}
	_ = opt.License.Check() // the Hub's spelling of the id; Validate checked it
	tok, err := NewTokenizer(opt.Tokenizer)
	if err != nil {
		return Stats{}, err
	}
	samples, st, err := selectSamples(jsonl.ContextReader(ctx, in), name, opt)
	if err != nil {
		return st, err
	}
	kept, err := gate(ctx, samples, tok, opt, &st)
	if err != nil {
		return st, err
	}
	if len(kept) == 0 && !opt.AllowEmpty {
		st.finish(kept)
		return st, fmt.Errorf("%w: %s; --allow-empty writes a folder that says so", ErrEmpty, st.emptyReason())
	}
	files := map[string][]byte{}
	bySplit := map[string][]*sample{}
	for _, s := range kept {
		s.split = splitOf(s.Meta.ID, opt.Split, opt.Seed)
		bySplit[s.split] = append(bySplit[s.split], s)
	}
	for _, split := range []string{SplitTrain, SplitValidation} {
		rows := bySplit[split]
		st.Splits[split] = len(rows)
		if len(rows) == 0 {
			continue
		}
		var out, meta bytes.Buffer
		w := sft.NewRecordWriter(&out, &meta, opt.Export.Format, opt.Export.Meta)
		for _, s := range rows {
			if err := w.Write(s.Messages, newMetaRow(s)); err != nil {
				return st, fmt.Errorf("write %s record %s: %w", split, s.Meta.ID, err)
			}
		}
		files[split+".jsonl"] = out.Bytes()
		if opt.Export.Meta == sft.MetaSidecar {
			files[split+".meta.jsonl"] = meta.Bytes()
		}
	}
	st.finish(kept)
	if len(kept) > 0 {
		info, err := llamaFactoryInfo(opt, st)
		if err != nil {
			return st, err
		}
		files[InfoFile] = info
	}
	if files[StatsFile], err = json.MarshalIndent(st, "", "  "); err != nil {
		return st, fmt.Errorf("encode stats: %w", err)
	}
	files[StatsFile] = append(files[StatsFile], '\n')
	if files[CardFile], err = card(opt, st); err != nil {
		return st, err
	}
	if err := ctx.Err(); err != nil {
		return st, err
	}
	return st, writeFolder(dir, files)
}

// BuildFiles builds the dataset folder dir from the dialogues file inPath.
func BuildFiles(ctx context.Context, inPath, dir string, opt Options) (Stats, error) {
	f, err := os.Open(inPath)
	if err != nil {
		return Stats{}, fmt.Errorf("dataset: %w", err)
	}
	defer f.Close()
	st, err := build(ctx, f, inPath, dir, opt)
	if err != nil {
		if le := (*jsonl.Error)(nil); errors.As(err, &le) {
			return st, fmt.Errorf("dataset: %w", err) // it names the file
		}
		return st, fmt.Errorf("dataset from %s: %w", inPath, err)
	}
	return st, nil
}

// selectSamples runs the sft selection, so the folder holds exactly the
// records a single-file export writes, after every check sft applies.
func selectSamples(in io.Reader, name string, opt Options) ([]*sample, Stats, error) {
	selected, sum, err := sft.Select(in, name, opt.Export)
	st := newStats(opt, sum)
	if err != nil {
		return nil, st, err
	}
	out := make([]*sample, len(selected))
	for i, s := range selected {
		out[i] = &sample{Sample: s}
	}
	return out, st, nil
}

// gate applies the quality gates in order and returns the records that
// pass, counting each drop in st.
func gate(ctx context.Context, samples []*sample, tok *Tokenizer, opt Options, st *Stats) ([]*sample, error) {
	var pass []*sample
	for i, s := range samples {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if opt.Progress != nil {
			opt.Progress(i+1, len(samples))
		}
		if reason := checkShape(s.Messages); reason != "" {
			st.Dropped[reason]++
			continue
		}
		s.tokens = tok.CountMessages(s.Messages)
		if opt.MaxTokens > 0 && s.tokens > opt.MaxTokens {
			st.Dropped[DropTooLong]++
			continue
		}
		pass = append(pass, s)
	}
	drop := dedup(pass, opt.Dedup)
	var kept []*sample
	for i, s := range pass {
		if reason := drop[i]; reason != "" {
			st.Dropped[reason]++
			continue
		}
		kept = append(kept, s)
	}
	return kept, nil
}

// folderFiles are every file a dataset folder may hold; those not written
// by an export are removed.
var folderFiles = []string{CardFile, InfoFile, StatsFile, TrainFile, ValidationFile, TrainMeta, ValidationMeta}

func writeFolder(dir string, files map[string][]byte) error {
	if err := runfiles.MkdirAll(dir); err != nil {
		return fmt.Errorf("create dataset folder: %w", err)
	}
	for _, name := range folderFiles {
		path := filepath.Join(dir, name)
		data, ok := files[name]
		if !ok {
			if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
				return fmt.Errorf("remove stale %s: %w", path, err)
			}
			continue
		}
		if err := runfiles.WriteAtomic(path, data); err != nil {
			return err
		}
	}
	return nil
}

// names of the files written for the splits that hold records.
func splitFiles(st Stats) []string {
	var out []string
	for _, s := range []string{SplitTrain, SplitValidation} {
		if st.Splits[s] > 0 {
			out = append(out, s)
		}
	}
	return slices.Clip(out)
}
