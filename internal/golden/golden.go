// Package golden compares what a test produced with a file checked in
// under testdata (a generated config, a judge prompt, JSONL records, an
// error listing), and rewrites the file instead when the tests run with
// -update:
//
//	go test ./sft -update   # then review the diff of testdata/
//
// Only tests import it; the -update flag it defines is registered in every
// test binary that does.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files with what the tests produce")

// Updating reports whether the tests run with -update.
func Updating() bool { return *update }

// Check compares got with the file at path, or writes got to path with
// -update. A difference is reported as a diff of the two texts.
func Check(tb testing.TB, path string, got []byte) {
	tb.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		tb.Errorf("%s differs from the output (run go test -update and review the diff) (-want +got):\n%s", path, diff)
	}
}
