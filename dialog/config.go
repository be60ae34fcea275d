package dialog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"dialogfarm/internal/jsonl"
)

// FieldError says which field of an input file is wrong, and where: a
// chat config (with its id), an adapter file, a behaviour profile. Every
// stage that reads a file the user wrote reports its problems as
// *FieldErrors: "FILE:LINE: config "ID": field F: message".
type FieldError struct {
	File  string // file the field came from, when known
	Line  int    // 1-based line in that file, when known
	ID    string // the config id, when it could be read
	Field string // path of the field, e.g. "selection.end.line"
	Msg   string
	// PathOnly writes the field as its bare path ("F: message", the style
	// of profile errors) rather than "field F: message".
	PathOnly bool
}

func (e *FieldError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d", e.Line)
		}
		b.WriteString(": ")
	}
	if e.ID != "" {
		fmt.Fprintf(&b, "config %q: ", e.ID)
	}
	switch {
	case e.Field != "" && e.PathOnly:
		b.WriteString(e.Field + ": ")
	case e.Field != "":
		fmt.Fprintf(&b, "field %s: ", e.Field)
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Validate checks the fields a simulator needs; it returns a *FieldError for
// the first field that is missing or out of range.
func (c ChatConfig) Validate() error {
	bad := func(field, format string, args ...any) error {
		return &FieldError{ID: c.ID, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	switch {
	case strings.TrimSpace(c.ID) == "":
		return bad("id", "is required")
	case c.Repo == "":
		return bad("repo", "is required")
	case c.File == "":
		return bad("file", "is required")
	case strings.HasPrefix(c.File, "/") || slices.Contains(strings.Split(c.File, "/"), ".."):
		return bad("file", "must be a path inside the repository, got %q", c.File)
	case !slices.Contains(Triggers, c.Trigger):
		return bad("trigger", "must be one of %s, got %q", strings.Join(Triggers, ", "), c.Trigger)
	case !slices.Contains(Instructions, c.Instruction):
		return bad("instruction", "must be one of %s, got %q", strings.Join(Instructions, ", "), c.Instruction)
	case len(c.Turns) == 0:
		return bad("turns", "needs at least one turn")
	}
	for i, f := range c.OpenFiles {
		if f == "" || strings.HasPrefix(f, "/") || slices.Contains(strings.Split(f, "/"), "..") {
			return bad(fmt.Sprintf("open_files[%d]", i), "must be a path inside the repository, got %q", f)
		}
	}
	if c.FollowUp != nil {
		for i, k := range c.FollowUp.Kinds {
			if strings.TrimSpace(k) == "" {
				return bad(fmt.Sprintf("follow_up.kinds[%d]", i), "is empty")
			}
		}
	}
	if c.Cursor != nil {
		if err := c.Cursor.check(); err != nil {
			return bad("cursor", "%v", err)
		}
	}
	if s := c.Selection; s != nil {
		if err := s.Start.check(); err != nil {
			return bad("selection.start", "%v", err)
		}
		if err := s.End.check(); err != nil {
			return bad("selection.end", "%v", err)
		}
		if s.End.Line < s.Start.Line || (s.End.Line == s.Start.Line && s.End.Col <= s.Start.Col) {
			return bad("selection.end", "must come after selection.start")
		}
	}
	for i, t := range c.Turns {
		if strings.TrimSpace(t.Query) == "" {
			return bad(fmt.Sprintf("turns[%d].query", i), "is empty")
		}
	}
	switch c.Instruction {
	case InstructionSlash:
		if !strings.HasPrefix(c.Turns[0].Query, "/") {
			return bad("turns[0].query", "a slash_command instruction must start with '/', got %q", c.Turns[0].Query)
		}
	case InstructionCommand:
		if c.Trigger == TriggerPanel {
			return bad("trigger", "a command instruction runs a plugin command: use palette, keybinding or context_menu, not panel")
		}
		if q := c.Turns[0].Query; !strings.HasPrefix(q, "/") || strings.ContainsAny(strings.TrimSpace(q), " \t\n") {
			return bad("turns[0].query", "a command instruction names one plugin command by its slash form (e.g. /explain), got %q", q)
		}
	}
	return nil
}

func (p Position) check() error {
	if p.Line < 1 || p.Col < 1 {
		return fmt.Errorf("line and col are 1-based, got line %d col %d", p.Line, p.Col)
	}
	return nil
}

// ReadConfigs reads ChatConfigs, one JSON object per line, from r. Blank
// lines and lines starting with '#' are skipped. A line that does not parse
// or validate is reported as a *FieldError naming file, line and field and
// does not stop the others: the valid configs and the joined errors are both
// returned. Duplicate ids are an error on the later line. A line over
// jsonl.MaxLine bytes is such an error too, and the lines after it are read.
func ReadConfigs(r io.Reader, file string) ([]ChatConfig, error) {
	var (
		configs []ChatConfig
		errs    []error
		seen    = map[string]int{}
	)
	lr := jsonl.NewReader(r)
	for n := 1; ; n++ {
		l, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			errs = append(errs, &jsonl.Error{File: file, Line: n, Err: err})
			break
		}
		line := l.N
		if l.TooLong {
			errs = append(errs, &FieldError{File: file, Line: line, Msg: lr.TooLong(l).Error()})
			continue
		}
		text := bytes.TrimSpace(l.Data)
		if len(text) == 0 || text[0] == '#' {
			continue
		}
		c, err := decodeConfig(text)
		if err == nil {
			err = c.Validate()
		}
		if err == nil {
			if first, dup := seen[c.ID]; dup {
				err = &FieldError{ID: c.ID, Field: "id", Msg: fmt.Sprintf("duplicate id, first on line %d", first)}
			}
		}
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) {
				fe = &FieldError{Msg: err.Error()}
			}
			fe.File, fe.Line = file, line
			errs = append(errs, fe)
			continue
		}
		seen[c.ID] = line
		configs = append(configs, c)
	}
	return configs, errors.Join(errs...)
}

// decodeConfig decodes one line strictly: unknown fields and wrong types
// name the field.
func decodeConfig(line []byte) (ChatConfig, error) {
	var c ChatConfig
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return c, &FieldError{ID: c.ID, Field: te.Field, Msg: fmt.Sprintf("expected %s, got JSON %s", te.Type, te.Value)}
		}
		if msg, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return c, &FieldError{ID: c.ID, Field: strings.Trim(msg, `"`), Msg: "unknown field"}
		}
		return c, &FieldError{Msg: "not a JSON object: " + err.Error()}
	}
	if dec.More() {
		return c, &FieldError{ID: c.ID, Msg: "more than one JSON value on the line"}
	}
	return c, nil
}
