package dataset

import (
	"bytes"
	"encoding/json"
	"io"
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

// metaRow is a record's metadata with every key on every line.
type metaRow struct {
	ID         string    `json:"id"`
	ConfigID   string    `json:"config_id"`
	Intent     string    `json:"intent"`
	Language   string    `json:"language"`
	Locale     string    `json:"locale"`
	Difficulty string    `json:"difficulty"`
	Offline    bool      `json:"offline"`
	Split      string    `json:"split"`
	Tokens     int       `json:"tokens"`
	Turns      []turnRow `json:"turns"`
}

// turnRow describes one kept turn's answer. Deductions is JSON text ("[]"
// when the judge deducted nothing).
type turnRow struct {
	Score      float  `json:"score"`
	Model      string `json:"model"`
	Member     string `json:"member"`
	RulesOnly  bool   `json:"rules_only"`
	Deductions string `json:"deductions"`
}

type openaiRow struct {
	Messages []dialog.Message `json:"messages"`
	Metadata *metaRow         `json:"metadata,omitempty"`
}

type sharegptMessage struct {
	From  string `json:"from"`
	Value string `json:"value"`
}

type sharegptRow struct {
	Conversations []sharegptMessage `json:"conversations"`
	Metadata      *metaRow          `json:"metadata,omitempty"`
}

// sidecarRow is one line of NAME.meta.jsonl: the line of the record it
// describes (1-based) and its metadata.
type sidecarRow struct {
	Line int `json:"line"`
	metaRow
}

// sharegptFrom maps chat roles to ShareGPT speakers.
var sharegptFrom = map[string]string{"system": "system", "user": "human", "assistant": "gpt"}

func newMetaRow(s *sample) (metaRow, error) {
	m := metaRow{
		ID: s.meta.ID, ConfigID: s.meta.ConfigID, Intent: s.meta.Intent, Language: s.meta.Language,
		Locale: s.meta.Locale, Difficulty: s.meta.Difficulty, Offline: s.meta.Offline,
		Split: s.split, Tokens: s.tokens, Turns: []turnRow{},
	}
	for _, t := range s.meta.Turns {
		ded := t.Deductions
		if ded == nil {
			ded = []dialog.Deduction{}
		}
		var b bytes.Buffer
		if err := writeJSONLine(&b, ded); err != nil {
			return m, err
		}
		m.Turns = append(m.Turns, turnRow{
			Score: float(t.Score), Model: t.Model, Member: t.Member, RulesOnly: t.RulesOnly,
			Deductions: string(bytes.TrimSuffix(b.Bytes(), []byte("\n"))),
		})
	}
	return m, nil
}

// writeRow writes s's record to out and, with a sidecar, its metadata to
// meta.
func writeRow(out, meta io.Writer, line int, s *sample, format, metaMode string) error {
	m, err := newMetaRow(s)
	if err != nil {
		return err
	}
	var inline *metaRow
	if metaMode == sft.MetaInline {
		inline = &m
	}
	var rec any = openaiRow{Messages: s.msgs, Metadata: inline}
	if format == sft.FormatShareGPT {
		row := sharegptRow{Conversations: make([]sharegptMessage, 0, len(s.msgs)), Metadata: inline}
		for _, msg := range s.msgs {
			row.Conversations = append(row.Conversations, sharegptMessage{From: sharegptFrom[msg.Role], Value: msg.Content})
		}
		rec = row
	}
	if err := writeJSONLine(out, rec); err != nil {
		return err
	}
	if metaMode == sft.MetaSidecar {
		return writeJSONLine(meta, sidecarRow{Line: line, metaRow: m})
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
