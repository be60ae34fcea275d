// Package jsonl reads JSON Lines files, the one way every part of
// dialogfarm reads them: configs, dialogues, attempts, scored labels,
// pipeline journals, task instances, interaction logs.
//
// A line may be at most MaxLine bytes (64 MiB). A longer line is read past
// without being held in memory and reported as an *Error naming the file
// and the line, as is every other error about a line ("dialogues.jsonl:7:
// ..."). Blank lines are skipped.
//
// Files that a run appends to (dialogues, attempts) can end in the torn
// last line of a process killed mid-write. ReadLog and EachLog skip such a
// line — a last line without its newline that is not valid JSON — and say
// so; the readers of whole files (Each, Read) report it as the error it
// is, so a hand-written file that was cut short is never read as shorter.
package jsonl

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// MaxLine is the longest line, in bytes without its newline, that
// dialogfarm reads from a JSONL file: 64 MiB.
const MaxLine = 64 << 20

// ErrTooLong is wrapped by the *Error of a line over MaxLine.
var ErrTooLong = errors.New("line too long")

// Error is a failure on one line of a file.
type Error struct {
	File string // the file's name or path as the caller gave it
	Line int    // 1-based
	Err  error
}

func (e *Error) Error() string { return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err) }

// Unwrap returns the line's error.
func (e *Error) Unwrap() error { return e.Err }

// Line is one line of a file.
type Line struct {
	N    int    // 1-based line number
	Data []byte // the line without its newline; nil when TooLong
	Size int    // the line's length in bytes, without its newline
	// Unterminated is set on a last line with no newline after it.
	Unterminated bool
	// TooLong is set when Size is over the reader's limit; the line's bytes
	// were read past, not kept.
	TooLong bool
}

// Reader reads a file line by line. A line longer than Max bytes is
// reported TooLong and skipped without being held in memory, and the next
// line is read as usual.
type Reader struct {
	r   *bufio.Reader
	Max int
	n   int
}

// NewReader reads r with the limit MaxLine.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 64*1024), Max: MaxLine}
}

// Next returns the next line, or io.EOF after the last one.
func (lr *Reader) Next() (Line, error) {
	var buf []byte
	size, over := 0, false
	for {
		chunk, err := lr.r.ReadSlice('\n')
		size += len(chunk)
		if !over {
			buf = append(buf, chunk...)
			if lr.Max > 0 && len(buf) > lr.Max+1 { // +1: the newline
				over, buf = true, nil
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return Line{}, err
		}
		if errors.Is(err, io.EOF) && size == 0 {
			return Line{}, io.EOF
		}
		lr.n++
		l := Line{N: lr.n, Size: size, Unterminated: err != nil}
		if !l.Unterminated {
			l.Size--
			buf = bytes.TrimSuffix(buf, []byte("\n"))
		}
		if over || (lr.Max > 0 && l.Size > lr.Max) {
			l.TooLong = true
		} else {
			l.Data = buf
		}
		return l, nil
	}
}

// TooLong is the error of a line over the reader's limit.
func (lr *Reader) TooLong(l Line) error {
	limit := fmt.Sprintf("%d bytes", lr.Max)
	if lr.Max%(1<<20) == 0 {
		limit = fmt.Sprintf("%d MiB", lr.Max>>20)
	}
	return fmt.Errorf("%w: %d bytes, over the %s a line may have", ErrTooLong, l.Size, limit)
}

// Each calls fn for each non-blank line of r, with its number; name names
// r in errors. A line over MaxLine, a read error, or an error from fn
// stops the reading and is returned as an *Error naming name and the line.
func Each(r io.Reader, name string, fn func(n int, line []byte) error) error {
	_, err := each(r, name, false, fn)
	return err
}

// EachLog is Each for a file a run appends to: a torn last line (no
// newline after it, not valid JSON) is not passed to fn, and torn reports
// it.
func EachLog(r io.Reader, name string, fn func(n int, line []byte) error) (torn bool, err error) {
	return each(r, name, true, fn)
}

func each(r io.Reader, name string, log bool, fn func(n int, line []byte) error) (bool, error) {
	return eachMax(r, name, log, MaxLine, fn)
}

func eachMax(r io.Reader, name string, log bool, max int, fn func(n int, line []byte) error) (bool, error) {
	lr := NewReader(r)
	lr.Max = max
	for {
		l, err := lr.Next()
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		if err != nil {
			return false, &Error{File: name, Line: lr.n + 1, Err: err}
		}
		if l.TooLong {
			if log && l.Unterminated {
				return true, nil
			}
			return false, &Error{File: name, Line: l.N, Err: lr.TooLong(l)}
		}
		if len(bytes.TrimSpace(l.Data)) == 0 {
			continue
		}
		if log && l.Unterminated && !json.Valid(l.Data) {
			return true, nil
		}
		if err := fn(l.N, l.Data); err != nil {
			var le *Error
			if errors.As(err, &le) {
				return false, err
			}
			return false, &Error{File: name, Line: l.N, Err: err}
		}
	}
}

// ContextReader reads r until ctx ends, so a long read of a large file
// stops at a signal.
func ContextReader(ctx context.Context, r io.Reader) io.Reader { return ctxReader{ctx, r} }

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// Read decodes one T per non-blank line of the file path. A missing file
// gives an error wrapping os.ErrNotExist; a line that does not decode is
// an *Error naming path and the line.
func Read[T any](path string) ([]T, error) {
	out, _, err := read[T](path, false)
	return out, err
}

// ReadLog is Read for a file a run appends to: a torn last line is
// skipped, and torn says so.
func ReadLog[T any](path string) (out []T, torn bool, err error) {
	return read[T](path, true)
}

func read[T any](path string, log bool) ([]T, bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	var out []T
	torn, err := each(f, path, log, func(_ int, line []byte) error {
		var v T
		if err := json.Unmarshal(line, &v); err != nil {
			return err
		}
		out = append(out, v)
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return out, torn, nil
}
