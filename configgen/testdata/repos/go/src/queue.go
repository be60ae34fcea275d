// Package queue is a fixture for configgen tests.
package queue

import (
	"errors"
	"sync"
)

// ErrEmpty is returned by Pop on an empty queue.
var ErrEmpty = errors.New("queue: empty")

// Queue is a FIFO queue safe for concurrent use.
type Queue struct {
	mu    sync.Mutex
	items []int
}

// Push appends v.
func (q *Queue) Push(v int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.items = append(q.items, v)
}

// Pop removes the first item.
func (q *Queue) Pop() (int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.items) == 0 {
		return 0, ErrEmpty
	}
	v := q.items[0]
	q.items = q.items[1:]
	return v, nil
}

// Drain pops everything, calling fn for each item in order.
func Drain(q *Queue, fn func(int)) int {
	n := 0
	for {
		v, err := q.Pop()
		if err != nil {
			break
		}
		fn(v)
		n++
	}
	return n
}
