package pool

import (
	"strings"
	"sync"
	"testing"
	"time"

	"dialogfarm/internal/llmtest"
)

// Calls share a limit when they go to one endpoint and model with the key
// of one variable, however the base URL is written; any other model,
// variable or endpoint has a limit of its own, and so has a loopback
// endpoint on each machine. The key says nothing of the endpoint.
func TestLimitKey(t *testing.T) {
	m := func(base, model, env string) MemberConfig {
		return MemberConfig{BaseURL: base, Model: model, APIKeyEnv: env}
	}
	a := m("https://api.example/v1", "gpt-x", "OPENAI_API_KEY").LimitKey()
	if b := m("https://api.example/v1/", "gpt-x", "OPENAI_API_KEY").LimitKey(); b != a {
		t.Errorf("a trailing slash gives another limit: %s, %s", a, b)
	}
	for _, other := range []MemberConfig{
		m("https://api.example/v1", "gpt-y", "OPENAI_API_KEY"),
		m("https://api.example/v1", "gpt-x", "TEAM_B_KEY"),
		m("https://other.example/v1", "gpt-x", "OPENAI_API_KEY"),
	} {
		if other.LimitKey() == a {
			t.Errorf("%+v shares the limit of gpt-x at api.example", other)
		}
	}
	// A server on loopback is each machine's own: its limits are counted
	// per machine.
	local := m("http://127.0.0.1:8000/v1", "qwen", "")
	if local.limitKeyOn("gpu-1") == local.limitKeyOn("gpu-2") {
		t.Error("a loopback endpoint's limit is one across machines")
	}
	if local.LimitKey() != local.LimitKey() {
		t.Error("a loopback endpoint's limit differs between two calls on one machine")
	}
	if len(a) != 24 {
		t.Errorf("limit key %q, want 24 hex digits", a)
	}
}

// A member has at most max_concurrency calls in flight, or its
// farm_max_concurrency when that is less (a process alone, or off a farm).
func TestMemberConcurrencyLimit(t *testing.T) {
	for _, c := range []struct{ own, farm int }{{2, 0}, {4, 2}} {
		var f inflight
		s := llmtest.New(t, f.handler(50*time.Millisecond, llmtest.Echo))
		cfg := member("a", s.URL)
		cfg.MaxConcurrency, cfg.FarmMaxConcurrency = c.own, c.farm
		m := newTestMember(t, cfg, nil)
		var wg sync.WaitGroup
		for i := range 6 {
			wg.Go(func() {
				if _, err := m.Ask(t.Context(), ask(strings.Repeat("x", i+1))); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if p := f.peak.Load(); p != 2 {
			t.Errorf("max_concurrency %d, farm_max_concurrency %d: peak requests in flight = %d, want 2", c.own, c.farm, p)
		}
	}
}
