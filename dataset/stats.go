package dataset

import (
	"math"
	"slices"

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
	// Dialogues counts the input lines; Selected the records the turn
	// selection gave (one per dialogue with a kept turn); Records those
	// that passed the gates and were written; Turns their assistant turns.
	Dialogues int `json:"dialogues"`
	Selected  int `json:"selected"`
	Records   int `json:"records"`
	Turns     int `json:"turns"`
	// KeepRate is Records / Dialogues.
	KeepRate float64 `json:"keep_rate"`
	// Skipped counts dialogues without a record, by sft reason; Dropped
	// records removed by a gate, by reason (every reason, 0 included).
	Skipped     map[string]int `json:"skipped"`
	HistoryCuts int            `json:"history_cuts"`
	Dropped     map[string]int `json:"dropped"`
	Splits      map[string]int `json:"splits"`
	Tokens      TokenStats     `json:"tokens"`
	Intents     map[string]int `json:"intents"`
	Languages   map[string]int `json:"languages"`
	Locales     map[string]int `json:"locales"`
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
		Split: opt.Split, Tokenizer: opt.Tokenizer, MaxTokens: opt.MaxTokens,
		Dialogues: sum.Dialogues, Selected: sum.Records, Skipped: sum.Skipped, HistoryCuts: sum.HistoryCuts,
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

// finish counts the kept records.
func (st *Stats) finish(kept []*sample) {
	st.Records = len(kept)
	if st.Dialogues > 0 {
		st.KeepRate = math.Round(float64(st.Records)/float64(st.Dialogues)*1e4) / 1e4
	}
	var toks []int
	for _, s := range kept {
		st.Turns += len(s.Meta.Turns)
		st.Intents[orUnknown(s.Meta.Intent)]++
		st.Languages[orUnknown(s.Meta.Language)]++
		st.Locales[orUnknown(s.Meta.Locale)]++
		toks = append(toks, s.tokens)
	}
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
