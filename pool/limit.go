package pool

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"time"

	"golang.org/x/time/rate"
)

// Limiter keeps one of a member's rate limits.
type Limiter interface {
	// WaitN books n units (a call, or a call's tokens) and returns when
	// they may go, or with ctx's error.
	WaitN(ctx context.Context, n int) error
	// Book books n units that went already (the tokens of an answer
	// longer than what was booked for it), without waiting.
	Book(n int)
}

// Limit is one of a member's rate limits: PerMinute units a minute, of
// which Burst may go at once (a token bucket of Burst units).
type Limit struct {
	// Key names the calls it counts together (see LimitKey).
	Key string
	// Model is the member's model, for the farm's status.
	Model string
	// Unit is what it counts: calls or tokens.
	Unit      string
	PerMinute int
	Burst     int
}

// Slots bounds a member's calls in flight across processes.
type Slots interface {
	// Acquire returns when one more call may go, with the function that
	// ends it (called once, when the call is over), or with ctx's error.
	Acquire(ctx context.Context) (release func(), err error)
}

// Concurrency is a member's farm_max_concurrency: at most Max calls in
// flight, counted under Key (see LimitKey), from every process that
// shares it.
type Concurrency struct {
	Key, Model string
	Max        int
}

// Limits makes a member's limiter for each of its rate limits, in place
// of a token bucket of its own, and the slots of its farm_max_concurrency:
// on a farm, one limit that every process calling the same model with
// the same key shares (farm.Limits).
type Limits interface {
	Limiter(l Limit) Limiter
	Slots(c Concurrency) Slots
}

// CallLimit is the member's rpm as a Limit, zero without one: calls
// evenly spaced, one at a time.
func (c MemberConfig) CallLimit() Limit {
	if c.RPM <= 0 {
		return Limit{}
	}
	return Limit{Key: "rpm-" + c.LimitKey(), Model: c.Model, Unit: "calls", PerMinute: c.RPM, Burst: 1}
}

// TokenLimit is the member's tpm as a Limit, zero without one: up to a
// minute's tokens at once, as providers count them.
func (c MemberConfig) TokenLimit() Limit {
	if c.TPM <= 0 {
		return Limit{}
	}
	return Limit{Key: "tpm-" + c.LimitKey(), Model: c.Model, Unit: "tokens", PerMinute: c.TPM, Burst: c.TPM}
}

// FarmConcurrency is the member's farm_max_concurrency as a Concurrency,
// zero without one.
func (c MemberConfig) FarmConcurrency() Concurrency {
	if c.FarmMaxConcurrency <= 0 {
		return Concurrency{}
	}
	return Concurrency{Key: "conc-" + c.LimitKey(), Model: c.Model, Max: c.FarmMaxConcurrency}
}

// slots is c's shared slots: nil without a bound or without the policy's
// Limits (a process alone bounds its calls by its own slots, see
// MemberConfig.ownSlots).
func (p Policy) slots(c Concurrency) Slots {
	if c.Max <= 0 || p.Limits == nil {
		return nil
	}
	return p.Limits.Slots(c)
}

// ownSlots is how many calls the member has in flight at most in this
// process: max_concurrency, or farm_max_concurrency when that is less.
func (c MemberConfig) ownSlots() int {
	if c.FarmMaxConcurrency > 0 {
		return min(c.MaxConcurrency, c.FarmMaxConcurrency)
	}
	return c.MaxConcurrency
}

// limiter is l's limiter: nil for no limit, else the policy's Limits or a
// token bucket of the member's own.
func (p Policy) limiter(l Limit) Limiter {
	switch {
	case l.PerMinute <= 0:
		return nil
	case p.Limits != nil:
		return p.Limits.Limiter(l)
	}
	return ownLimiter{rate.NewLimiter(rate.Limit(float64(l.PerMinute)/time.Minute.Seconds()), max(l.Burst, 1))}
}

// ownLimiter is a token bucket of one process.
type ownLimiter struct{ *rate.Limiter }

// WaitN waits for n units, at most a burst (a call larger than the burst
// waits for a full bucket).
func (o ownLimiter) WaitN(ctx context.Context, n int) error {
	return o.Limiter.WaitN(ctx, min(max(n, 1), o.Burst()))
}

func (o ownLimiter) Book(n int) { o.ReserveN(time.Now(), min(max(n, 1), o.Burst())) }

// LimitKey names the calls that one provider rate limit counts together:
// those to the same endpoint (without credentials) and model with the key
// of the same variable. An endpoint on loopback is each machine's own
// server: its calls are counted per machine (the key names the host). It
// is a hash, safe as a NATS subject token and saying nothing of the
// endpoint.
func (c MemberConfig) LimitKey() string {
	machine := ""
	if u, err := url.Parse(c.BaseURL); err == nil && Loopback(u.Hostname()) {
		machine, _ = os.Hostname()
	}
	return c.limitKeyOn(machine)
}

// limitKeyOn is LimitKey, on machine for an endpoint on loopback.
func (c MemberConfig) limitKeyOn(machine string) string {
	base := strings.TrimRight(redactURL(c.BaseURL), "/")
	sum := sha256.Sum256([]byte(base + "\x00" + c.Model + "\x00" + c.APIKeyEnv + "\x00" + machine))
	return hex.EncodeToString(sum[:12])
}
