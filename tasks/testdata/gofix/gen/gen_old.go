//go:build !go1.18

package gen

// Sum adds xs.
func Sum(xs []float64) float64 {
	var total float64
	for _, x := range xs {
		total = add(total, x)
	}
	return total
}

func add(a, b float64) float64 { return a + b }

// SumInts sums ints.
func SumInts(xs []int) int {
	total := 0
	for _, x := range xs {
		total += x
	}
	return total
}

// Stack is a LIFO.
type Stack struct{ items []interface{} }

// Push puts x on top.
func (s *Stack) Push(x interface{}) { s.items = append(s.items, x) }

// Pop removes the top item; false when the stack is empty.
func (s *Stack) Pop() (interface{}, bool) {
	if len(s.items) == 0 {
		return nil, false
	}
	top := s.items[len(s.items)-1]
	s.items = s.items[:len(s.items)-1]
	return top, true
}

// Drain pops every item, top first.
func Drain(s *Stack) []interface{} {
	var out []interface{}
	for {
		x, ok := s.Pop()
		if !ok {
			return out
		}
		out = append(out, x)
	}
}
