package sft

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"dialogfarm/dialog"
)

// The rows of an SFT file: one record per line, in one of the formats.
type (
	openaiRecord struct {
		Messages []dialog.Message `json:"messages"`
		Metadata any              `json:"metadata,omitempty"`
	}
	sharegptTurn struct {
		From  string `json:"from"`
		Value string `json:"value"`
	}
	sharegptRecord struct {
		Conversations []sharegptTurn `json:"conversations"`
		Metadata      any            `json:"metadata,omitempty"`
	}
)

// sharegptFrom maps chat roles to ShareGPT speakers.
var sharegptFrom = map[string]string{"system": "system", "user": "human", "assistant": "gpt"}

// RecordWriter writes SFT records, one JSON line each, in a format
// (FormatOpenAI, FormatShareGPT), with their metadata inline (under
// "metadata"), in a sidecar (one line per record: its 1-based "line" in
// the records file, then the metadata's keys) or nowhere (MetaNone). It
// is the one writer of record rows: the single-file export and the
// dataset folder both write through it.
type RecordWriter struct {
	out, sidecar io.Writer
	format, meta string
	n            int
}

// NewRecordWriter writes records to out and, with MetaSidecar, their
// metadata to sidecar.
func NewRecordWriter(out, sidecar io.Writer, format, meta string) *RecordWriter {
	return &RecordWriter{out: out, sidecar: sidecar, format: format, meta: meta}
}

// Write writes one record: the messages, and meta, a value that encodes
// as a JSON object (a Metadata, or a type that embeds one and adds keys).
func (w *RecordWriter) Write(msgs []dialog.Message, meta any) error {
	var inline any
	if w.meta == MetaInline {
		inline = meta
	}
	var rec any = openaiRecord{Messages: msgs, Metadata: inline}
	if w.format == FormatShareGPT {
		sg := sharegptRecord{Conversations: make([]sharegptTurn, 0, len(msgs)), Metadata: inline}
		for _, m := range msgs {
			from, ok := sharegptFrom[m.Role]
			if !ok {
				from = m.Role
			}
			sg.Conversations = append(sg.Conversations, sharegptTurn{From: from, Value: m.Content})
		}
		rec = sg
	}
	if err := writeJSONLine(w.out, rec); err != nil {
		return err
	}
	w.n++
	if w.meta != MetaSidecar {
		return nil
	}
	var b bytes.Buffer
	if err := writeJSONLine(&b, meta); err != nil {
		return err
	}
	obj, ok := bytes.CutPrefix(b.Bytes(), []byte("{"))
	if !ok {
		return errors.New("metadata is not a JSON object")
	}
	line := fmt.Sprintf(`{"line":%d`, w.n)
	if !bytes.HasPrefix(obj, []byte("}")) {
		line += ","
	}
	if _, err := io.WriteString(w.sidecar, line); err != nil {
		return err
	}
	_, err := w.sidecar.Write(obj)
	return err
}

// writeJSONLine writes v as one line of compact JSON, without escaping
// <, > and & (code keeps its characters as sent).
func writeJSONLine(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
