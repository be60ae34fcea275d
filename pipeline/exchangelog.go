package pipeline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"gopkg.in/natefinch/lumberjack.v2"

	"dialogfarm/capture"
	"dialogfarm/dialog"
	"dialogfarm/internal/runfiles"
)

// exchangeLog appends exchanges (and the farm's attempts and dead letters)
// as JSON lines, one write each, with '<', '>' and '&' kept as written:
// to a file, synced after each line, or to a rotating one.
type exchangeLog struct {
	mu    sync.Mutex
	path  string
	w     io.Writer
	sync  func() error // nil: not synced
	close func() error
}

var _ capture.Sink = (*exchangeLog)(nil)

// openExchangeLog appends to path. With maxMiB > 0, a file that would
// grow past it is moved aside (one older file is kept, named by the time
// it was moved: lumberjack), and lines are not synced: a standing
// worker's exchanges, which the records it sends carry to the run folder
// anyway, would otherwise fill its disk (docs/farm.md).
func openExchangeLog(path string, maxMiB int) (*exchangeLog, error) {
	if maxMiB > 0 {
		r := &lumberjack.Logger{Filename: path, MaxSize: maxMiB, MaxBackups: 1}
		return &exchangeLog{path: path, w: r, close: r.Close}, nil
	}
	f, err := runfiles.OpenAppend(path)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return &exchangeLog{path: path, w: f, sync: f.Sync, close: f.Close}, nil
}

// Record appends one exchange.
func (l *exchangeLog) Record(ex dialog.Exchange) error {
	if err := l.Append(ex); err != nil {
		return fmt.Errorf("append exchange %s/%d: %w", ex.Session, ex.Seq, err)
	}
	return nil
}

// Append appends one JSON value, in one write (a rotation never splits a
// line), and syncs it.
func (l *exchangeLog) Append(v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("append to %s: %w", l.path, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("append to %s: %w", l.path, err)
	}
	if l.sync != nil {
		return l.sync()
	}
	return nil
}

// Close closes the file.
func (l *exchangeLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.close()
}
