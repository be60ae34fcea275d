package dataset

import (
	"bufio"
	"encoding/json"
	"iter"
	"maps"
	"os"
	"testing"

	"dialogfarm/dialog"
)

func sampleMsg(role, content string) dialog.Message {
	return dialog.Message{Role: role, Content: content}
}

func mapsValues[K comparable, V any](m map[K]V) iter.Seq[V] { return maps.Values(m) }

// readLines reads a JSONL file into one map per line.
func readLines(tb testing.TB, path string) []map[string]any {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<26)
	for n := 1; sc.Scan(); n++ {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			tb.Fatalf("%s line %d: %v", path, n, err)
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}
