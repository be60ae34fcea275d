package dialog

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// ShownVerdict is the verdict on the answer the plugin was shown: the
// best-ranked verdict among those on candidates whose text is the answer.
// ok is false when no verdict judged it (the offline stand-in without a
// judge, an exchange error).
func (ex Exchange) ShownVerdict() (v Verdict, ok bool) {
	for _, x := range ex.Verdicts {
		if x.Candidate < 0 || x.Candidate >= len(ex.Candidates) || ex.Candidates[x.Candidate].Text != ex.Answer {
			continue
		}
		if !ok || x.Rank < v.Rank {
			v, ok = x, true
		}
	}
	return v, ok
}

// How a verdict was scored (Verdict.Mode).
const (
	JudgeLLM         = "llm"         // a judge model scored it
	JudgeRulesOnly   = "rules_only"  // no judge model: 5 minus the rule deductions
	JudgeError       = "judge_error" // the judge model failed: rules only, as JudgeRulesOnly
	JudgeUnparseable = "unparseable" // the judge model's output was unreadable: unscored
	JudgeNone        = "none"        // no verdict on the answer shown
)

// Mode says how v was scored: JudgeLLM, JudgeRulesOnly, JudgeError or
// JudgeUnparseable.
func (v Verdict) Mode() string {
	switch {
	case v.Unparsable:
		return JudgeUnparseable
	case v.RulesOnly && v.JudgeError != "":
		return JudgeError
	case v.RulesOnly:
		return JudgeRulesOnly
	}
	return JudgeLLM
}

// Unknown stands for an empty model name or query source in the counts of
// a Provenance.
const Unknown = "unknown"

// Provenance says where the answers of a set of dialogues came from and
// how they were judged: the numbers a data team needs to defend (or
// reject) training data. It counts the turns it is given (Add), so one
// type describes a run (every turn) and a dataset (the kept turns).
type Provenance struct {
	Dialogues int `json:"dialogues" yaml:"dialogues"`
	Turns     int `json:"turns" yaml:"turns"`
	// OfflineDialogues are dialogues with an answer of the offline
	// stand-in (placeholders, never training data), OfflineTurns such
	// turns.
	OfflineDialogues int `json:"offline_dialogues" yaml:"offline_dialogues"`
	OfflineTurns     int `json:"offline_turns" yaml:"offline_turns"`
	// AnswerModels counts turns by the model of the answer shown;
	// PoolModels counts turns by each model that proposed a candidate.
	AnswerModels map[string]int `json:"answer_models" yaml:"answer_models"`
	PoolModels   map[string]int `json:"pool_models" yaml:"pool_models"`
	// JudgeModels counts turns by the model that scored the answer shown
	// (none in rules-only mode), JudgeModes by how it was scored
	// (Verdict.Mode, or JudgeNone).
	JudgeModels map[string]int `json:"judge_models" yaml:"judge_models"`
	JudgeModes  map[string]int `json:"judge_modes" yaml:"judge_modes"`
	// QuerySources counts dialogues by who wrote the first query
	// (QuerySource* constants).
	QuerySources map[string]int `json:"query_sources" yaml:"query_sources"`
}

// NewProvenance is an empty Provenance whose maps are empty, not nil, so
// it encodes with every key.
func NewProvenance() Provenance {
	var p Provenance
	p.init()
	return p
}

// IsOffline reports whether any answer of d came from the offline
// stand-in.
func (d Dialogue) IsOffline() bool {
	if d.Offline {
		return true
	}
	for _, t := range d.Turns {
		if t.Offline {
			return true
		}
	}
	return false
}

// Add counts the first turns turns of d (all of them when turns exceeds
// them; a dialogue with no turn to count is not counted). The dialogue
// counts as offline when any of its answers, counted or not, came from
// the offline stand-in, as its exported record says.
func (p *Provenance) Add(d Dialogue, turns int) {
	turns = min(turns, len(d.Turns))
	if turns <= 0 {
		return
	}
	p.init()
	p.Dialogues++
	p.QuerySources[orUnknown(d.Config.QuerySource)]++
	if d.IsOffline() {
		p.OfflineDialogues++
	}
	for _, t := range d.Turns[:turns] {
		p.Turns++
		if t.Offline || d.Offline {
			p.OfflineTurns++
		}
		model := t.Model
		pool := map[string]bool{}
		for _, c := range t.Candidates {
			pool[orUnknown(c.Model)] = true
		}
		for m := range pool {
			p.PoolModels[m]++
		}
		v, ok := t.ShownVerdict()
		if !ok {
			p.JudgeModes[JudgeNone]++
		} else {
			p.JudgeModes[v.Mode()]++
			if v.JudgeModel != "" {
				p.JudgeModels[v.JudgeModel]++
			}
			if c := t.Candidates[v.Candidate]; c.Model != "" {
				model = c.Model
			}
		}
		p.AnswerModels[orUnknown(model)]++
	}
}

// Merge adds q's counts to p.
func (p *Provenance) Merge(q Provenance) {
	p.init()
	p.Dialogues += q.Dialogues
	p.Turns += q.Turns
	p.OfflineDialogues += q.OfflineDialogues
	p.OfflineTurns += q.OfflineTurns
	addCounts(p.AnswerModels, q.AnswerModels)
	addCounts(p.PoolModels, q.PoolModels)
	addCounts(p.JudgeModels, q.JudgeModels)
	addCounts(p.JudgeModes, q.JudgeModes)
	addCounts(p.QuerySources, q.QuerySources)
}

