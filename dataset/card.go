package dataset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"gopkg.in/yaml.v3"

	"dialogfarm/dialog"
	"dialogfarm/sft"
)

// cardMeta is the card's YAML front-matter, in the keys the Hugging Face
// Hub reads (https://huggingface.co/docs/hub/datasets-cards and
// .../datasets-manual-configuration), plus a dialogfarm section.
type cardMeta struct {
	PrettyName     string `yaml:"pretty_name"`
	License        `yaml:",inline"`
	Language       []string     `yaml:"language,omitempty"`
	TaskCategories []string     `yaml:"task_categories"`
	Tags           []string     `yaml:"tags"`
	SizeCategories []string     `yaml:"size_categories"`
	Configs        []cardConfig `yaml:"configs,omitempty"`
	Dialogfarm     cardRun      `yaml:"dialogfarm"`
}

type cardConfig struct {
	ConfigName string     `yaml:"config_name"`
	Default    bool       `yaml:"default"`
	DataFiles  []cardFile `yaml:"data_files"`
}

type cardFile struct {
	Split string `yaml:"split"`
	Path  string `yaml:"path"`
}

type cardRun struct {
	RunInfo    `yaml:",inline"`
	Format     string            `yaml:"format"`
	Meta       string            `yaml:"meta"`
	MinScore   float64           `yaml:"min_score"`
	Seed       int64             `yaml:"seed"`
	Split      float64           `yaml:"split"`
	Tokenizer  string            `yaml:"tokenizer"`
	MaxTokens  int               `yaml:"max_tokens"`
	Dialogues  int               `yaml:"dialogues"`
	Records    int               `yaml:"records"`
	Turns      int               `yaml:"turns"`
	Keep       dialog.KeepRate   `yaml:"keep"`
	Provenance dialog.Provenance `yaml:"provenance"`
	Warnings   []string          `yaml:"warnings"`
	Splits     map[string]int    `yaml:"splits"`
	Skipped    map[string]int    `yaml:"skipped"`
	Dropped    map[string]int    `yaml:"dropped"`
}

// sizeCategory is the Hub's size_categories bucket for n records.
func sizeCategory(n int) string {
	switch {
	case n < 1_000:
		return "n<1K"
	case n < 10_000:
		return "1K<n<10K"
	case n < 100_000:
		return "10K<n<100K"
	case n < 1_000_000:
		return "100K<n<1M"
	default:
		return "1M<n<10M"
	}
}

// languages are the ISO 639-1 codes of the natural languages the kept
// records' messages hold (Stats.Locales), sorted.
func languages(st Stats) []string {
	var out []string
	for _, loc := range slices.Sorted(maps.Keys(st.Locales)) {
		if loc != dialog.Unknown && st.Locales[loc] > 0 {
			out = append(out, loc)
		}
	}
	return out
}

// card renders README.md: the front-matter and a short human summary.
func card(opt Options, st Stats) ([]byte, error) {
	meta := cardMeta{
		PrettyName: opt.Name, License: st.License, Language: languages(st),
		TaskCategories: []string{"text-generation"}, Tags: []string{"code", "sft", "chat", "dialogfarm"},
		SizeCategories: []string{sizeCategory(st.Records)},
		Dialogfarm: cardRun{
			RunInfo: st.Run, Format: st.Format, Meta: st.Meta, MinScore: st.MinScore, Seed: st.Seed, Split: st.Split,
			Tokenizer: st.Tokenizer, MaxTokens: st.MaxTokens, Dialogues: st.Dialogues, Records: st.Records,
			Turns: st.Turns, Keep: st.Keep, Provenance: st.Provenance, Warnings: st.Warnings,
			Splits: st.Splits, Skipped: st.Skipped, Dropped: st.Dropped,
		},
	}
	if files := splitFiles(st); len(files) > 0 {
		cfg := cardConfig{ConfigName: "default", Default: true}
		for _, split := range files {
			cfg.DataFiles = append(cfg.DataFiles, cardFile{Split: split, Path: split + ".jsonl"})
		}
		meta.Configs = []cardConfig{cfg}
	}
	var b bytes.Buffer
	b.WriteString("---\n")
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(meta); err != nil {
		return nil, fmt.Errorf("encode dataset card: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encode dataset card: %w", err)
	}
	b.WriteString("---\n\n")
	writeCardBody(&b, opt, st)
	return b.Bytes(), nil
}

// llamaFactoryInfo is dataset_info.json: one entry per split, as
// LLaMA-Factory's data/README.md describes for the sharegpt formatting and
// its OpenAI-messages special case (role/content tags).
func llamaFactoryInfo(opt Options, st Stats) ([]byte, error) {
	type entry struct {
		FileName   string            `json:"file_name"`
		Formatting string            `json:"formatting"`
		Columns    map[string]string `json:"columns"`
		Tags       map[string]string `json:"tags"`
	}
	cols := map[string]string{"messages": "messages"}
	tags := map[string]string{"role_tag": "role", "content_tag": "content", "user_tag": "user", "assistant_tag": "assistant", "system_tag": "system"}
	if opt.Export.Format == sft.FormatShareGPT {
		cols = map[string]string{"messages": "conversations"}
		tags = map[string]string{"role_tag": "from", "content_tag": "value", "user_tag": "human", "assistant_tag": "gpt", "system_tag": "system"}
	}
	info := map[string]entry{}
	for _, split := range splitFiles(st) {
		info[opt.Name+"_"+split] = entry{FileName: split + ".jsonl", Formatting: "sharegpt", Columns: cols, Tags: tags}
	}
	data, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", InfoFile, err)
	}
	return append(data, '\n'), nil
}
