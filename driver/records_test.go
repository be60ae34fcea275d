package driver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"dialogfarm/dialog"
)

// record is a minimal dialogue record for id with the given status.
func record(id, status string) dialog.Dialogue {
	return dialog.Dialogue{
		ConfigID:  id,
		Status:    status,
		Config:    dialog.ChatConfig{ID: id, Repo: "/repos/strs", File: "strs/strs.go"},
		StartedAt: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC),
	}
}

// jsonLine is d as RecordLog.Append writes it.
// jsonLine is d as a record line: JSON with '<', '>' and '&' unescaped, so
// captured request bodies keep their bytes.
func jsonLine(tb testing.TB, d dialog.Dialogue) string {
	tb.Helper()
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(d); err != nil {
		tb.Fatal(err)
	}
	return b.String()
}

func openLog(tb testing.TB, dir string) *RecordLog {
	tb.Helper()
	l, err := OpenRecordLog(dir)
	if err != nil {
		tb.Fatalf("OpenRecordLog: %v", err)
	}
	tb.Cleanup(func() { l.Close() })
	return l
}

// readFile returns the file's content, "" when it does not exist.
func readFile(tb testing.TB, path string) string {
	tb.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return ""
	}
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

func TestRecordLogFreshFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "runs", "r1") // does not exist yet
	l := openLog(t, dir)
	if want := filepath.Join(dir, "dialogues.jsonl"); l.Path() != want {
		t.Errorf("Path() = %q, want %q", l.Path(), want)
	}
	if _, err := os.Stat(l.Path()); err != nil {
		t.Errorf("dialogues.jsonl was not created: %v", err)
	}
	if l.Done("c1") {
		t.Error("Done(c1) in an empty log")
	}
	if _, err := os.Stat(filepath.Join(dir, "attempts.jsonl")); !os.IsNotExist(err) {
		t.Errorf("attempts.jsonl exists in a fresh folder (stat err %v)", err)
	}
}

func TestRecordLogAppend(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir)
	ok, failed := record("a", dialog.StatusOK), record("b", dialog.StatusFailed)
	failed.Error, failed.FailedStep = "status bar never showed Ln 3, Col 5", "cursor"
	for _, d := range []dialog.Dialogue{ok, failed} {
		if err := l.Append(d); err != nil {
			t.Fatalf("Append(%s): %v", d.ConfigID, err)
		}
	}
	if !l.Done("a") {
		t.Error("Done(a) = false after appending an ok record")
	}
	if l.Done("b") {
		t.Error("Done(b) = true after appending a failed record")
	}
	if got, want := readFile(t, l.Path()), jsonLine(t, ok)+jsonLine(t, failed); got != want {
		t.Errorf("dialogues.jsonl =\n%s\nwant\n%s", got, want)
	}
}

