package farm

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
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
// Until Bind, and when the farm has no such bucket, each limiter is a
// token bucket of this process's own (what a process alone does). While
// the farm does not answer (disconnected, or a booking failed in the
// last minute) too, so that a call waits no longer than a booking's
// timeout for it; the first fall back is logged.
type Limits struct {
	log *zap.Logger

	mu     sync.Mutex
	kv     jetstream.KeyValue
	conn   *nats.Conn
	down   time.Time // of the last failed booking
	warned bool
}

// Timeouts of the shared limits: a booking's round trips, and how long
// after a failed one the limits stay local.
const (
	bookTimeout = 2 * time.Second
	downFor     = time.Minute
)

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
	l.kv, l.conn = kv, q.js.Conn()
	l.mu.Unlock()
}

// bucket is the farm's bucket to book in, nil when the limits are local
// now.
func (l *Limits) bucket() jetstream.KeyValue {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.kv == nil || !l.conn.IsConnected() || time.Since(l.down) < downFor {
		return nil
	}
	return l.kv
}

// fellBack keeps the limits local for a while after a booking failed, and
// logs the first time.
func (l *Limits) fellBack(key string, err error) {
	l.mu.Lock()
	first := !l.warned
	l.warned, l.down = true, time.Now()
	l.mu.Unlock()
	if first {
		l.log.Warn("could not book a model call under the farm's shared rate limit: this process spaces its models' calls on its own, for a minute at a time, until the farm answers",
			zap.String("limit", key), zap.Error(err))
	}
}

// Limiter is the limiter of the calls to model under key
// (pool.MemberConfig's LimitKey), at most rpm a minute across the farm.
func (l *Limits) Limiter(key string, rpm int, model string) *Limiter {
	rpm = max(rpm, 1)
	every := time.Minute / time.Duration(rpm)
	return &Limiter{limits: l, key: key, rpm: rpm, model: model, every: every, local: rate.NewLimiter(rate.Every(every), 1)}
}

// Limiter is one shared limit (see Limits).
type Limiter struct {
	limits *Limits
	key    string
	rpm    int
	model  string
	every  time.Duration
	local  *rate.Limiter
}

// booking is a limit's entry in the bucket: the next free time, and what
// the status shows of the limit.
type booking struct {
	Next  int64  `json:"next_ns"`
	RPM   int    `json:"rpm"`
	Model string `json:"model"`
}

// Wait returns when the next call under the limit may go, or with ctx's
// error; a booking whose wait ctx cut short is not given back.
func (s *Limiter) Wait(ctx context.Context) error {
	kv := s.limits.bucket()
	if kv == nil {
		return s.local.Wait(ctx)
	}
	bctx, cancel := context.WithTimeout(ctx, bookTimeout)
	at, err := s.book(bctx, kv)
	cancel()
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
			var b booking
			if json.Unmarshal(e.Value(), &b) == nil {
				next = time.Unix(0, b.Next)
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
		val, _ := json.Marshal(booking{Next: at.Add(s.every).UnixNano(), RPM: s.rpm, Model: s.model})
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

// LimitStatus is one shared rate limit as the farm holds it.
type LimitStatus struct {
	// Limit is its key in the bucket: a hash of the base URL, model and
	// key variable it counts the calls to.
	Limit string `json:"limit"`
	Model string `json:"model"`
	RPM   int    `json:"rpm"`
	// Ahead is how far ahead of now its calls are booked: above 0, calls
	// wait for the limit.
	Ahead time.Duration `json:"ahead"`
}

// readLimits reads the shared rate limits in use (none on a farm whose
// streams have no limits bucket), by model.
func readLimits(ctx context.Context, js jetstream.JetStream, now time.Time) ([]LimitStatus, error) {
	kv, err := js.KeyValue(ctx, LimitsBucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("bucket %s: %w", LimitsBucket, err)
	}
	keys, err := kv.ListKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("list the shared rate limits: %w", err)
	}
	var out []LimitStatus
	for k := range keys.Keys() {
		e, err := kv.Get(ctx, k)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("shared rate limit %s: %w", k, err)
		}
		var b booking
		if json.Unmarshal(e.Value(), &b) != nil {
			continue
		}
		ahead := time.Unix(0, b.Next).Sub(now)
		if ahead < 0 || ahead > maxBooked {
			ahead = 0
		}
		out = append(out, LimitStatus{Limit: k, Model: b.Model, RPM: b.RPM, Ahead: ahead})
	}
	slices.SortFunc(out, func(a, b LimitStatus) int {
		return cmp.Or(cmp.Compare(a.Model, b.Model), cmp.Compare(a.Limit, b.Limit))
	})
	return out, nil
}
