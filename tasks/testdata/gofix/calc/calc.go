// Package calc is a fixture: a closure, a goroutine, init-time work.
package calc

import (
	"strings"
	"sync"
)

var registry = map[string]int{}

func register(name string, v int) { registry[strings.ToLower(name)] = v }

func init() { register("One", 1) }

// Lookup returns a registered value.
func Lookup(name string) (int, bool) {
	v, ok := registry[name]
	return v, ok
}

// Apply maps f over xs.
func Apply(xs []int, f func(int) int) []int {
	out := make([]int, 0, len(xs))
	for _, x := range xs {
		out = append(out, f(x))
	}
	return out
}

func double(x int) int { return 2 * x }

// DoubleAll doubles every element, through a closure.
func DoubleAll(xs []int) []int {
	return Apply(xs, func(x int) int { return double(x) })
}

func worker(x int) int { return x + 1 }

// Parallel runs worker on each element in its own goroutine and sums.
func Parallel(xs []int) int {
	var wg sync.WaitGroup
	res := make([]int, len(xs))
	for i, x := range xs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i] = worker(x)
		}()
	}
	wg.Wait()
	sum := 0
	for _, r := range res {
		sum += r
	}
	return sum
}

// Unused is covered by no test.
func Unused() int { return 42 }