func TestOpenRecordLogExisting(t *testing.T) {
	okA, okB, okC := jsonLine(t, record("a", dialog.StatusOK)), jsonLine(t, record("b", dialog.StatusOK)), jsonLine(t, record("c", dialog.StatusOK))
	failedA, failedB := jsonLine(t, record("a", dialog.StatusFailed)), jsonLine(t, record("b", dialog.StatusFailed))
	okA2 := record("a", dialog.StatusOK)
	okA2.Seconds = 42
	okA2Line := jsonLine(t, okA2)
	torn := okB[:len(okB)/2] // a kill mid-write: no newline, not JSON

	cases := []struct {
		name          string
		existing      string // dialogues.jsonl before opening
		attempts      string // attempts.jsonl before opening
		wantDialogues string
		wantAttempts  string
		done, notDone []string
		wantErr       []string // parts of the error; nil when Open succeeds
	}{
		{name: "only ok records stay as they are", existing: okA + okB,
			wantDialogues: okA + okB, done: []string{"a", "b"}, notDone: []string{"c"}},
		{name: "failed records move to attempts", existing: okA + failedB + okC,
			wantDialogues: okA + okC, wantAttempts: failedB, done: []string{"a", "c"}, notDone: []string{"b"}},
		{name: "failed then ok for one id", existing: failedA + okA,
			wantDialogues: okA, wantAttempts: failedA, done: []string{"a"}},
		{name: "attempts are appended, not replaced", existing: failedB, attempts: failedA,
			wantDialogues: "", wantAttempts: failedA + failedB, notDone: []string{"a", "b"}},
		{name: "torn last line is dropped", existing: okA + torn,
			wantDialogues: okA, done: []string{"a"}, notDone: []string{"b"}},
		{name: "torn only line", existing: torn,
			wantDialogues: "", notDone: []string{"b"}},
		{name: "duplicate ok record is kept once", existing: okA + okA2Line + okB,
			wantDialogues: okA + okB, done: []string{"a", "b"}},
		{name: "blank lines are dropped", existing: okA + "\n  \n" + okB,
			wantDialogues: okA + okB, done: []string{"a", "b"}},
		{name: "corrupt line in the middle", existing: okA + `{"config_id": "b", "status` + "\n" + okC,
			wantDialogues: okA + `{"config_id": "b", "status` + "\n" + okC,
			wantErr:       []string{"dialogues.jsonl:2:", "not a dialogue record"}},
		{name: "record without config_id in the middle", existing: okA + okB + `{"status":"ok"}` + "\n" + okC,
			wantDialogues: okA + okB + `{"status":"ok"}` + "\n" + okC,
			wantErr:       []string{"dialogues.jsonl:3:", "config_id"}},
		{name: "corrupt last line ending in a newline", existing: okA + "garbage\n",
			wantDialogues: okA + "garbage\n",
			wantErr:       []string{"dialogues.jsonl:2:", "not a dialogue record"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path, attempts := filepath.Join(dir, "dialogues.jsonl"), filepath.Join(dir, "attempts.jsonl")
			if err := os.WriteFile(path, []byte(c.existing), 0o644); err != nil {
				t.Fatal(err)
			}
			if c.attempts != "" {
				if err := os.WriteFile(attempts, []byte(c.attempts), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			l, err := OpenRecordLog(dir)
			if c.wantErr != nil {
				if err == nil {
					l.Close()
					t.Fatal("OpenRecordLog succeeded on a corrupt log")
				}
				for _, part := range append(c.wantErr, path) {
					if !strings.Contains(err.Error(), part) {
						t.Errorf("error %q does not contain %q", err, part)
					}
				}
			} else {
				if err != nil {
					t.Fatalf("OpenRecordLog: %v", err)
				}
				defer l.Close()
				for _, id := range c.done {
					if !l.Done(id) {
						t.Errorf("Done(%s) = false", id)
					}
				}
				for _, id := range c.notDone {
					if l.Done(id) {
						t.Errorf("Done(%s) = true", id)
					}
				}
			}
			if got := readFile(t, path); got != c.wantDialogues {
				t.Errorf("dialogues.jsonl (-want +got):\n%s", cmp.Diff(c.wantDialogues, got))
			}
			if got := readFile(t, attempts); got != c.wantAttempts {
				t.Errorf("attempts.jsonl (-want +got):\n%s", cmp.Diff(c.wantAttempts, got))
			}
		})
	}
}

// Opening the same folder again must not move the same failed record to
// attempts.jsonl twice, and new records go after the kept ones.
func TestRecordLogReopenTwice(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir)
	okA, failedB, okB := record("a", dialog.StatusOK), record("b", dialog.StatusFailed), record("b", dialog.StatusOK)
	for _, d := range []dialog.Dialogue{okA, failedB} {
		if err := l.Append(d); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()

	l = openLog(t, dir)
	if err := l.Append(okB); err != nil {
		t.Fatal(err)
	}
	l.Close()
	l = openLog(t, dir)

	if got, want := readFile(t, l.Path()), jsonLine(t, okA)+jsonLine(t, okB); got != want {
		t.Errorf("dialogues.jsonl (-want +got):\n%s", cmp.Diff(want, got))
	}
	if got, want := readFile(t, filepath.Join(dir, "attempts.jsonl")), jsonLine(t, failedB); got != want {
		t.Errorf("attempts.jsonl (-want +got):\n%s", cmp.Diff(want, got))
	}
	if !l.Done("a") || !l.Done("b") {
		t.Errorf("Done(a) = %v, Done(b) = %v, want both", l.Done("a"), l.Done("b"))
	}
}

// A full record survives the write, a re-open and a read back unchanged.
func TestRecordLogRoundTrip(t *testing.T) {
	started := time.Date(2025, 3, 1, 12, 30, 5, 123456789, time.UTC)
	full := dialog.Dialogue{
		ConfigID:  "strs-reverse-1",
		Status:    dialog.StatusOK,
		Artifacts: "failures/strs-reverse-1",
		Config: dialog.ChatConfig{
			ID: "strs-reverse-1", Repo: "/repos/strs", File: "strs/strs.go", Language: "go",
			Selection: &dialog.Selection{Start: dialog.Position{Line: 4, Col: 1}, End: dialog.Position{Line: 10, Col: 2}},
			Trigger:   dialog.TriggerContextMenu, Instruction: dialog.InstructionCommand,
			Turns:    []dialog.TurnSpec{{Query: "/explain"}},
			FollowUp: &dialog.FollowUpPolicy{Kinds: []string{"ask_tests"}},
		},
		Setup: []dialog.StepTiming{{Step: "open_workspace", Seconds: 3.25}, {Step: "select", Seconds: 0.5}},
		Turns: []dialog.Turn{{
			Query: "/explain",
			Exchange: dialog.Exchange{
				Session: "s1", Seq: 1,
				Request:  json.RawMessage(`{"model":"m","messages":[{"role":"user","content":"x < y && \"é\" — 世界"}]}`),
				Answer:   "It reverses <runes> & returns \"them\".\n\n```go\nr := []rune(s)\n```",
				Received: started.Add(2 * time.Second), Seconds: 1.5,
			},
			Shown: "It reverses runes.",
			Steps: []dialog.StepTiming{{Step: "wait_answer", Seconds: 1.75, Error: ""}},
		}},
		Versions:  dialog.Versions{CodeServer: "4.99.0", Plugin: "0.1.0"},
		Session:   "s1",
		StartedAt: started,
		Seconds:   12.5,
	}
	failed := record("other", dialog.StatusFailed)
	dir := t.TempDir()
	l := openLog(t, dir)
	for _, d := range []dialog.Dialogue{failed, full} {
		if err := l.Append(d); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	l = openLog(t, dir)

	data := readFile(t, l.Path())
	if want := jsonLine(t, full); data != want {
		t.Fatalf("dialogues.jsonl after re-open (-want +got):\n%s", cmp.Diff(want, data))
	}
	var back dialog.Dialogue
	if err := json.Unmarshal([]byte(data), &back); err != nil {
		t.Fatal(err)
	}
	// json.Marshal compacts and HTML-escapes a RawMessage, so the request
	// is compared as the JSON value it encodes.
	asValue := cmp.Transformer("json", func(m json.RawMessage) any {
		var v any
		if err := json.Unmarshal(m, &v); err != nil {
			return err.Error()
		}
		return v
	})
	if diff := cmp.Diff(full, back, asValue); diff != "" {
		t.Errorf("record read back (-want +got):\n%s", diff)
	}
	if !l.Done(full.ConfigID) {
		t.Errorf("Done(%s) = false", full.ConfigID)
	}
}

// Appends from many sessions at once neither interleave nor get lost.
func TestRecordLogConcurrentAppend(t *testing.T) {
	const n = 64
	dir := t.TempDir()
	l := openLog(t, dir)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			d := record(fmt.Sprintf("c%02d", i), dialog.StatusOK)
			d.Turns = []dialog.Turn{{Query: strings.Repeat("x", 8<<10)}} // larger than one pipe buffer
			errs <- l.Append(d)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	l.Close()

	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader([]byte(readFile(t, l.Path()))))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var d dialog.Dialogue
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			t.Fatalf("line %d is not a record: %v", len(seen)+1, err)
		}
		seen[d.ConfigID] = true
	}
	if len(seen) != n {
		t.Errorf("%d distinct records, want %d", len(seen), n)
	}
	l = openLog(t, dir)
	for i := range n {
		if id := fmt.Sprintf("c%02d", i); !l.Done(id) {
			t.Errorf("Done(%s) = false after re-open", id)
		}
	}
}
