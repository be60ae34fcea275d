package analyst

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"dialogfarm/internal/jsonl"

	"gopkg.in/yaml.v3"
)

// Log field names, as the mapping's keys.
const (
	FieldSessionID     = "session_id"
	FieldTurn          = "turn"
	FieldQuery         = "query"
	FieldFile          = "file"
	FieldLanguage      = "language"
	FieldSelection     = "selection"
	FieldCursor        = "cursor"
	FieldTrigger       = "trigger"
	FieldCommand       = "command"
	FieldFileLines     = "file_lines"
	FieldFunctionLines = "function_lines"
	FieldInFunction    = "in_function"
	FieldOpenFiles     = "open_files"
)

func logFields() []string {
	return []string{FieldSessionID, FieldTurn, FieldQuery, FieldFile, FieldLanguage, FieldSelection,
		FieldCursor, FieldTrigger, FieldCommand, FieldFileLines, FieldFunctionLines, FieldInFunction, FieldOpenFiles}
}

// Mapping says where each log field is in records whose names differ:
// Fields maps a log field (session_id, query, ...) to a dotted path in the
// JSON object ("ctx.session", "editor.selection.text"). Fields not mapped
// are read under their own name. Values maps raw trigger or command values
// to canonical ones ({trigger: {sidebar: panel}}).
type Mapping struct {
	Fields map[string]string            `yaml:"fields"`
	Values map[string]map[string]string `yaml:"values"`
}

// ReadMapping reads a mapping YAML file.
func ReadMapping(path string) (Mapping, error) {
	var m Mapping
	data, err := os.ReadFile(path)
	if err != nil {
		return m, fmt.Errorf("read mapping: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&m); err != nil {
		return m, fmt.Errorf("read mapping %s: %w", path, err)
	}
	for f := range m.Fields {
		if !slices.Contains(logFields(), f) {
			return m, fmt.Errorf("read mapping %s: fields.%s: unknown log field (known: %s)", path, f, strings.Join(logFields(), ", "))
		}
	}
	return m, nil
}

func (m Mapping) path(field string) string {
	if p, ok := m.Fields[field]; ok && p != "" {
		return p
	}
	return field
}

// Record is one interaction-log entry in canonical form.
type Record struct {
	Line      int
	SessionID string
	Turn      int // 0 when the log has no turn number
	Query     string
	File      string
	Language  string
	Selection Selection
	Cursor    *Cursor
	Trigger   string
	Command   string
	// FileLines and FunctionLines are the file's and the enclosing
	// function's line counts when logged (0 = unknown); InFunction whether
	// the cursor was in a function (nil = unknown); OpenFiles how many files
	// were open.
	FileLines     int
	FunctionLines int
	InFunction    *bool
	OpenFiles     int
}

// Selection is what was selected; Lines and Chars are 0 when unknown.
type Selection struct {
	Present bool
	Lines   int
	Chars   int
	Text    string
}

// Cursor is a logged cursor position.
type Cursor struct{ Line, Col int }

// BadLine is a log line that could not be used, and why.
type BadLine struct {
	Line   int    `json:"line"`
	Reason string `json:"reason"`
}

// ReadLogs reads JSONL interaction logs. Lines that are not JSON objects,
// lack a session or query, or are over jsonl.MaxLine bytes are returned as
// bad lines, never dropped silently; blank lines are skipped.
func ReadLogs(r io.Reader, m Mapping) ([]Record, []BadLine, error) {
	var recs []Record
	var bad []BadLine
	lr := jsonl.NewReader(r)
	for line := 1; ; line++ {
		l, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return recs, bad, fmt.Errorf("read logs line %d: %w", line, err)
		}
		if l.TooLong {
			bad = append(bad, BadLine{Line: line, Reason: lr.TooLong(l).Error()})
			continue
		}
		raw := bytes.TrimSpace(l.Data)
		if len(raw) == 0 {
			continue
		}
		var obj map[string]any
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&obj); err != nil {
			bad = append(bad, BadLine{Line: line, Reason: "not a JSON object: " + err.Error()})
			continue
		}
		rec, err := parseRecord(obj, m)
		if err != nil {
			bad = append(bad, BadLine{Line: line, Reason: err.Error()})
			continue
		}
		rec.Line = line
		recs = append(recs, rec)
	}
	return recs, bad, nil
}

