package dataset

import (
	"fmt"
	"math"
	"slices"

	"dialogfarm/dialog"
	"dialogfarm/dialog/vocab"
	"dialogfarm/sft"
)

// Stats is what a dataset folder holds and why records were left out; it
// is written to stats.json and summarised in the card.
type Stats struct {
	Format    string  `json:"format"`
	Meta      string  `json:"meta"`
	MinScore  float64 `json:"min_score"`
	Seed      int64   `json:"seed"`
	Split     float64 `json:"split"`
	Tokenizer string  `json:"tokenizer"`
	MaxTokens int     `json:"max_tokens"`
	// License is the card's license.
	License License `json:"license"`
	// Run is what the run folder says about the run.
	Run RunInfo `json:"run"`
	// Dialogues counts the input lines; Selected the records the turn
	// selection gave (one per dialogue with a kept turn); Records those
	// that passed the gates and were written; Turns their assistant turns.
	Dialogues int `json:"dialogues"`
	Selected  int `json:"selected"`
	Records   int `json:"records"`
	Turns     int `json:"turns"`
	// Keep is the keep rate (dialog.KeepRate): of the dialogues recorded
	// and their turns, those the judge's scores keep, before the gates.
	Keep dialog.KeepRate `json:"keep"`
	// Provenance describes the records written: offline placeholders,
	// models, how the judge scored them, who wrote the queries.
	Provenance dialog.Provenance `json:"provenance"`
	// Warnings are what a consumer of the folder must know before using
	// it (a split below a consumer's minimum, offline placeholders); each
	// is also printed and written in the card.
	Warnings []string `json:"warnings"`
	// Skipped counts dialogues without a record, by sft reason; Dropped
	// records removed by a gate, by reason (every reason, 0 included).
	Skipped     map[string]int `json:"skipped"`
	HistoryCuts int            `json:"history_cuts"`
	Dropped     map[string]int `json:"dropped"`
	Splits      map[string]int `json:"splits"`
	Tokens      TokenStats     `json:"tokens"`
	Intents     map[string]int `json:"intents"`
	// Languages counts records by programming language; Locales by the
	// natural languages their user and assistant messages hold
	// (vocab.LocalesIn; a record counts under each, "unknown" when no
	// paragraph is long enough to tell), not by the locale its config
	// asked for: a query asked in Chinese may have been sent as the
	// plugin's English command template.
	Languages map[string]int `json:"languages"`
	Locales   map[string]int `json:"locales"`
}

// TokenStats summarises tokens per record.
type TokenStats struct {
	Total int     `json:"total"`
	Min   int     `json:"min"`
	Mean  float64 `json:"mean"`
	P50   int     `json:"p50"`
	P95   int     `json:"p95"`
	Max   int     `json:"max"`
}

func newStats(opt Options, sum sft.Summary) Stats {
	st := Stats{
		Format: opt.Export.Format, Meta: opt.Export.Meta, MinScore: opt.Export.MinScore, Seed: opt.Seed,
		Split: opt.Split, Tokenizer: opt.Tokenizer, MaxTokens: opt.MaxTokens, License: opt.License, Run: opt.Run,
		Dialogues: sum.Dialogues, Selected: sum.Records, Skipped: sum.Skipped, HistoryCuts: sum.HistoryCuts,
		Keep: sum.Keep, Provenance: dialog.NewProvenance(), Warnings: []string{},
		Dropped: map[string]int{}, Splits: map[string]int{SplitTrain: 0, SplitValidation: 0},
		Intents: map[string]int{}, Languages: map[string]int{}, Locales: map[string]int{},
	}
	if st.Skipped == nil {
		st.Skipped = map[string]int{}
	}
	for _, r := range DropReasons {
		st.Dropped[r] = 0
	}
	return st
}

