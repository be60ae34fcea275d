package dataset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"dialogfarm/sft"
)

// RunInfo is what the card says about the run the data came from.
type RunInfo struct {
	Profile       string `yaml:"profile" json:"profile"`
	ProfileHash   string `yaml:"profile_hash" json:"profile_hash"`
	RubricVersion string `yaml:"judge_rubric_version" json:"judge_rubric_version"`
	// Redactions are the secret-redaction counts of the run, as the run
	// folder's report.json (key "redactions") or redactions.json hold them;
	// nil when the run recorded none.
	Redactions map[string]any `yaml:"redactions,omitempty" json:"redactions,omitempty"`
}

// ReadRunInfo reads what a run folder says about its run: the profile from
// run.json and the redaction counts from report.json ("redactions") or a
// redactions.json in the run folder or one folder down.
// Missing files leave their fields empty; unreadable ones are an error.
func ReadRunInfo(runDir string) (RunInfo, error) {
	var ri RunInfo
	var manifest struct {
		Profile     string `json:"profile"`
		ProfileHash string `json:"profile_hash"`
	}
	if err := readJSONIfExists(filepath.Join(runDir, "run.json"), &manifest); err != nil {
		return ri, err
	}
	ri.Profile, ri.ProfileHash = manifest.Profile, manifest.ProfileHash
	var report struct {
		Redactions map[string]any `json:"redactions"`
	}
	if err := readJSONIfExists(filepath.Join(runDir, "report.json"), &report); err != nil {
		return ri, err
	}
	ri.Redactions = report.Redactions
	// redact.Sanitise writes redactions.json next to the sanitised copies
	// of the repositories: in the run folder or one folder down.
	more, _ := filepath.Glob(filepath.Join(runDir, "*", "redactions.json"))
	for _, path := range append([]string{filepath.Join(runDir, "redactions.json")}, more...) {
		if ri.Redactions != nil {
			break
		}
		if err := readJSONIfExists(path, &ri.Redactions); err != nil {
			return ri, err
		}
		// A run's redactions.json also lists the copies (local paths): the
		// card takes only its counts.
		if total, ok := ri.Redactions["total"].(map[string]any); ok {
			ri.Redactions = total
		}
	}
	return ri, nil
}

func readJSONIfExists(path string, v any) error {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	return nil
}

