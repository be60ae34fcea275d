package dialog

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
)

// Line is one line of a JSONL file.
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

// LineReader reads a file line by line, with no limit on line length but
// Max: a line longer than Max bytes (when Max > 0) is reported TooLong and
// skipped without being held in memory, and the next line is read as usual.
type LineReader struct {
	r   *bufio.Reader
	Max int
	n   int
}

// NewLineReader reads r; max bounds a line's length (0: no bound).
func NewLineReader(r io.Reader, max int) *LineReader {
	return &LineReader{r: bufio.NewReaderSize(r, 64*1024), Max: max}
}

// Next returns the next line, or io.EOF after the last one.
func (lr *LineReader) Next() (Line, error) {
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

// ReadJSONL calls fn for each non-blank line of r, with its number. A last
// line without its newline that is not valid JSON is the torn write of a
// run killed mid-append (drive skips it the same way when it resumes): it
// is not passed to fn, and torn reports it. An error from fn stops the
// reading and is returned.
func ReadJSONL(r io.Reader, fn func(n int, line []byte) error) (torn bool, err error) {
	lr := NewLineReader(r, 0)
	for {
		l, err := lr.Next()
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if len(bytes.TrimSpace(l.Data)) == 0 {
			continue
		}
		if l.Unterminated && !json.Valid(l.Data) {
			return true, nil
		}
		if err := fn(l.N, l.Data); err != nil {
			return false, err
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
