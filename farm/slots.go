package farm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Times of the shared slots: how long a process's calls in flight count
// without it renewing them (a process killed mid-call holds its slots no
// longer), how often it renews them, and the longest a waiting call goes
// between two looks for a free slot.
const (
	slotLease   = 30 * time.Second
	slotRenew   = 10 * time.Second
	slotPollMax = time.Second
)

// SlotSpec is one shared bound on calls in flight: at most Max to one
// model with one key, counted under Key (pool.MemberConfig's LimitKey).
type SlotSpec struct {
	Key, Model string
	Max        int
}

// Slots bounds the calls in flight to one model across the farm's
// processes: a provider or a self-hosted server that takes so many
// requests at once takes them from every worker. The limit's entry in
// LimitsBucket holds, for each process with calls in flight, how many and
// until when they count; a call takes a slot with a compare-and-set that
// adds one to its process's count while all of them sum to less than Max,
// and a process renews its count while it is above zero.
//
// Until Bind, on a farm with no limits bucket and while the farm does not
// answer (as for the rate limits), the process bounds its own calls to
// Max.
type Slots struct {
	limits *Limits
	spec   SlotSpec
	local  chan struct{}

	mu       sync.Mutex
	held     int // this process's calls counted in the farm
	renewing bool
}

// inFlight is a concurrency limit's entry in the bucket.
type inFlight struct {
	Max   int                  `json:"max"`
	Model string               `json:"model"`
	Procs map[string]procCalls `json:"procs"`
}

// procCalls is one process's calls in flight, which count until U (Unix
// nanoseconds).
type procCalls struct {
	N int   `json:"n"`
	U int64 `json:"u"`
}

// live drops the processes whose calls no longer count at now (not
// renewed, or said to count further ahead than a lease: a clock that
// disagrees, or a worker that means harm) and returns how many calls the
// others have in flight.
func (f *inFlight) live(now time.Time, self string) int {
	n := 0
	for p, c := range f.Procs {
		until := time.Unix(0, c.U)
		if c.N <= 0 || until.Before(now) || until.Sub(now) > 2*slotLease {
			delete(f.Procs, p)
			continue
		}
		if p != self {
			n += c.N
		}
	}
	return n
}

// Slots is the bound spec across the farm. Every member of the process
// that calls under spec's key (a pool member and the judge on the same
// model and key, the pools of two stages) gets the same Slots, as the
// farm keeps one count per process and key; the first spec's Max holds.
func (l *Limits) Slots(spec SlotSpec) *Slots {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s, ok := l.slots[spec.Key]; ok {
		return s
	}
	spec.Max = max(spec.Max, 1)
	s := &Slots{limits: l, spec: spec, local: make(chan struct{}, spec.Max)}
	if l.slots == nil {
		l.slots = map[string]*Slots{}
	}
	l.slots[spec.Key] = s
	return s
}

// Acquire returns when one more call may go, with the function that ends
// it, or with ctx's error.
func (s *Slots) Acquire(ctx context.Context) (func(), error) {
	wait := 20 * time.Millisecond
	for {
		kv := s.limits.bucket()
		if kv == nil {
			return s.acquireLocal(ctx)
		}
		ok, err := s.count(ctx, kv, +1)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			s.limits.fellBack(s.spec.Key, err)
			return s.acquireLocal(ctx)
		}
		if ok {
			return sync.OnceFunc(s.release), nil
		}
		// Every slot is taken: look again, a little later each time,
		// with jitter so that the waiting processes do not all look at
		// once.
		if !sleepCtx(ctx, wait/2+rand.N(wait)) {
			return nil, ctx.Err()
		}
		wait = min(2*wait, slotPollMax)
	}
}

// acquireLocal takes one of this process's own slots.
func (s *Slots) acquireLocal(ctx context.Context) (func(), error) {
	select {
	case s.local <- struct{}{}:
		return sync.OnceFunc(func() { <-s.local }), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// release frees a slot taken in the farm. If the farm does not answer,
// the process's count there stays until its next renewal or its lease's
// end.
func (s *Slots) release() {
	ctx, cancel := context.WithTimeout(context.Background(), bookTimeout)
	defer cancel()
	if kv := s.limits.bucket(); kv != nil {
		if _, err := s.count(ctx, kv, -1); err == nil {
			return
		}
	}
	s.mu.Lock()
	s.held--
	s.mu.Unlock()
}

// renew keeps this process's calls in flight counted while it has any.
func (s *Slots) renew() {
	t := time.NewTicker(slotRenew)
	defer t.Stop()
	for range t.C {
		s.mu.Lock()
		done := s.held <= 0
		if done {
			s.renewing = false
		}
		s.mu.Unlock()
		if done {
			return
		}
		if kv := s.limits.bucket(); kv != nil {
			ctx, cancel := context.WithTimeout(context.Background(), bookTimeout)
			s.count(ctx, kv, 0) //nolint:errcheck // the next renewal tries again
			cancel()
		}
	}
}

// count moves this process's calls in flight in the limit's entry by
// delta and renews them; a call (delta +1) is counted only while the
// processes have fewer than Max in flight (ok false: none free).
func (s *Slots) count(ctx context.Context, kv jetstream.KeyValue, delta int) (ok bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	self, key := s.limits.proc, s.spec.Key
	for try := range 100 {
		now := time.Now()
		f := inFlight{Procs: map[string]procCalls{}}
		var rev uint64
		e, err := kv.Get(ctx, key)
		switch {
		case err == nil:
			rev = e.Revision()
			if json.Unmarshal(e.Value(), &f) != nil || f.Procs == nil {
				f = inFlight{Procs: map[string]procCalls{}}
			}
		case errors.Is(err, jetstream.ErrKeyNotFound):
		default:
			return false, fmt.Errorf("read the calls in flight under %s: %w", key, err)
		}
		others := f.live(now, self)
		held := max(s.held+delta, 0)
		if delta > 0 && others+held > s.spec.Max {
			return false, nil
		}
		f.Max, f.Model = s.spec.Max, s.spec.Model
		delete(f.Procs, self)
		if held > 0 {
			f.Procs[self] = procCalls{N: held, U: now.Add(slotLease).UnixNano()}
		}
		val, err := json.Marshal(f)
		if err != nil {
			return false, fmt.Errorf("calls in flight under %s: %w", key, err)
		}
		switch err := putAt(ctx, kv, key, val, rev); {
		case err == nil:
			s.held = held
			if held > 0 && !s.renewing {
				s.renewing = true
				go s.renew()
			}
			return true, nil
		case lostRace(err):
			// Another process counted first. A call that lost to ten
			// looks again later, as if every slot were taken: many
			// processes after the slot one call freed are no failure of
			// the farm.
			if delta > 0 && try >= 9 {
				return false, nil
			}
			continue
		default:
			return false, fmt.Errorf("count a call in flight under %s: %w", key, err)
		}
	}
	return false, fmt.Errorf("count a call in flight under %s: 100 other processes came first", key)
}