// finish counts the kept records and says what a consumer must know.
func (st *Stats) finish(kept []*sample) {
	st.Records = len(kept)
	var toks []int
	for _, s := range kept {
		st.Turns += len(s.Meta.Turns)
		st.Intents[orUnknown(s.Meta.Intent)]++
		st.Languages[orUnknown(s.Meta.Language)]++
		locs := recordLocales(s.Messages)
		for _, loc := range locs {
			st.Locales[loc]++
		}
		if len(locs) == 0 {
			st.Locales[dialog.Unknown]++
		}
		st.Provenance.Merge(s.Provenance)
		toks = append(toks, s.tokens)
	}
	st.warn()
	if len(toks) == 0 {
		return
	}
	slices.Sort(toks)
	for _, n := range toks {
		st.Tokens.Total += n
	}
	st.Tokens.Min, st.Tokens.Max = toks[0], toks[len(toks)-1]
	st.Tokens.Mean = math.Round(float64(st.Tokens.Total)/float64(len(toks))*10) / 10
	st.Tokens.P50, st.Tokens.P95 = nearestRank(toks, 50), nearestRank(toks, 95)
}

// recordLocales are the natural languages a record's user and assistant
// messages hold (vocab.LocalesIn), sorted; the plugin's system prompt is
// the same in every record and says nothing of the dialogue's language.
func recordLocales(msgs []dialog.Message) []string {
	var out []string
	for _, m := range msgs {
		if m.Role == "system" {
			continue
		}
		for _, loc := range vocab.LocalesIn(m.Content) {
			if !slices.Contains(out, loc) {
				out = append(out, loc)
			}
		}
	}
	slices.Sort(out)
	return out
}

// splitMinimums are the fewest records a consumer takes in a split, for
// the records' format: OpenAI fine-tuning refuses a training file of
// fewer than 10 examples ("To fine-tune a model, you are required to
// provide at least 10 examples", platform.openai.com/docs/guides/fine-tuning).
var splitMinimums = []struct {
	consumer, format, split string
	min                     int
}{
	{"OpenAI fine-tuning", sft.FormatOpenAI, SplitTrain, 10},
}

// warn lists what a consumer must know: offline placeholders, a split
// below a consumer's minimum, an empty validation split.
func (st *Stats) warn() {
	if p := st.Provenance; p.OfflineDialogues > 0 {
		st.Warnings = append(st.Warnings, fmt.Sprintf("%d of %d records (%d of %d assistant turns) hold %s",
			p.OfflineDialogues, st.Records, p.OfflineTurns, p.Turns, dialog.OfflineWarning))
	}
	if st.Records > 0 && !st.Provenance.LLMJudged() {
		st.Warnings = append(st.Warnings, fmt.Sprintf("%d of %d assistant turns were not scored by a judge model (%s): their score is the rules' alone, not a judgement of the answer",
			st.Provenance.Turns-st.Provenance.JudgeModes[dialog.JudgeLLM], st.Provenance.Turns, dialog.Counts(st.Provenance.JudgeModes)))
	}
	for _, m := range splitMinimums {
		if n := st.Splits[m.split]; st.Format == m.format && st.Records > 0 && n < m.min {
			st.Warnings = append(st.Warnings, fmt.Sprintf("%s has %d records: %s needs at least %d", m.split, n, m.consumer, m.min))
		}
	}
	if st.Split < 1 && st.Records > 0 && st.Splits[SplitValidation] == 0 {
		st.Warnings = append(st.Warnings, fmt.Sprintf("validation is empty (%d records, split %g): nothing to evaluate on", st.Records, st.Split))
	}
}

// emptyReason says why no record was written: what was read, skipped
// and dropped.
func (st *Stats) emptyReason() string {
	dropped := map[string]int{}
	for r, n := range st.Dropped {
		if n > 0 {
			dropped[r] = n
		}
	}
	return fmt.Sprintf("%d dialogues read; skipped: %s; dropped by the gates: %s", st.Dialogues, dialog.Counts(st.Skipped), dialog.Counts(dropped))
}

// nearestRank is the p-th percentile of sorted by the nearest-rank
// method: the smallest value with at least p% of the values at or below it.
func nearestRank(sorted []int, p int) int {
	return sorted[max((len(sorted)*p+99)/100-1, 0)]
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
