package pool

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// ErrStreamDropped is returned for an SSE stream that ended before the
// model finished (no finish_reason and no [DONE]); it is retried.
var ErrStreamDropped = errors.New("stream ended before the answer was finished")

// permanentStatus reports whether an HTTP status means retrying is useless
// (bad request, bad key, unknown model, ...).
func permanentStatus(status int) bool {
	switch status {
	case http.StatusRequestTimeout, http.StatusConflict, http.StatusTooEarly, http.StatusTooManyRequests:
		return false
	}
	return status >= 400 && status < 500
}

// httpStatus is the status of an API or request error, or 0.
func httpStatus(err error) int {
	if e, ok := errors.AsType[*openai.APIError](err); ok {
		return e.HTTPStatusCode
	}
	if e, ok := errors.AsType[*openai.RequestError](err); ok {
		return e.HTTPStatusCode
	}
	return 0
}

// retryable reports whether an attempt's error is worth another attempt.
// Everything is, except a permanent HTTP status: timeouts, connection
// failures, dropped streams and unreadable bodies are all transient.
func retryable(err error) bool {
	return !permanentStatus(httpStatus(err))
}

// backoff is the wait before retry n (1-based): BaseDelay doubled n−1
// times, capped at MaxDelay, drawn uniformly from [d/2, d].
func (r RetryConfig) backoff(n int) time.Duration {
	d := r.BaseDelay
	for i := 1; i < n && d < r.MaxDelay; i++ {
		d *= 2
	}
	d = min(d, r.MaxDelay)
	if d <= 1 {
		return d
	}
	return d/2 + rand.N(d/2+1)
}

// retryAfter parses a Retry-After header (seconds or an HTTP date) or a
// retry-after-ms header; ok is false when there is none.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if ms := h.Get("Retry-After-Ms"); ms != "" {
		if n, err := strconv.ParseFloat(ms, 64); err == nil && n >= 0 {
			return time.Duration(n * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if n, err := strconv.ParseFloat(v, 64); err == nil && n >= 0 {
		return time.Duration(n * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// headerSlot receives the response headers of one attempt: go-openai's
// errors do not carry them, so the HTTP client hands them over through the
// request's context.
type headerSlot struct {
	mu sync.Mutex
	h  http.Header
}

type headerSlotKey struct{}

func withHeaderSlot(ctx context.Context) (context.Context, *headerSlot) {
	s := &headerSlot{}
	return context.WithValue(ctx, headerSlotKey{}, s), s
}

func (s *headerSlot) get() http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.h
}

// headerCatcher is the HTTP client go-openai uses: it records each
// response's headers in the request context's headerSlot.
type headerCatcher struct{ client *http.Client }

func (c headerCatcher) Do(req *http.Request) (*http.Response, error) {
	resp, err := c.client.Do(req)
	if resp != nil {
		if s, ok := req.Context().Value(headerSlotKey{}).(*headerSlot); ok {
			s.mu.Lock()
			s.h = resp.Header.Clone()
			s.mu.Unlock()
		}
	}
	return resp, err
}

// MemberError is a member's failure to answer one request after its
// attempts.
type MemberError struct {
	Member   string
	Attempts int
	// Late marks a member the pool stopped waiting for (quorum or
	// deadline) rather than one that failed.
	Late bool
	Err  error
}

func (e *MemberError) Error() string {
	switch {
	case e.Late:
		return fmt.Sprintf("member %s was late: %v", e.Member, e.Err)
	case errors.Is(e.Err, ErrCircuitOpen):
		return fmt.Sprintf("member %s skipped: %v", e.Member, e.Err)
	}
	return fmt.Sprintf("member %s failed after %d attempt(s): %v", e.Member, e.Attempts, e.Err)
}

func (e *MemberError) Unwrap() error { return e.Err }
