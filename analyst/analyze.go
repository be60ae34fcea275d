package analyst

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"go.uber.org/zap"

	"dialogfarm/dialog/vocab"
	"dialogfarm/internal/runfiles"
	"dialogfarm/profiles"
)

// AnalyzeConfig configures Analyze.
type AnalyzeConfig struct {
	// LogsPath is the JSONL interaction log.
	LogsPath string
	Mapping  Mapping
	// Classify configures the model that labels intent and difficulty;
	// without a model the keyword fallback is used (and said so).
	Classify ClassifyConfig
	// Classifier, when set, replaces the one Classify would build.
	Classifier Classifier
	// Name and Seed go into the fitted profile.
	Name string
	Seed int64
}

// DefaultAnalyzeConfig: default classifier settings, profile "fitted", seed 42.
func DefaultAnalyzeConfig() AnalyzeConfig {
	return AnalyzeConfig{Classify: DefaultClassifyConfig(), Name: "fitted", Seed: 42}
}

// Counts are the numbers behind a fitted profile.
type Counts struct {
	Logs     string    `json:"logs"`
	Records  int       `json:"records"`
	Sessions int       `json:"sessions"`
	BadLines []BadLine `json:"bad_lines"`
	// Classifier is "llm:<model>" or "keyword-fallback".
	Classifier   string         `json:"classifier"`
	LabelSources map[string]int `json:"label_sources"`
	// Dimensions counts sessions per dimension value.
	Dimensions map[string]map[string]int `json:"dimensions"`
	// Excluded counts sessions left out of a dimension, by reason.
	Excluded map[string]map[string]int `json:"excluded,omitempty"`
	// Defaulted counts sessions where a dimension fell back to a default
	// because the log lacked the field.
	Defaulted map[string]int `json:"defaulted,omitempty"`
	// FromDefault lists dimensions with no usable data, whose weights were
	// copied from the built-in default profile.
	FromDefault []string `json:"from_default,omitempty"`
}

// Fit is a profile fitted from logs and the counts behind it.
type Fit struct {
	Profile *profiles.Profile
	Counts  Counts
}

// Analyze reads interaction logs and fits a profile: the observable
// dimensions by rules (see Observe), intent and difficulty by the
// classifier (plugin and slash commands fix the intent themselves), each
// dimension counted once per session on its first query (turns: the
// session's query count).
func Analyze(ctx context.Context, cfg AnalyzeConfig, log *zap.Logger) (*Fit, error) {
	if log == nil {
		log = zap.NewNop()
	}
	f, err := os.Open(cfg.LogsPath)
	if err != nil {
		return nil, fmt.Errorf("analyze: %w", err)
	}
	defer f.Close()
	recs, bad, err := ReadLogs(f, cfg.Mapping)
	if err != nil {
		return nil, fmt.Errorf("analyze %s: %w", cfg.LogsPath, err)
	}
	if len(bad) > 0 {
		log.Warn("unusable log lines (listed in the counts)", zap.String("file", cfg.LogsPath), zap.Int("lines", len(bad)),
			zap.Int("first", bad[0].Line), zap.String("reason", bad[0].Reason))
	}
	sessions := GroupSessions(recs)
	if len(sessions) == 0 {
		return nil, fmt.Errorf("analyze %s: no usable sessions (%d unusable lines)", cfg.LogsPath, len(bad))
	}
	cls, name := cfg.Classifier, "custom"
	switch {
	case cls != nil:
	case cfg.Classify.Model != nil:
		llm, err := NewLLMClassifier(cfg.Classify, log)
		if err != nil {
			return nil, fmt.Errorf("analyze: %w", err)
		}
		cls, name = llm, "llm:"+cfg.Classify.Model.Model()
	default:
		log.Warn("no model configured: intent and difficulty use the keyword fallback classifier")
		cls, name = KeywordClassifier{}, SourceKeyword
	}
	items := make([]Item, len(sessions))
	obs := make([]Observed, len(sessions))
	for i, s := range sessions {
		obs[i] = Observe(s)
		items[i] = Item{ID: s.ID, Language: obs[i].Language, Query: s.First.Query}
	}
	labels, err := cls.Classify(ctx, items)
	if err != nil {
		return nil, fmt.Errorf("analyze %s: %w", cfg.LogsPath, err)
	}
	c := Counts{Logs: cfg.LogsPath, Records: len(recs), Sessions: len(sessions), BadLines: bad, Classifier: name,
		LabelSources: map[string]int{}, Dimensions: map[string]map[string]int{}, Excluded: map[string]map[string]int{},
		Defaulted: map[string]int{}}
	if c.BadLines == nil {
		c.BadLines = []BadLine{}
	}
	count := func(dim, v string) {
		if c.Dimensions[dim] == nil {
			c.Dimensions[dim] = map[string]int{}
		}
		c.Dimensions[dim][v]++
	}
	for i, o := range obs {
		l := labels[i]
		c.LabelSources[l.Source]++
		intent := l.Intent
		if o.CommandIntent != "" {
			intent = o.CommandIntent
		}
		if o.Language == "" {
			if c.Excluded[vocab.DimLanguage] == nil {
				c.Excluded[vocab.DimLanguage] = map[string]int{}
			}
			c.Excluded[vocab.DimLanguage]["unsupported or unknown: "+o.RawLanguage]++
		} else {
			count(vocab.DimLanguage, o.Language)
		}
		for dim, v := range map[string]string{vocab.DimIntent: intent, vocab.DimInstruction: o.Instruction,
			vocab.DimTrigger: o.Trigger, vocab.DimCursor: o.Cursor, vocab.DimReference: o.Reference,
			vocab.DimLocale: o.Locale, vocab.DimTurns: o.Turns, vocab.DimDifficulty: l.Difficulty,
			vocab.DimQueryStyle: o.QueryStyle} {
			count(dim, v)
		}
		for _, d := range o.Defaulted {
			c.Defaulted[d]++
		}
	}
	p, err := fitProfile(cfg, &c)
	if err != nil {
		return nil, fmt.Errorf("analyze %s: %w", cfg.LogsPath, err)
	}
	return &Fit{Profile: p, Counts: c}, nil
}