func parseRecord(obj map[string]any, m Mapping) (Record, error) {
	get := func(field string) any { return lookup(obj, m.path(field)) }
	var r Record
	r.SessionID = str(get(FieldSessionID))
	if r.SessionID == "" {
		return r, fmt.Errorf("missing %s (read from %q)", FieldSessionID, m.path(FieldSessionID))
	}
	q, ok := get(FieldQuery).(string)
	if !ok || strings.TrimSpace(q) == "" {
		return r, fmt.Errorf("missing %s (read from %q)", FieldQuery, m.path(FieldQuery))
	}
	r.Query = q
	r.Turn = num(get(FieldTurn))
	r.File = str(get(FieldFile))
	r.Language = str(get(FieldLanguage))
	r.Selection = parseSelection(get(FieldSelection))
	r.Cursor = parseCursor(get(FieldCursor))
	r.Trigger = mapValue(m, FieldTrigger, str(get(FieldTrigger)))
	r.Command = mapValue(m, FieldCommand, str(get(FieldCommand)))
	r.FileLines = num(get(FieldFileLines))
	r.FunctionLines = num(get(FieldFunctionLines))
	if b, ok := get(FieldInFunction).(bool); ok {
		r.InFunction = &b
	}
	switch v := get(FieldOpenFiles).(type) {
	case []any:
		r.OpenFiles = len(v)
	default:
		r.OpenFiles = num(v)
	}
	return r, nil
}

func mapValue(m Mapping, field, v string) string {
	if to, ok := m.Values[field][v]; ok {
		return to
	}
	return v
}

// lookup follows a dotted path through nested objects.
func lookup(obj map[string]any, path string) any {
	var cur any = obj
	for _, part := range strings.Split(path, ".") {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[part]
	}
	return cur
}

func str(v any) string {
	switch x := v.(type) {
	case string:
		return strings.TrimSpace(x)
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	}
	return ""
}

func num(v any) int {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return int(i)
		}
		if f, err := x.Float64(); err == nil {
			return int(f)
		}
	case string:
		i, _ := strconv.Atoi(strings.TrimSpace(x))
		return i
	}
	return 0
}

// parseSelection reads a selection given as its text, a character count,
// or an object with any of chars, lines, text, start/end {line, col}.
func parseSelection(v any) Selection {
	switch x := v.(type) {
	case string:
		if x == "" {
			return Selection{}
		}
		return Selection{Present: true, Text: x, Chars: utf8.RuneCountInString(x), Lines: strings.Count(strings.TrimRight(x, "\n"), "\n") + 1}
	case json.Number:
		n := num(x)
		return Selection{Present: n > 0, Chars: n}
	case map[string]any:
		s := Selection{Chars: num(x["chars"]), Lines: num(x["lines"])}
		if t, ok := x["text"].(string); ok && t != "" {
			s = parseSelection(t)
		}
		if st, en := parseCursor(x["start"]), parseCursor(x["end"]); st != nil && en != nil && s.Lines == 0 {
			s.Lines = en.Line - st.Line + 1
			if en.Col <= 1 && en.Line > st.Line {
				s.Lines--
			}
			if en.Line == st.Line && en.Col == st.Col {
				s.Lines = 0
			}
		}
		s.Present = s.Chars > 0 || s.Lines > 0 || s.Text != ""
		return s
	}
	return Selection{}
}

// parseCursor reads {line, col|column|character} or [line, col].
func parseCursor(v any) *Cursor {
	switch x := v.(type) {
	case map[string]any:
		if _, ok := x["line"]; !ok {
			return nil
		}
		c := &Cursor{Line: num(x["line"])}
		for _, k := range []string{"col", "column", "character"} {
			if _, ok := x[k]; ok {
				c.Col = num(x[k])
			}
		}
		return c
	case []any:
		if len(x) == 2 {
			return &Cursor{Line: num(x[0]), Col: num(x[1])}
		}
	}
	return nil
}
