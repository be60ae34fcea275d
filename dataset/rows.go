package dataset

import (
	"bytes"
	"encoding/json"
	"strconv"

	"dialogfarm/dialog"
	"dialogfarm/sft"
)

// float is a float64 that is always written with a decimal point, so a
// column of scores is one Arrow type (double) in every block, even when a
// block holds only whole scores.
type float float64

func (f float) MarshalJSON() ([]byte, error) {
	b := strconv.AppendFloat(nil, float64(f), 'f', -1, 64)
	if !bytes.ContainsAny(b, ".eE") {
		b = append(b, '.', '0')
	}
	return b, nil
}

// metaRow is a record's metadata as the folder writes it: sft's metadata,
// its split and token count, and its turns in the one-type-per-key form
// (turnRow) instead of sft's.
type metaRow struct {
	sft.Metadata
	Split  string    `json:"split"`
	Tokens int       `json:"tokens"`
	Turns  []turnRow `json:"turns"` // replaces sft.Metadata's turns
}

// turnRow is an sft.TurnMeta with one JSON type per key: the score always
// a float, the judge's deductions JSON text ("[]" when it deducted
// nothing) instead of a list that is empty on most lines.
type turnRow struct {
	Score      float  `json:"score"`
	Model      string `json:"model"`
	Member     string `json:"member"`
	RulesOnly  bool   `json:"rules_only"`
	Deductions string `json:"deductions"`
}

func newMetaRow(s *sample) metaRow {
	m := metaRow{Metadata: s.Meta, Split: s.split, Tokens: s.tokens, Turns: []turnRow{}}
	for _, t := range s.Meta.Turns {
		ded := t.Deductions
		if ded == nil {
			ded = []dialog.Deduction{}
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(ded) // a list of plain structs always encodes
		m.Turns = append(m.Turns, turnRow{
			Score: float(t.Score), Model: t.Model, Member: t.Member, RulesOnly: t.RulesOnly,
			Deductions: string(bytes.TrimSuffix(b.Bytes(), []byte("\n"))),
		})
	}
	return m
}
