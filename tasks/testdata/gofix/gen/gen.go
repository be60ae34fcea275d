//go:build go1.18

// Package gen is a fixture: generic functions and a generic type, called
// through their instances, with a non-generic twin for old toolchains
// (gen_old.go) that holds the same algorithms.
package gen

// Number is what Sum adds.
type Number interface{ ~int | ~float64 }

// Sum adds xs.
func Sum[T Number](xs []T) T {
	var total T
	for _, x := range xs {
		total = add(total, x)
	}
	return total
}

func add[T Number](a, b T) T { return a + b }

// SumInts sums ints through the generic Sum.
func SumInts(xs []int) int { return Sum(xs) }

// Stack is a generic LIFO.
type Stack[T any] struct{ items []T }

// Push puts x on top.
func (s *Stack[T]) Push(x T) { s.items = append(s.items, x) }

// Pop removes the top item; false when the stack is empty.
func (s *Stack[T]) Pop() (T, bool) {
	var zero T
	if len(s.items) == 0 {
		return zero, false
	}
	top := s.items[len(s.items)-1]
	s.items = s.items[:len(s.items)-1]
	return top, true
}

// Drain pops every item, top first.
func Drain[T any](s *Stack[T]) []T {
	var out []T
	for {
		x, ok := s.Pop()
		if !ok {
			return out
		}
		out = append(out, x)
	}
}
