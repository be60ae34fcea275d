package pool

import (
	"errors"
	"fmt"
	"time"

	"github.com/sony/gobreaker/v2"
	"go.uber.org/zap"

	"dialogfarm/dialog"
	"dialogfarm/internal/bounds"
)

// ErrCircuitOpen is a member's failure while its circuit breaker is open:
// it failed BreakerConfig.Failures requests in a row and is not called
// again until the cool-down has passed.
var ErrCircuitOpen = errors.New("circuit open: member not called")

// BreakerConfig is the circuit breaker every member has: after Failures
// requests in a row fail (each after its retries), the member is not called
// for Cooldown; then one request is let through (half-open), and the
// member is called again if it answers, or skipped for another Cooldown if
// it fails. A request cancelled by its caller counts neither way.
type BreakerConfig struct {
	// Failures is how many failed requests in a row open the circuit; 0
	// turns the breaker off.
	Failures int `yaml:"failures" json:"failures"`
	// Cooldown is how long an open circuit skips the member.
	Cooldown time.Duration `yaml:"cooldown" json:"cooldown"`
}

// DefaultBreakerConfig opens after 5 failed requests in a row and tries
// again after a minute.
func DefaultBreakerConfig() BreakerConfig {
	return BreakerConfig{Failures: 5, Cooldown: time.Minute}
}

// Validate checks the breaker config.
func (b BreakerConfig) Validate() error {
	cooldown := bounds.Duration("breaker.cooldown", b.Cooldown, 0, Day)
	if b.Failures > 0 {
		cooldown.Range.Min = float64(time.Millisecond)
	}
	return bounds.Check(bounds.Int("breaker.failures", b.Failures, 0, 1000), cooldown)
}

// cancelled marks a request its caller gave up on: it says nothing about
// the member, so the breaker excludes it.
type cancelled struct{ err error }

func (c *cancelled) Error() string { return c.err.Error() }
func (c *cancelled) Unwrap() error { return c.err }

func (m *Member) newBreaker(b BreakerConfig) *gobreaker.CircuitBreaker[dialog.Candidate] {
	st := gobreaker.Settings{
		Name:        m.cfg.Name,
		MaxRequests: 1,
		Timeout:     b.Cooldown,
		IsExcluded: func(err error) bool {
			_, ok := errors.AsType[*cancelled](err)
			return ok
		},
		ReadyToTrip: func(c gobreaker.Counts) bool {
			return b.Failures > 0 && c.ConsecutiveFailures >= uint32(b.Failures)
		},
		OnStateChange: func(_ string, from, to gobreaker.State) {
			m.record(func(s *Stats) { s.Circuit = to.String() })
			switch to {
			case gobreaker.StateOpen:
				m.log.Error("circuit open: member not called until the cool-down has passed",
					zap.Int("failed_in_a_row", b.Failures), zap.Duration("cooldown", b.Cooldown), zap.String("from", from.String()))
			case gobreaker.StateHalfOpen:
				m.log.Info("circuit half-open: trying the member again")
			case gobreaker.StateClosed:
				m.log.Info("circuit closed: the member answers again")
			}
		},
	}
	m.cooldown = b.Cooldown
	return gobreaker.NewCircuitBreaker[dialog.Candidate](st)
}

// openError is the failure of a request the open circuit skipped.
func (m *Member) openError() error {
	return fmt.Errorf("%w (%s, cool-down %v)", ErrCircuitOpen, m.breaker.State(), m.cooldown)
}
