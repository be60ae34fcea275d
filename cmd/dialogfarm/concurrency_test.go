package main

import (
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"dialogfarm/pool"
)

// TestOnePoolTakesEverySimulator: --responder openai's one member takes a
// call from each simulator at once, and never fewer than the member
// default.
func TestOnePoolTakesEverySimulator(t *testing.T) {
	def := pool.DefaultMemberConfig().MaxConcurrency
	for _, c := range []struct{ sessions, want int }{{1, def}, {0, def}, {def + 4, def + 4}} {
		cfg := onePool("http://127.0.0.1:1/v1", "m", "", t.TempDir(), c.sessions)
		if got := cfg.Members[0].MaxConcurrency; got != c.want {
			t.Errorf("%d sessions: max_concurrency %d, want %d", c.sessions, got, c.want)
		}
		if err := cfg.Validate(); err != nil {
			t.Errorf("%d sessions: %v", c.sessions, err)
		}
	}
}

// TestWarnConcurrency names each pool member that takes fewer calls at
// once than there are simulators, and only those.
func TestWarnConcurrency(t *testing.T) {
	core, logs := observer.New(zap.WarnLevel)
	s := poolSettings{Pool: pool.Config{Members: []pool.MemberConfig{{Name: "small", MaxConcurrency: 2}, {Name: "big", MaxConcurrency: 8}}}}
	warnConcurrency(s, 4, zap.New(core))
	var named []string
	for _, e := range logs.All() {
		named = append(named, e.ContextMap()["member"].(string))
	}
	if len(named) != 1 || named[0] != "small" {
		t.Errorf("warned about %v, want [small]", named)
	}
}