// cardMeta is the card's YAML front-matter, in the keys the Hugging Face
// Hub reads (https://huggingface.co/docs/hub/datasets-cards and
// .../datasets-manual-configuration), plus a dialogfarm section.
type cardMeta struct {
	PrettyName     string       `yaml:"pretty_name"`
	License        string       `yaml:"license"`
	Language       []string     `yaml:"language,omitempty"`
	TaskCategories []string     `yaml:"task_categories"`
	Tags           []string     `yaml:"tags"`
	SizeCategories []string     `yaml:"size_categories"`
	Configs        []cardConfig `yaml:"configs"`
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
	RunInfo   `yaml:",inline"`
	Format    string         `yaml:"format"`
	Meta      string         `yaml:"meta"`
	MinScore  float64        `yaml:"min_score"`
	Seed      int64          `yaml:"seed"`
	Split     float64        `yaml:"split"`
	Tokenizer string         `yaml:"tokenizer"`
	MaxTokens int            `yaml:"max_tokens"`
	Dialogues int            `yaml:"dialogues"`
	Records   int            `yaml:"records"`
	Turns     int            `yaml:"turns"`
	KeepRate  float64        `yaml:"keep_rate"`
	Splits    map[string]int `yaml:"splits"`
	Skipped   map[string]int `yaml:"skipped"`
	Dropped   map[string]int `yaml:"dropped"`
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

// languages are the ISO 639-1 codes of the records' locales ("zh-CN" →
// "zh"), sorted.
func languages(kept []*sample) []string {
	set := map[string]bool{}
	for _, s := range kept {
		loc := strings.ToLower(s.Meta.Locale)
		if i := strings.IndexAny(loc, "-_"); i >= 0 {
			loc = loc[:i]
		}
		if len(loc) == 2 {
			set[loc] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// card renders README.md: the front-matter and a short human summary.
func card(opt Options, st Stats, kept []*sample) ([]byte, error) {
	meta := cardMeta{
		PrettyName: opt.Name, License: opt.License, Language: languages(kept),
		TaskCategories: []string{"text-generation"}, Tags: []string{"code", "sft", "chat", "dialogfarm"},
		SizeCategories: []string{sizeCategory(st.Records)},
		Configs:        []cardConfig{{ConfigName: "default", Default: true}},
		Dialogfarm: cardRun{
			RunInfo: opt.Run, Format: st.Format, Meta: st.Meta, MinScore: st.MinScore, Seed: st.Seed, Split: st.Split,
			Tokenizer: st.Tokenizer, MaxTokens: st.MaxTokens, Dialogues: st.Dialogues, Records: st.Records,
			Turns: st.Turns, KeepRate: st.KeepRate, Splits: st.Splits, Skipped: st.Skipped, Dropped: st.Dropped,
		},
	}
	for _, split := range splitFiles(st) {
		meta.Configs[0].DataFiles = append(meta.Configs[0].DataFiles, cardFile{Split: split, Path: split + ".jsonl"})
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

func writeCardBody(b *bytes.Buffer, opt Options, st Stats) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("# %s\n\n", opt.Name)
	p("Supervised fine-tuning data for an IDE code assistant, recorded by dialogfarm: each record is one\n")
	p("dialogue a simulated developer had with the assistant in a real editor, with every user message exactly\n")
	p("as the plugin sent it and every assistant message an answer the judge scored at least %g.\n\n", st.MinScore)
	if opt.Run.Profile != "" {
		p("- Behaviour profile: `%s` (%s)\n", opt.Run.Profile, opt.Run.ProfileHash)
	}
	if opt.Run.RubricVersion != "" {
		p("- Judge rubric version: `%s`\n", opt.Run.RubricVersion)
	}
	p("- Format: `%s`; metadata: `%s`; tokens counted with `%s`\n\n", st.Format, st.Meta, st.Tokenizer)
	p("## Counts\n\n| | records |\n|---|---:|\n")
	p("| dialogues read | %d |\n| records selected | %d |\n| records kept | %d |\n", st.Dialogues, st.Selected, st.Records)
	p("| train | %d |\n| validation | %d |\n| assistant turns | %d |\n", st.Splits[SplitTrain], st.Splits[SplitValidation], st.Turns)
	p("\nKeep rate (records kept / dialogues read): %.1f%%. Tokens per record: mean %.1f, p50 %d, p95 %d, max %d.\n\n",
		st.KeepRate*100, st.Tokens.Mean, st.Tokens.P50, st.Tokens.P95, st.Tokens.Max)
	p("## Left out\n\n| reason | count |\n|---|---:|\n")
	for _, r := range slices.Sorted(maps.Keys(st.Skipped)) {
		p("| skipped: %s | %d |\n", r, st.Skipped[r])
	}
	for _, r := range DropReasons {
		p("| dropped: %s | %d |\n", r, st.Dropped[r])
	}
	if len(opt.Run.Redactions) > 0 {
		red, _ := json.Marshal(opt.Run.Redactions)
		p("\nSecrets redacted in the run: `%s`\n", red)
	}
	p("\n## Load it\n\n```python\nfrom datasets import load_dataset\n")
	p("ds = load_dataset(\"path/to/this/folder\")  # the splits listed in the front-matter\n```\n\n")
	if st.Format == sft.FormatOpenAI {
		p("Records hold `messages` (`role`, `content`), the shape TRL's `SFTTrainer` and OpenAI fine-tuning read.\n")
	} else {
		p("Records hold `conversations` (`from`: system, human, gpt; `value`), the ShareGPT shape.\n")
	}
	p("LLaMA-Factory: point `dataset_dir` at this folder and use `%s_train` (and `%s_validation`) from `dataset_info.json`.\n", opt.Name, opt.Name)
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
