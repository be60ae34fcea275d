package analyst

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"dialogfarm/profiles"
)

// tinyProfile has 16 combinations, two of them ruled out, so the plan's
// cells stay few whatever N is.
const tinyProfile = `name: tiny
seed: 1
dimensions:
  intent: {explain: 1, fix: 1}
  instruction: {free_text: 1}
  trigger: {panel: 1}
  cursor: {inside_function: 3, idle: 1}
  reference: {none: 1}
  language: {go: 1, python: 2}
  locale: {en: 1}
  turns: {1: 1}
  difficulty: {easy: 1, hard: 1}
  query_style: {terse: 1}
constraints:
  - when: {cursor: idle}
    require: {intent: [explain]}
`

// TestPlanMemoryDoesNotGrowWithN plans 10,000 and 10,000,000 dialogues
// (1,000,000 under the race detector) over a profile with few cells: the
// bytes allocated must not grow with N (one row per dialogue would take
// about a gigabyte at ten million).
func TestPlanMemoryDoesNotGrowWithN(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tiny.yaml")
	writeFile(t, path, tinyProfile)
	p, err := profiles.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	alloc := func(n int) (uint64, *profiles.Plan) {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		pl, err := MakePlan(p, PlanConfig{N: n, Seed: 7})
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		if err := pl.Check(p); err != nil {
			t.Fatal(err)
		}
		return after.TotalAlloc - before.TotalAlloc, pl
	}
	n := 10_000_000
	if raceEnabled {
		n = 1_000_000 // the race detector makes ten million take a minute
	}
	small, _ := alloc(10_000)
	big, pl := alloc(n)
	t.Logf("allocated %d bytes for N=10,000 and %d bytes for N=%d (%d cells)", small, big, n, len(pl.Cells))
	if big > 2*small+1<<20 {
		t.Errorf("N=%d allocated %d bytes, N=10,000 %d: memory grows with N", n, big, small)
	}
}

func writeFile(tb testing.TB, path, text string) {
	tb.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		tb.Fatal(err)
	}
}
