package driver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"dialogfarm/dialog"
	"dialogfarm/internal/jsonl"
	"dialogfarm/internal/runfiles"
)

// RecordLog is a run folder's dialogues.jsonl: one record per config,
// appended and synced as each config finishes, so a killed run loses at most
// the config in flight.
//
// Opening an existing log keeps the ok records, moves failed ones to
// attempts.jsonl (they will be driven again) and drops a torn last line left
// by a kill mid-write. Each config id therefore appears once in
// dialogues.jsonl: as its latest attempt.
type RecordLog struct {
	path string
	mu   sync.Mutex
	f    *os.File
	done map[string]bool
}

// OpenRecordLog opens or creates dir/dialogues.jsonl.
func OpenRecordLog(dir string) (*RecordLog, error) {
	if err := runfiles.MkdirAll(dir); err != nil {
		return nil, fmt.Errorf("create run folder: %w", err)
	}
	path := filepath.Join(dir, "dialogues.jsonl")
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	keep, retry := &bytes.Buffer{}, &bytes.Buffer{}
	done := map[string]bool{}
	// A torn last line of a killed run is dropped: that config runs again.
	_, err = jsonl.EachLog(bytes.NewReader(data), path, func(_ int, raw []byte) error {
		var d struct {
			ConfigID string `json:"config_id"`
			Status   string `json:"status"`
		}
		if err := json.Unmarshal(raw, &d); err != nil {
			return fmt.Errorf("not a dialogue record: %v", err)
		}
		if d.ConfigID == "" {
			return errors.New("not a dialogue record: field config_id is missing")
		}
		if d.Status == dialog.StatusOK && !done[d.ConfigID] {
			done[d.ConfigID] = true
			keep.Write(raw)
			keep.WriteByte('\n')
		} else if d.Status != dialog.StatusOK {
			retry.Write(raw)
			retry.WriteByte('\n')
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if retry.Len() > 0 {
		if err := appendFile(filepath.Join(dir, "attempts.jsonl"), retry.Bytes()); err != nil {
			return nil, err
		}
	}
	if !bytes.Equal(keep.Bytes(), data) {
		if err := runfiles.WriteAtomic(path, keep.Bytes()); err != nil {
			return nil, err
		}
	}
	f, err := runfiles.OpenAppend(path)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return &RecordLog{path: path, f: f, done: done}, nil
}

// Path is the log's file path.
func (l *RecordLog) Path() string { return l.path }

// Done reports whether a config is already recorded ok.
func (l *RecordLog) Done(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.done[id]
}

// Append writes one record and syncs it to disk.
func (l *RecordLog) Append(d dialog.Dialogue) error {
	// An encoder that leaves '<', '>' and '&' as they are, so the captured
	// request bodies keep the plugin's bytes (its JSON is already compact).
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(d); err != nil {
		return fmt.Errorf("encode record %s: %w", d.ConfigID, err)
	}
	line := buf.Bytes()
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.f.Write(line); err != nil {
		return fmt.Errorf("append to %s: %w", l.path, err)
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", l.path, err)
	}
	if d.Status == dialog.StatusOK {
		l.done[d.ConfigID] = true
	}
	return nil
}

// Close closes the file.
func (l *RecordLog) Close() error { return l.f.Close() }

func appendFile(path string, data []byte) error {
	f, err := runfiles.OpenAppend(path)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("append to %s: %w", path, err)
	}
	return f.Sync()
}
