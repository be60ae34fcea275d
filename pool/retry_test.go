package pool

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

func fmtAny(v any) string { return fmt.Sprintf("%v %+v %#v", v, v, v) }

func TestRetryAfterHeader(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		name   string
		header map[string]string
		want   time.Duration
		ok     bool
	}{
		{"seconds", map[string]string{"Retry-After": "3"}, 3 * time.Second, true},
		{"fraction", map[string]string{"Retry-After": "0.5"}, 500 * time.Millisecond, true},
		{"http date", map[string]string{"Retry-After": now.Add(7 * time.Second).Format(http.TimeFormat)}, 7 * time.Second, true},
		{"date in the past", map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, 0, true},
		{"milliseconds win", map[string]string{"Retry-After": "9", "Retry-After-Ms": "250"}, 250 * time.Millisecond, true},
		{"garbage", map[string]string{"Retry-After": "soon"}, 0, false},
		{"none", nil, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range c.header {
				h.Set(k, v)
			}
			got, ok := retryAfter(h, now)
			if got != c.want || ok != c.ok {
				t.Errorf("retryAfter = %v, %v; want %v, %v", got, ok, c.want, c.ok)
			}
		})
	}
}

func TestBackoffGrowsWithJitter(t *testing.T) {
	r := RetryConfig{BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second}
	for n, want := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 3: 400 * time.Millisecond, 5: time.Second, 9: time.Second} {
		seen := map[time.Duration]bool{}
		for range 50 {
			d := r.backoff(n)
			if d < want/2 || d > want {
				t.Fatalf("backoff(%d) = %v, want within [%v, %v]", n, d, want/2, want)
			}
			seen[d] = true
		}
		if len(seen) < 2 {
			t.Errorf("backoff(%d) has no jitter: %v", n, seen)
		}
	}
}

func TestRetryableStatuses(t *testing.T) {
	for status, want := range map[int]bool{400: true, 401: true, 403: true, 404: true, 422: true, 408: false, 409: false, 425: false, 429: false, 500: false, 0: false} {
		if got := permanentStatus(status); got != want {
			t.Errorf("permanentStatus(%d) = %v, want %v", status, got, want)
		}
	}
}

func TestCountTokens(t *testing.T) {
	for text, want := range map[string]int{"": 0, "hello": 2, "hello world": 4, "a.b()": 5, "你好": 2, "x := 1": 4} {
		if got := CountTokens(text); got != want {
			t.Errorf("CountTokens(%q) = %d, want %d", text, got, want)
		}
	}
}
