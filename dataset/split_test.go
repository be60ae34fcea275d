package dataset

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"dialogfarm/dialog"
)

// splitDialogues are n one-turn dialogues with ids first, first+1, ...;
// every third is scored 3, the rest 5, so --min-score 5 and --min-score 3
// keep different sets.
func splitDialogues(tb testing.TB, first, n int) []dialog.Dialogue {
	tb.Helper()
	var out []dialog.Dialogue
	for i := first; i < first+n; i++ {
		id := fmt.Sprintf("run-%05d", i)
		d := planted(tb, id, "explain", "go", "en", ask(fmt.Sprintf("What does step%d do with the %d-th queue?", i, i*7)),
			fmt.Sprintf("step%d pops item %d of the queue, checks its deadline (%d ms) and hands it to worker %d.", i, i*3, i*11, i%5))
		if i%3 == 0 {
			d.Turns[0].Verdicts[0].Score = 3
		}
		out = append(out, d)
	}
	return out
}

// splitsOf builds a dataset folder from ds with min score min and returns
// each record's split, read back from the sidecar metadata.
func splitsOf(tb testing.TB, ds []dialog.Dialogue, min float64) map[string]string {
	tb.Helper()
	var in bytes.Buffer
	for _, d := range ds {
		if err := json.NewEncoder(&in).Encode(d); err != nil {
			tb.Fatal(err)
		}
	}
	opt := DefaultOptions()
	opt.Export.MinScore, opt.Seed, opt.Split = min, 42, 0.8
	dir := tb.TempDir()
	if _, err := Build(context.Background(), &in, dir, opt); err != nil {
		tb.Fatal(err)
	}
	out := map[string]string{}
	for _, split := range []string{SplitTrain, SplitValidation} {
		for _, row := range readLines(tb, filepath.Join(dir, split+".meta.jsonl")) {
			out[row["id"].(string)] = row["split"].(string)
		}
	}
	return out
}

// TestSplitStable: a dialogue's split is a seeded hash of its id, so it
// does not move when a lower minimum score keeps more records, nor when
// the run adds dialogues and is exported again. (With the former
// assignment, a seeded shuffle of the kept ids with the first n·split in
// train, --min-score 3 moved 7 of the 40 dialogues and the 40 added ones
// moved 10.)
func TestSplitStable(t *testing.T) {
	base := splitDialogues(t, 0, 60)
	strict := splitsOf(t, base, 5)
	loose := splitsOf(t, base, 3)
	grown := splitsOf(t, append(splitDialogues(t, 0, 60), splitDialogues(t, 60, 40)...), 5)
	if len(strict) != 40 || len(loose) != 60 || len(grown) != 66 {
		t.Fatalf("records: %d with min score 5, %d with 3, %d with 40 more dialogues; want 40, 60, 66", len(strict), len(loose), len(grown))
	}
	for _, c := range []struct {
		name  string
		other map[string]string
	}{{"--min-score 3", loose}, {"40 dialogues added", grown}} {
		moved := 0
		for id, split := range strict {
			if c.other[id] != split {
				moved++
				t.Logf("%s: %s is in %s with --min-score 5, in %s with %s", c.name, id, split, c.other[id], c.name)
			}
		}
		if moved > 0 {
			t.Errorf("%s moved %d of %d dialogues to another split", c.name, moved, len(strict))
		}
	}
	if again := splitsOf(t, base, 5); fmt.Sprint(again) != fmt.Sprint(strict) {
		t.Error("exporting the same dialogues again gave other splits")
	}
}

// TestSplitShare: the hash puts about the share asked for in train, and
// the seed decides which dialogues.
func TestSplitShare(t *testing.T) {
	const n = 20000
	train, differ := 0, 0
	for i := range n {
		id := fmt.Sprintf("cfg-%06d", i)
		s := splitOf(id, 0.9, 1)
		if s == SplitTrain {
			train++
		}
		if s != splitOf(id, 0.9, 2) {
			differ++
		}
		if splitOf(id, 1, 1) != SplitTrain {
			t.Fatalf("%s: split 1 put it in validation", id)
		}
	}
	// Binomial(20000, 0.9): sd 42; 0.9n ± 300 is 7 sd.
	if train < 0.9*n-300 || train > 0.9*n+300 {
		t.Errorf("%d of %d in train with split 0.9", train, n)
	}
	if differ < n/10 {
		t.Errorf("seeds 1 and 2 differ on %d of %d ids; the seed must decide the split", differ, n)
	}
}
