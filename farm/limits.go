package farm

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
	"golang.org/x/time/rate"
)

// LimitsBucket holds the farm's shared rate limits: for each limit, when
// its bucket is full again.
const LimitsBucket = "dfarm_limits"

// limitsTTL is how long the bucket keeps a limit nobody called under.
const limitsTTL = time.Hour

// maxBooked bounds how far ahead a call may be booked: an entry further
// out than that was not written by a clock that agrees with this one (or
// by a worker that means harm) and is taken as free now.
const maxBooked = limitsTTL

// Limits keeps the rate limits (calls or tokens a minute) of every process
// of a farm that calls one model with one key as one: a provider counts
// the calls and tokens of a key from any machine, so fifty workers with a
// limit of their own each would take fifty times as many. Each limit is
// a token bucket in the farm's LimitsBucket, kept as the time it is full
// again: a call takes its units with a compare-and-set on that one key
// (every process books after the last booking, whoever made it) and
// waits until the bucket holds them.
//
// Until Bind, and when the farm has no such bucket, each limiter is a
// token bucket of this process's own (what a process alone does). While
// the farm does not answer (disconnected, or a booking failed in the
// last minute) too, so that a call waits no longer than a booking's
// timeout for it; the first fall back is logged.
type Limits struct {
	log  *zap.Logger
	proc string // this process, in the entries of shared slots (Slots)

	mu     sync.Mutex
	kv     jetstream.KeyValue
	conn   *nats.Conn
	down   time.Time // of the last failed booking
	warned bool
	slots  map[string]*Slots // by key: one count per process (Slots)
}

// Timeouts of the shared limits: a booking's round trips, and how long
// after a failed one the limits stay local.
const (
	bookTimeout = 2 * time.Second
	downFor     = time.Minute
)

// NewLimits returns limits local to this process until Bind.
func NewLimits(log *zap.Logger) *Limits {
	return &Limits{log: log, proc: rand.Text()[:16]}
}

// Bind shares the limits through the farm q is on from now on. A farm
// whose server set up no limits bucket (an older dialogfarm) leaves them
// local, with a warning.
func (l *Limits) Bind(ctx context.Context, q *Queue) {
	kv, err := q.js.KeyValue(ctx, LimitsBucket)
	if err != nil {
		l.log.Warn("the farm keeps no shared rate limits (its streams were set up by an older dialogfarm): each process keeps its models' rpm, tpm and farm_max_concurrency on its own",
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
		l.log.Warn("could not book a model call under the farm's shared limits: this process keeps its models' rpm, tpm and farm_max_concurrency on its own, for a minute at a time, until the farm answers",
			zap.String("limit", key), zap.Error(err))
	}
}

// LimitSpec is one shared limit: perMinute units (calls, or tokens) a
// minute, burst of them at once, counted under key (a hash that names the
// base URL, model and key variable: pool.MemberConfig's LimitKey).
type LimitSpec struct {
	Key, Model, Unit string
	PerMinute, Burst int
}

// Limiter is the limiter of spec, across the farm.
func (l *Limits) Limiter(spec LimitSpec) *Limiter {
	spec.PerMinute, spec.Burst = max(spec.PerMinute, 1), max(spec.Burst, 1)
	every := time.Minute / time.Duration(spec.PerMinute)
	return &Limiter{limits: l, spec: spec, every: every,
		local: rate.NewLimiter(rate.Limit(float64(spec.PerMinute)/time.Minute.Seconds()), spec.Burst)}
}

// Limiter is one shared limit (see Limits): a token bucket of Burst
// units that fills at PerMinute a minute, which every process of the farm
// takes from.
type Limiter struct {
	limits *Limits
	spec   LimitSpec
	every  time.Duration // a unit's time
	local  *rate.Limiter
}

// booking is a limit's entry in the bucket: when the bucket is full again
// (every unit booked paid off; a bucket emptier than full holds back a
// call only once it lacks the call's units), and what the status shows.
type booking struct {
	Full      int64  `json:"full_ns"`
	PerMinute int    `json:"per_minute"`
	Burst     int    `json:"burst"`
	Unit      string `json:"unit"`
	Model     string `json:"model"`
}

// units clamps n to what one booking may take: at least 1, at most a
// bucket (a call larger than the bucket waits for a full one).
func (s *Limiter) units(n int) int { return min(max(n, 1), s.spec.Burst) }

// WaitN books n units and returns when they may go, or with ctx's error;
// a booking whose wait ctx cut short is not given back.
func (s *Limiter) WaitN(ctx context.Context, n int) error {
	n = s.units(n)
	at, ok := s.shared(ctx, n)
	if !ok {
		return s.local.WaitN(ctx, n)
	}
	if !sleepCtx(ctx, time.Until(at)) {
		return ctx.Err()
	}
	return nil
}

// Book books n units that went already, without waiting.
func (s *Limiter) Book(n int) {
	n = s.units(n)
	if _, ok := s.shared(context.Background(), n); !ok {
		s.local.ReserveN(time.Now(), n)
	}
}

// shared books n units through the farm and says when they may go; ok is
// false when the limits are local now, or the booking failed (logged the
// first time; the limits are then local for a while).
func (s *Limiter) shared(ctx context.Context, n int) (at time.Time, ok bool) {
	kv := s.limits.bucket()
	if kv == nil {
		return time.Time{}, false
	}
	bctx, cancel := context.WithTimeout(ctx, bookTimeout)
	defer cancel()
	at, err := s.book(bctx, kv, n)
	if err != nil {
		if ctx.Err() == nil {
			s.limits.fellBack(s.spec.Key, err)
		}
		return time.Time{}, false
	}
	return at, true
}

// book takes n units from the limit's bucket, if no other process booked
// in between (else it reads the limit again), and returns when they may
// go: once the bucket holds them.
func (s *Limiter) book(ctx context.Context, kv jetstream.KeyValue, n int) (time.Time, error) {
	key := s.spec.Key
	for range 100 {
		var rev uint64
		now := time.Now()
		full := now
		e, err := kv.Get(ctx, key)
		switch {
		case err == nil:
			rev = e.Revision()
			var b booking
			if json.Unmarshal(e.Value(), &b) == nil {
				if t := time.Unix(0, b.Full); t.After(now) && t.Sub(now) <= maxBooked {
					full = t
				}
			}
		case errors.Is(err, jetstream.ErrKeyNotFound):
		default:
			return time.Time{}, fmt.Errorf("read the shared rate limit %s: %w", key, err)
		}
		// The bucket lacks (full-now)/every units; n go once it lacks
		// no more than burst-n.
		at := full.Add(-time.Duration(s.spec.Burst-n) * s.every)
		if at.Before(now) {
			at = now
		}
		next := full.Add(time.Duration(n) * s.every)
		val, _ := json.Marshal(booking{Full: next.UnixNano(), PerMinute: s.spec.PerMinute, Burst: s.spec.Burst, Unit: s.spec.Unit, Model: s.spec.Model})
		switch err := putAt(ctx, kv, key, val, rev); {
		case err == nil:
			return at, nil
		case lostRace(err):
			continue // another process booked first
		default:
			return time.Time{}, fmt.Errorf("book under the shared rate limit %s: %w", key, err)
		}
	}
	return time.Time{}, fmt.Errorf("book under the shared rate limit %s: 100 other bookings came first", key)
}

// putAt writes val under key if the key is still at revision rev (0: it
// does not exist): a compare-and-set.
func putAt(ctx context.Context, kv jetstream.KeyValue, key string, val []byte, rev uint64) error {
	var err error
	if rev == 0 {
		_, err = kv.Create(ctx, key, val)
	} else {
		_, err = kv.Update(ctx, key, val, rev)
	}
	return err
}

// lostRace says putAt failed because another process wrote the key first.
func lostRace(err error) bool {
	return errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch)
}

