package calc

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

func TestApply(t *testing.T) {
	if got := Apply([]int{1, 2}, func(x int) int { return -x }); !slices.Equal(got, []int{-1, -2}) {
		t.Fatalf("Apply = %v", got)
	}
}

func TestDoubleAll(t *testing.T) {
	if got := DoubleAll([]int{1, 2}); !slices.Equal(got, []int{2, 4}) {
		t.Fatalf("DoubleAll = %v", got)
	}
}

func TestParallel(t *testing.T) {
	if got := Parallel([]int{1, 2, 3}); got != 9 {
		t.Fatalf("Parallel = %d", got)
	}
}

// TestMixed covers nothing the tests above do not: its step is merged.
func TestMixed(t *testing.T) {
	if Parallel(DoubleAll([]int{1})) != 3 {
		t.Fatal("mixed")
	}
}

func TestLookup(t *testing.T) {
	if v, ok := Lookup("one"); !ok || v != 1 {
		t.Fatalf("Lookup = %d, %v", v, ok)
	}
}

// TestFlaky fails on every other run (a counter in TMPDIR).
func TestFlaky(t *testing.T) {
	f := filepath.Join(os.TempDir(), "gofix-flaky-counter")
	b, _ := os.ReadFile(f)
	n, _ := strconv.Atoi(string(b))
	if err := os.WriteFile(f, []byte(strconv.Itoa(n+1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if n%2 == 1 {
		t.Fatal("flaky: odd run")
	}
	_ = double(n)
}