func fitProfile(cfg AnalyzeConfig, c *Counts) (*profiles.Profile, error) {
	def, err := profiles.Builtin("default")
	if err != nil {
		return nil, err
	}
	p := &profiles.Profile{Name: cfg.Name, Seed: cfg.Seed, Dimensions: map[string][]profiles.Weight{},
		Description: fmt.Sprintf("fitted from %s (%d sessions)", filepath.Base(cfg.LogsPath), c.Sessions)}
	for _, dim := range vocab.Dimensions() {
		counts := c.Dimensions[dim]
		total := 0
		for _, n := range counts {
			total += n
		}
		if total == 0 {
			p.Dimensions[dim] = def.Dimensions[dim]
			c.FromDefault = append(c.FromDefault, dim)
			continue
		}
		values := vocab.Values(dim)
		if dim == vocab.DimTurns {
			values = slices.DeleteFunc(values, func(v string) bool { return counts[v] == 0 })
		}
		for _, v := range values {
			share := float64(counts[v]) / float64(total)
			w := math.Round(share*1e4) / 1e4
			if counts[v] > 0 && w == 0 {
				w = 0.0001
			}
			p.Dimensions[dim] = append(p.Dimensions[dim], profiles.Weight{Value: v, Weight: w})
		}
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("fitted profile does not validate: %w", err)
	}
	return p, nil
}

// CountsPath is where WriteFit puts the counts next to a profile path:
// profile.yaml → profile.counts.json.
func CountsPath(profilePath string) string {
	return strings.TrimSuffix(profilePath, filepath.Ext(profilePath)) + ".counts.json"
}

// WriteFit writes the fitted profile YAML, with the counts as comments,
// and the counts as JSON next to it (CountsPath). Both writes are atomic.
func WriteFit(profilePath string, fit *Fit) error {
	c := fit.Counts
	header := []string{
		fmt.Sprintf("Fitted by dialogfarm analyze from %s: %d sessions, %d records, %d unusable lines.",
			c.Logs, c.Sessions, c.Records, len(c.BadLines)),
		"Weights are shares of sessions; the session counts behind them follow each value.",
		"Counts, unusable lines and exclusions: " + filepath.Base(CountsPath(profilePath)),
	}
	classified := "classified by model " + strings.TrimPrefix(c.Classifier, "llm:")
	if c.Classifier == SourceKeyword {
		classified = "KEYWORD FALLBACK: no model configured, a rough keyword guess, not a model classification"
		header = append(header, "intent and difficulty: "+classified+".")
	} else if n := c.LabelSources[SourceKeywordUnusable]; n > 0 {
		classified += fmt.Sprintf("; %d sessions fell back to keywords (unusable model answers)", n)
	}
	header = append(header, "")
	notes := profiles.Notes{}
	for _, dim := range vocab.Dimensions() {
		notes[dim] = map[string]string{}
		for _, w := range fit.Profile.Dimensions[dim] {
			notes[dim][w.Value] = strconv.Itoa(c.Dimensions[dim][w.Value]) + " sessions"
		}
		how := "derived by rules"
		if dim == vocab.DimIntent || dim == vocab.DimDifficulty {
			how = classified
		}
		if slices.Contains(c.FromDefault, dim) {
			how = "no usable data: copied from the built-in default profile"
		}
		if n := c.Defaulted[dim]; n > 0 {
			how += fmt.Sprintf("; %d sessions defaulted for lack of a logged field", n)
		}
		for _, reason := range slices.Sorted(maps.Keys(c.Excluded[dim])) {
			how += fmt.Sprintf("; %d sessions excluded (%s)", c.Excluded[dim][reason], reason)
		}
		notes[dim][""] = how
	}
	if err := runfiles.WriteAtomic(profilePath, profiles.Marshal(fit.Profile, header, notes)); err != nil {
		return err
	}
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("encode counts: %w", err)
	}
	return runfiles.WriteAtomic(CountsPath(profilePath), append(data, '\n'))
}
