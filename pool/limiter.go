package pool

import (
	"context"
	"sync"
	"time"
)

// limiter spaces calls at least interval apart: each call reserves the
// next free slot and waits for it. The first call goes at once.
type limiter struct {
	interval time.Duration

	mu   sync.Mutex
	next time.Time
}

// newLimiter allows rpm calls a minute; nil (no limit) when rpm <= 0.
func newLimiter(rpm int) *limiter {
	if rpm <= 0 {
		return nil
	}
	return &limiter{interval: time.Minute / time.Duration(rpm)}
}

// wait blocks until the caller's slot comes or ctx ends.
func (l *limiter) wait(ctx context.Context) error {
	if l == nil {
		return ctx.Err()
	}
	l.mu.Lock()
	now := time.Now()
	slot := now
	if l.next.After(now) {
		slot = l.next
	}
	l.next = slot.Add(l.interval)
	l.mu.Unlock()
	return sleep(ctx, slot.Sub(now))
}
