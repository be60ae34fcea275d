package editor

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// A plugin that fails to activate leaves its chat view empty and its
// readiness sign away: every wait for them ran to its timeout (minutes),
// while the reason sat in the extension host's log from the first second
// ("Activating extension <id> failed due to an error:" and the error,
// e.g. "Cannot find module 'udx-native'"). An editor therefore follows
// its extension hosts' logs (<user-data>/logs/<stamp>/exthost*/
// remoteexthost.log, one per window) for the plugins it runs, and a
// window's waits end as soon as one failed, with those lines.

// ActivationError says a plugin failed to activate in the editor, with
// the lines of the extension host's log that say why.
type ActivationError struct {
	Extension string   // publisher.name
	Log       string   // the log file
	Lines     []string // the failure and the error after it
}

func (e *ActivationError) Error() string {
	return fmt.Sprintf("extension %s failed to activate; the extension host's log (%s) says: %s",
		e.Extension, e.Log, strings.Join(e.Lines, " | "))
}

// activationLines bounds the lines kept after the failure line (the
// error, its require stack and the top of its call stack).
const activationLines = 6

// activationTick is how often the logs are read: a failure is reported
// within about this long.
const activationTick = 250 * time.Millisecond

// activationWatch follows one editor's extension host logs for the
// activation failure of any of its plugins.
type activationWatch struct {
	logs   string   // <user-data>/logs
	ids    []string // the plugins, lower case
	old    map[string]bool
	failed chan struct{}
	err    *ActivationError
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once

	offsets map[string]int64
	pending map[string]*ActivationError // a failure line read, its error lines being read
}

// watchActivation starts following the logs under logs (the folder
// code-server writes its logs into, under its user-data folder) for the
// failure of any of the extensions ids; the logs there already belong
// to an earlier start of the editor and are passed over. Close stops it.
func watchActivation(logs string, ids []string) *activationWatch {
	w := &activationWatch{logs: logs, old: map[string]bool{}, failed: make(chan struct{}), stop: make(chan struct{}),
		done: make(chan struct{}), offsets: map[string]int64{}, pending: map[string]*ActivationError{}}
	for _, id := range ids {
		w.ids = append(w.ids, strings.ToLower(id))
	}
	for _, f := range w.files() {
		w.old[f] = true
	}
	go w.run()
	return w
}

// Failed is closed once a plugin failed to activate.
func (w *activationWatch) Failed() <-chan struct{} { return w.failed }

// Err is the *ActivationError once Failed is closed, else nil.
func (w *activationWatch) Err() error {
	select {
	case <-w.failed:
		return w.err
	default:
		return nil
	}
}

// Close stops following the logs and waits until it has.
func (w *activationWatch) Close() {
	w.once.Do(func() { close(w.stop) })
	<-w.done
}

func (w *activationWatch) run() {
	defer close(w.done)
	tick := time.NewTicker(activationTick)
	defer tick.Stop()
	for {
		if e := w.read(); e != nil {
			w.err = e
			close(w.failed)
			return
		}
		select {
		case <-w.stop:
			return
		case <-tick.C:
		}
	}
}

// files lists the extension host logs there are now.
func (w *activationWatch) files() []string {
	files, _ := filepath.Glob(filepath.Join(w.logs, "*", "exthost*", "remoteexthost.log"))
	return files
}

// read reads what the logs got since the last read and returns a failure
// whose error lines are complete: its error entry and the lines after it
// up to the next entry, or activationLines of them.
func (w *activationWatch) read() *ActivationError {
	for _, f := range w.files() {
		if w.old[f] {
			continue
		}
		if e := w.readFile(f); e != nil {
			return e
		}
	}
	return nil
}

// logEntry tells a log entry's first line ("2026-01-02 10:11:12.345
// [error] ...") from the lines that continue one (a stack).
func logEntry(line string) bool {
	return len(line) > 24 && line[4] == '-' && line[7] == '-' && line[10] == ' ' && strings.Contains(line[:30], "[")
}

func (w *activationWatch) readFile(path string) *ActivationError {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if _, err := f.Seek(w.offsets[path], io.SeekStart); err != nil {
		return nil
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil
	}
	// Only whole lines: the rest is read next time.
	end := bytes.LastIndexByte(data, '\n') + 1
	w.offsets[path] += int64(end)
	sc := bufio.NewScanner(bytes.NewReader(data[:end]))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if p := w.pending[path]; p != nil {
			// The failure line's error: the next entry and what
			// continues it, then the failure is complete.
			if logEntry(line) && len(p.Lines) > 1 || len(p.Lines) > activationLines {
				return p
			}
			if l := strings.TrimSpace(line); l != "" {
				p.Lines = append(p.Lines, l)
			}
			continue
		}
		if id := w.failure(line); id != "" {
			w.pending[path] = &ActivationError{Extension: id, Log: path, Lines: []string{strings.TrimSpace(line)}}
		}
	}
	// A failure whose error is the last thing logged yet: report what
	// there is once the log has its error line.
	if p := w.pending[path]; p != nil && len(p.Lines) > 1 {
		return p
	}
	return nil
}

// failure returns the plugin a log line says failed to activate, or "".
func (w *activationWatch) failure(line string) string {
	_, rest, ok := strings.Cut(line, "Activating extension ")
	if !ok || !strings.Contains(rest, " failed") {
		return ""
	}
	id, _, _ := strings.Cut(rest, " ")
	for _, want := range w.ids {
		if strings.ToLower(id) == want {
			return id
		}
	}
	return ""
}