// init makes p's nil maps empty ones.
func (p *Provenance) init() {
	for _, m := range []*map[string]int{&p.AnswerModels, &p.PoolModels, &p.JudgeModels, &p.JudgeModes, &p.QuerySources} {
		if *m == nil {
			*m = map[string]int{}
		}
	}
}

func addCounts(dst, src map[string]int) {
	for k, n := range src {
		dst[k] += n
	}
}

// LLMJudged reports whether a judge model scored every counted turn: only
// then is "an answer the judge scored at least N" true of them.
func (p Provenance) LLMJudged() bool {
	return p.Turns > 0 && p.JudgeModes[JudgeLLM] == p.Turns
}

// Counts writes a count map as "a 3, b 1" (largest first, then by name),
// or "none".
func Counts(m map[string]int) string {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b string) int {
		if m[a] != m[b] {
			return m[b] - m[a]
		}
		return strings.Compare(a, b)
	})
	var parts []string
	for _, k := range keys {
		if m[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// OfflineSentence says how many of the dialogues counted, named by noun
// ("kept dialogues", "records"), hold the offline stand-in's answers:
// "2 of 8 records (3 of 15 turns) hold placeholder answers from the
// offline stand-in, not training data"; "" when none does.
func (p Provenance) OfflineSentence(noun string) string {
	if p.OfflineDialogues == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d %s (%d of %d turns) hold %s", p.OfflineDialogues, p.Dialogues, noun, p.OfflineTurns, p.Turns, OfflineWarning)
}

// OfflineHeadline is OfflineSentence as the banner of a page or card
// opens with it: "Not training data: 2 of 8 records (3 of 15 turns) hold
// placeholder answers from the offline stand-in"; "" when none does.
func (p Provenance) OfflineHeadline(noun string) string {
	if p.OfflineDialogues == 0 {
		return ""
	}
	return fmt.Sprintf("Not training data: %d of %d %s (%d of %d turns) hold %s", p.OfflineDialogues, p.Dialogues, noun, p.OfflineTurns, p.Turns, OfflineAnswers)
}

// OfflineAnswers names what the offline stand-in answers; OfflineWarning
// is the sentence every output that holds them shows, with the counts.
const (
	OfflineAnswers = "placeholder answers from the offline stand-in"
	OfflineWarning = OfflineAnswers + ", not training data"
)

func orUnknown(s string) string {
	if s == "" {
		return Unknown
	}
	return s
}

// KeepRate is how much of what was recorded an export keeps. It is the one
// definition of a keep rate that the dataset card, stats.json, the
// fidelity report and the dashboard show: over the dialogues recorded (the
// latest record of each config id, as export reads a dialogues file, see
// Latest) and their turns, the kept turns (package sft: those the judge
// scored at or above the minimum, up to the first that was not, in
// dialogues the driver completed) and the dialogues with at least one kept
// turn. Records dropped later by the dataset's quality gates are counted
// apart, as drops.
type KeepRate struct {
	Turns         int     `json:"turns" yaml:"turns"`
	KeptTurns     int     `json:"kept_turns" yaml:"kept_turns"`
	TurnRate      float64 `json:"turn_rate" yaml:"turn_rate"`
	Dialogues     int     `json:"dialogues" yaml:"dialogues"`
	KeptDialogues int     `json:"kept_dialogues" yaml:"kept_dialogues"`
	DialogueRate  float64 `json:"dialogue_rate" yaml:"dialogue_rate"`
}

// Add counts one recorded dialogue of turns turns, kept of them kept.
func (k *KeepRate) Add(turns, kept int) {
	k.Dialogues++
	k.Turns += turns
	k.KeptTurns += kept
	if kept > 0 {
		k.KeptDialogues++
	}
	k.TurnRate, k.DialogueRate = rate(k.KeptTurns, k.Turns), rate(k.KeptDialogues, k.Dialogues)
}

// rate is n/of rounded to four places (0 when of is 0).
func rate(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return math.Round(float64(n)/float64(of)*1e4) / 1e4
}

// String says both rates in words: "turns 11 of 15 kept (73.3%),
// dialogues 7 of 8 with a kept turn (87.5%)".
func (k KeepRate) String() string {
	return fmt.Sprintf("turns %d of %d kept (%.1f%%), dialogues %d of %d with a kept turn (%.1f%%)",
		k.KeptTurns, k.Turns, 100*k.TurnRate, k.KeptDialogues, k.Dialogues, 100*k.DialogueRate)
}

// Latest is ds with each config id once, its last record (a dialogue
// driven again after a failure, or re-judged, supersedes the earlier
// record), in the order of those last records: the dialogues an export
// reads from a dialogues file.
func Latest(ds []Dialogue) []Dialogue {
	last := make(map[string]int, len(ds))
	for i, d := range ds {
		last[d.ConfigID] = i
	}
	out := make([]Dialogue, 0, len(last))
	for i, d := range ds {
		if last[d.ConfigID] == i {
			out = append(out, d)
		}
	}
	return out
}
