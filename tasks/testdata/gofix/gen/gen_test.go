package gen

import (
	"slices"
	"testing"
)

func TestSum(t *testing.T) {
	if got := Sum([]float64{0.5, 0.25}); got != 0.75 {
		t.Fatalf("Sum = %v", got)
	}
}

func TestSumInts(t *testing.T) {
	if got := SumInts([]int{1, 2, 3}); got != 6 {
		t.Fatalf("SumInts = %d", got)
	}
}

func TestStack(t *testing.T) {
	s := &Stack[string]{}
	s.Push("a")
	s.Push("b")
	if got := Drain(s); !slices.Equal(got, []string{"b", "a"}) {
		t.Fatalf("Drain = %v", got)
	}
}
