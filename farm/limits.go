package farm

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
	"golang.org/x/time/rate"
)

// LimitsBucket holds the farm's shared rate limits: for each limit, the
// time its next call may go.
const LimitsBucket = "dfarm_limits"

// limitsTTL is how long the bucket keeps a limit nobody called under.
const limitsTTL = time.Hour

// maxBooked bounds how far ahead a call may be booked: an entry further
// out than that was not written by a clock that agrees with this one (or
// by a worker that means harm) and is taken as free now.
const maxBooked = limitsTTL

// Limits spaces the model calls of every process of a farm that share a
// limit: a provider's rpm counts the calls made with one key, from any
// machine, so fifty workers with a limit of their own each would make
// fifty times as many. Each call books the next free time of its limit
// in the farm's LimitsBucket (a compare-and-set on one key: every process
// books after the last booking, whoever made it) and waits until then.
//
// Until Bind, and when the farm has no such bucket or cannot be reached,
// each limiter is a token bucket of this process's own (what a process
// alone does), and the first fall back is logged.
type Limits struct {
	log *zap.Logger

	mu     sync.Mutex
	kv     jetstream.KeyValue
	warned bool
}

// NewLimits returns limits local to this process until Bind.
func NewLimits(log *zap.Logger) *Limits { return &Limits{log: log} }

// Bind shares the limits through the farm q is on from now on. A farm
// whose server set up no limits bucket (an older dialogfarm) leaves them
// local, with a warning.
func (l *Limits) Bind(ctx context.Context, q *Queue) {
	kv, err := q.js.KeyValue(ctx, LimitsBucket)
	if err != nil {
		l.log.Warn("the farm keeps no shared rate limits (its streams were set up by an older dialogfarm): each process spaces its models' calls by their rpm on its own",
			zap.String("bucket", LimitsBucket), zap.Error(err))
		return
	}
	l.mu.Lock()
	l.kv = kv
	l.mu.Unlock()
}

func (l *Limits) bucket() jetstream.KeyValue {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.kv
}

// fellBack logs the first time a limiter could not book through the farm.
func (l *Limits) fellBack(key string, err error) {
	l.mu.Lock()
	first := !l.warned
	l.warned = true
	l.mu.Unlock()
	if first {
		l.log.Warn("could not book a model call under the farm's shared rate limit: this process spaces its calls on its own until the farm answers",
			zap.String("limit", key), zap.Error(err))
	}
}

// Limiter is the limiter of the calls under key (pool.MemberConfig's
// LimitKey), at most rpm a minute across the farm.
func (l *Limits) Limiter(key string, rpm int) *Limiter {
	every := time.Minute / time.Duration(max(rpm, 1))
	return &Limiter{limits: l, key: key, every: every, local: rate.NewLimiter(rate.Every(every), 1)}
}

// Limiter is one shared limit (see Limits).
type Limiter struct {
	limits *Limits
	key    string
	every  time.Duration
	local  *rate.Limiter
}

// Wait returns when the next call under the limit may go, or with ctx's
// error; a booking whose wait ctx cut short is not given back.
func (s *Limiter) Wait(ctx context.Context) error {
	kv := s.limits.bucket()
	if kv == nil {
		return s.local.Wait(ctx)
	}
	at, err := s.book(ctx, kv)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		s.limits.fellBack(s.key, err)
		return s.local.Wait(ctx)
	}
	d := time.Until(at)
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// book takes the limit's next free time (now, or the last booking's time
// plus the interval) and moves it on by one interval, if no other process
// booked in between; else it reads the limit again.
func (s *Limiter) book(ctx context.Context, kv jetstream.KeyValue) (time.Time, error) {
	for range 100 {
		var next time.Time
		var rev uint64
		e, err := kv.Get(ctx, s.key)
		switch {
		case err == nil:
			rev = e.Revision()
			if ns, perr := strconv.ParseInt(string(e.Value()), 10, 64); perr == nil {
				next = time.Unix(0, ns)
			}
		case errors.Is(err, jetstream.ErrKeyNotFound):
		default:
			return time.Time{}, fmt.Errorf("read the shared rate limit %s: %w", s.key, err)
		}
		now := time.Now()
		at := now
		if next.After(now) && next.Sub(now) <= maxBooked {
			at = next
		}
		val := []byte(strconv.FormatInt(at.Add(s.every).UnixNano(), 10))
		if rev == 0 {
			_, err = kv.Create(ctx, s.key, val)
		} else {
			_, err = kv.Update(ctx, s.key, val, rev)
		}
		switch {
		case err == nil:
			return at, nil
		case errors.Is(err, jetstream.ErrKeyExists), errors.Is(err, jetstream.ErrKeyRevisionMismatch):
			continue // another process booked first
		default:
			return time.Time{}, fmt.Errorf("book a call under the shared rate limit %s: %w", s.key, err)
		}
	}
	return time.Time{}, fmt.Errorf("book a call under the shared rate limit %s: 100 other bookings came first", s.key)
}
