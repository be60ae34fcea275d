package pipeline

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"dialogfarm/dialog"
)

// A bounded exchange log (a standing worker's) moves a full file aside,
// keeps one older file, and never splits a line; an unbounded one (a
// run's) keeps every exchange in one file.
func TestExchangeLogRotates(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "exchanges.jsonl")
	l, err := openExchangeLog(path, 1)
	if err != nil {
		t.Fatal(err)
	}
	body := strings.Repeat("x", 100<<10)
	const n = 35 // 3.5 MiB: two rotations
	for i := range n {
		if err := l.Record(dialog.Exchange{Session: "s1", Seq: i + 1, Answer: body}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	var files []string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		files, _ = filepath.Glob(filepath.Join(dir, "exchanges*.jsonl"))
		if len(files) <= 2 || time.Now().After(deadline) {
			break
		}
	}
	if len(files) != 2 {
		t.Fatalf("files %v: want the log and one older file", files)
	}
	seqs := map[int]bool{}
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > 1<<20 {
			t.Errorf("%s holds %d bytes, over 1 MiB", f, fi.Size())
		}
		for _, ex := range readExchanges(t, f) {
			seqs[ex.Seq] = true
		}
	}
	if !seqs[n] || len(seqs) < 10 || len(seqs) > 20 {
		t.Errorf("the two files hold exchanges %v: want the last ones, 10 to 20 of them", seqs)
	}
	last := readExchanges(t, path)
	if len(last) == 0 || last[len(last)-1].Seq != n {
		t.Errorf("the log does not end with the last exchange")
	}

	all := filepath.Join(dir, "run", "exchanges.jsonl")
	if err := os.MkdirAll(filepath.Dir(all), 0o700); err != nil {
		t.Fatal(err)
	}
	u, err := openExchangeLog(all, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := u.Record(dialog.Exchange{Session: "s1", Seq: i + 1, Answer: body}); err != nil {
			t.Fatal(err)
		}
	}
	if err := u.Close(); err != nil {
		t.Fatal(err)
	}
	if got := len(readExchanges(t, all)); got != n {
		t.Errorf("the unbounded log holds %d exchanges, want %d", got, n)
	}
}

func readExchanges(t *testing.T, path string) []dialog.Exchange {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []dialog.Exchange
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		var ex dialog.Exchange
		if err := json.Unmarshal(sc.Bytes(), &ex); err != nil {
			t.Fatalf("%s: a line that is not an exchange: %v", path, err)
		}
		out = append(out, ex)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
