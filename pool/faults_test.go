package pool

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"dialogfarm/internal/llmtest"
)

// slowPool is three members on one fake server; the member named slow
// answers only after a minute (or when its caller gives up).
func slowPool(tb testing.TB, quorum int, deadline time.Duration) (*Pool, *llmtest.Server) {
	tb.Helper()
	s := llmtest.New(tb, func(r llmtest.Request) llmtest.Reply {
		if r.Model == "slow-model" {
			return llmtest.Reply{Text: "slow answer", Delay: time.Minute}
		}
		return llmtest.Reply{Text: "answer of " + r.Model}
	})
	cfg := DefaultConfig()
	cfg.CacheDir, cfg.Retry, cfg.Quorum, cfg.Deadline = "", fastRetry(), quorum, deadline
	cfg.Members = []MemberConfig{member("fast1", s.URL), member("slow", s.URL), member("fast2", s.URL)}
	cfg.Members[1].Timeout = 2 * time.Minute
	p, err := New(cfg, zaptest.NewLogger(tb))
	if err != nil {
		tb.Fatal(err)
	}
	return p, s
}

// One slow member does not stall the turn: past the deadline the pool
// answers with the two candidates it has and records the slow member as
// late, with the reason; the member is not counted as failing.
func TestDeadlineDoesNotWaitForSlowMember(t *testing.T) {
	p, _ := slowPool(t, 0, 50*time.Millisecond)
	prop, err := p.Propose(t.Context(), ask("q"))
	if err != nil {
		t.Fatal(err)
	}
	if len(prop.Candidates) != 2 || prop.Candidates[0].Member != "fast1" || prop.Candidates[1].Member != "fast2" {
		t.Fatalf("candidates %+v", prop.Candidates)
	}
	miss := prop.Missing()
	if len(miss) != 1 || miss[0].Member != "slow" || !miss[0].Late || !strings.Contains(miss[0].Reason, "deadline of 50ms") {
		t.Fatalf("missing %+v", miss)
	}
	st := p.Stats()[1]
	if st.Late != 1 || st.Failures != 0 || st.FailingStreak != 0 {
		t.Errorf("slow member's stats %+v", st)
	}
}

// With a quorum of 2 and no deadline the pool answers once two members
// have, and the third is recorded as not needed.
func TestQuorumStopsWaiting(t *testing.T) {
	p, _ := slowPool(t, 2, 0)
	prop, err := p.Propose(t.Context(), ask("q"))
	if err != nil {
		t.Fatal(err)
	}
	miss := prop.Missing()
	if len(prop.Candidates) != 2 || len(miss) != 1 || miss[0].Member != "slow" || !miss[0].Late ||
		!strings.Contains(miss[0].Reason, "quorum 2") {
		t.Fatalf("candidates %d, missing %+v", len(prop.Candidates), miss)
	}
}

// Past the deadline with no candidate yet, the pool still takes the first
// one that comes.
func TestDeadlineWaitsForAFirstCandidate(t *testing.T) {
	s := llmtest.New(t, func(r llmtest.Request) llmtest.Reply {
		if r.Model == "late-model" {
			return llmtest.Reply{Text: "late", Delay: 100 * time.Millisecond}
		}
		return llmtest.Reply{Status: 400, Text: "bad request"}
	})
	cfg := DefaultConfig()
	cfg.CacheDir, cfg.Retry, cfg.Deadline = "", fastRetry(), time.Millisecond
	cfg.Members = []MemberConfig{member("broken", s.URL), member("late", s.URL)}
	p, err := New(cfg, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	prop, err := p.Propose(t.Context(), ask("q"))
	if err != nil || len(prop.Candidates) != 1 || prop.Candidates[0].Text != "late" {
		t.Fatalf("proposal %+v, %v", prop, err)
	}
	if m := prop.Missing(); len(m) != 1 || m[0].Member != "broken" || m[0].Late {
		t.Errorf("missing %+v", m)
	}
}

// The breaker opens after Failures failed requests in a row: the member is
// not called (the server sees nothing) and fails at once with
// ErrCircuitOpen; after the cool-down one request goes through
// (half-open) and, answered, closes the circuit.
func TestCircuitBreaker(t *testing.T) {
	var healthy atomic.Bool
	s := llmtest.New(t, func(r llmtest.Request) llmtest.Reply {
		if healthy.Load() {
			return llmtest.Reply{Text: "back"}
		}
		return llmtest.Reply{Status: 500, Text: "down"}
	})
	cfg := member("flaky", s.URL)
	retry := fastRetry()
	retry.MaxAttempts = 1
	m, err := NewMember(cfg, Policy{Retry: retry, Breaker: BreakerConfig{Failures: 2, Cooldown: 100 * time.Millisecond}}, nil, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if _, err := m.Ask(t.Context(), ask("q")); err == nil || errors.Is(err, ErrCircuitOpen) {
			t.Fatalf("request %d: %v, want the upstream's 500", i+1, err)
		}
	}
	for range 3 {
		if _, err := m.Ask(t.Context(), ask("q")); !errors.Is(err, ErrCircuitOpen) {
			t.Fatalf("open circuit: %v, want ErrCircuitOpen", err)
		}
	}
	if n := len(s.Requests()); n != 2 {
		t.Fatalf("the open circuit let %d requests through, want 2", n-2)
	}
	if st := m.Stats(); st.Circuit != "open" || st.Skipped != 3 || st.Failures != 2 {
		t.Errorf("stats %+v", st)
	}
	healthy.Store(true)
	// Wait for the cool-down as a condition, not a fixed sleep.
	for m.breaker.State().String() == "open" {
		select {
		case <-t.Context().Done():
			t.Fatal("the circuit never half-opened")
		case <-time.After(10 * time.Millisecond):
		}
	}
	c, err := m.Ask(t.Context(), ask("q"))
	if err != nil || c.Text != "back" {
		t.Fatalf("half-open request: %q, %v", c.Text, err)
	}
	if st := m.Stats(); st.Circuit != "closed" || len(s.Requests()) != 3 {
		t.Errorf("after recovery: circuit %s, %d requests", st.Circuit, len(s.Requests()))
	}
}

// A request its caller cancels does not count toward opening the circuit.
func TestBreakerIgnoresCancelledRequests(t *testing.T) {
	s := llmtest.New(t, func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: "x", Delay: time.Minute} })
	m, err := NewMember(member("m", s.URL), Policy{Retry: fastRetry(), Breaker: BreakerConfig{Failures: 1, Cooldown: time.Hour}}, nil, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
		_, err := m.Ask(ctx, ask("q"))
		cancel()
		if err == nil || errors.Is(err, ErrCircuitOpen) {
			t.Fatalf("cancelled request: %v", err)
		}
	}
	if st := m.Stats(); st.Circuit != "closed" {
		t.Errorf("circuit %s after cancelled requests", st.Circuit)
	}
}