// LimitStatus is one shared rate limit as the farm holds it.
type LimitStatus struct {
	// Limit is its key in the bucket: a hash of the base URL, model and
	// key variable it counts the calls to.
	Limit     string `json:"limit"`
	Model     string `json:"model"`
	Unit      string `json:"unit"`
	PerMinute int    `json:"per_minute"`
	Burst     int    `json:"burst"`
	// Taken is how many units are booked and not yet refilled: beyond
	// Burst, calls wait for the limit; Wait is how long one unit booked
	// now would wait.
	Taken int           `json:"taken"`
	Wait  time.Duration `json:"wait"`
}

// SlotStatus is one shared bound on calls in flight as the farm holds it.
type SlotStatus struct {
	// Limit is its key in the bucket (see LimitStatus).
	Limit string `json:"limit"`
	Model string `json:"model"`
	Max   int    `json:"max"`
	// InFlight is how many calls the processes have in flight now, and
	// Processes how many processes they are.
	InFlight  int `json:"in_flight"`
	Processes int `json:"processes"`
}

// readLimits reads the shared rate limits and bounds on calls in flight
// in use (none on a farm whose streams have no limits bucket), by model.
func readLimits(ctx context.Context, js jetstream.JetStream, now time.Time) ([]LimitStatus, []SlotStatus, error) {
	kv, err := js.KeyValue(ctx, LimitsBucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("bucket %s: %w", LimitsBucket, err)
	}
	keys, err := kv.ListKeys(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("list the shared rate limits: %w", err)
	}
	var (
		limits []LimitStatus
		slots  []SlotStatus
	)
	for k := range keys.Keys() {
		e, err := kv.Get(ctx, k)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("shared rate limit %s: %w", k, err)
		}
		if f := (inFlight{}); strings.HasPrefix(k, "conc-") {
			if json.Unmarshal(e.Value(), &f) != nil || f.Max <= 0 {
				continue
			}
			f.live(now, "")
			ss := SlotStatus{Limit: k, Model: f.Model, Max: f.Max, Processes: len(f.Procs)}
			for _, p := range f.Procs {
				ss.InFlight += p.N
			}
			slots = append(slots, ss)
			continue
		}
		var b booking
		if json.Unmarshal(e.Value(), &b) != nil || b.PerMinute <= 0 || b.Burst <= 0 {
			continue
		}
		ls := LimitStatus{Limit: k, Model: b.Model, Unit: b.Unit, PerMinute: b.PerMinute, Burst: b.Burst}
		if booked := time.Unix(0, b.Full).Sub(now); booked > 0 && booked <= maxBooked {
			every := time.Minute / time.Duration(b.PerMinute)
			ls.Taken = int((booked + every - 1) / every)
			ls.Wait = max(0, booked-time.Duration(b.Burst-1)*every)
		}
		limits = append(limits, ls)
	}
	slices.SortFunc(limits, func(a, b LimitStatus) int {
		return cmp.Or(cmp.Compare(a.Model, b.Model), cmp.Compare(a.Unit, b.Unit), cmp.Compare(a.Limit, b.Limit))
	})
	slices.SortFunc(slots, func(a, b SlotStatus) int {
		return cmp.Or(cmp.Compare(a.Model, b.Model), cmp.Compare(a.Limit, b.Limit))
	})
	return limits, slots, nil
}
