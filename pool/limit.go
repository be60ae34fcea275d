package pool

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"

	"golang.org/x/time/rate"
)

// Limiter spaces a member's calls by its rpm: Wait returns when the next
// call may go, or with ctx's error.
type Limiter interface {
	Wait(ctx context.Context) error
}

// Limits makes the limiter of a member whose rpm is set, in place of a
// token bucket of its own: on a farm, one limit that every process
// calling the same model with the same key shares (farm.Limits).
type Limits func(cfg MemberConfig) Limiter

// limiter is the member's: nil (no limit) without an rpm, else the
// policy's Limits or a token bucket of its own.
func (p Policy) limiter(cfg MemberConfig) Limiter {
	switch {
	case cfg.RPM <= 0:
		return nil
	case p.Limits != nil:
		return p.Limits(cfg)
	}
	return rate.NewLimiter(rate.Every(cfg.Interval()), 1)
}

// Interval is the least time between two of the member's calls by its
// rpm; 0 without one.
func (c MemberConfig) Interval() time.Duration {
	if c.RPM <= 0 {
		return 0
	}
	return time.Minute / time.Duration(c.RPM)
}

// LimitKey names the calls that one provider rate limit counts together:
// those to the same endpoint (without credentials) and model with the key
// of the same variable. It is a hash, safe as a NATS subject token and
// saying nothing of the endpoint.
func (c MemberConfig) LimitKey() string {
	base := strings.TrimRight(redactURL(c.BaseURL), "/")
	sum := sha256.Sum256([]byte(base + "\x00" + c.Model + "\x00" + c.APIKeyEnv))
	return "rpm-" + hex.EncodeToString(sum[:12])
}
