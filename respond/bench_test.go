package respond

import (
	"testing"
	"time"

	"go.uber.org/zap"

	"dialogfarm/capture"
	"dialogfarm/internal/llmtest"
	"dialogfarm/pool"
)

// BenchmarkTurnWithSlowMember measures one turn (pool + rules-only judge)
// when one of three members takes 30 s to answer: without a deadline the
// turn waits for it; with a 2 s deadline, or a quorum of 2, it answers
// from the other two.
//
//	go test -run XXX -bench TurnWithSlowMember -benchtime 1x ./respond
func BenchmarkTurnWithSlowMember(b *testing.B) {
	s := llmtest.New(b, func(r llmtest.Request) llmtest.Reply {
		if r.Model == "slow" {
			return llmtest.Reply{Text: "slow answer", Delay: 30 * time.Second}
		}
		return llmtest.Reply{Text: "It counts the words of s, lower-cased.", Delay: 200 * time.Millisecond}
	})
	for _, c := range []struct {
		name     string
		quorum   int
		deadline time.Duration
	}{{"wait-all", 0, 0}, {"deadline-2s", 0, 2 * time.Second}, {"quorum-2", 2, 0}} {
		b.Run(c.name, func(b *testing.B) {
			cfg := pool.DefaultConfig()
			cfg.CacheDir, cfg.Quorum, cfg.Deadline = "", c.quorum, c.deadline
			for _, name := range []string{"fast-a", "slow", "fast-b"} {
				m := pool.DefaultMemberConfig()
				m.Name, m.BaseURL, m.Model = name, s.URL, name
				cfg.Members = append(cfg.Members, m)
			}
			p, err := pool.New(cfg, zap.NewNop())
			if err != nil {
				b.Fatal(err)
			}
			r := New(p, newJudge(b, nil), zap.NewNop())
			req := capture.Request{Session: "s", Messages: []capture.Message{{Role: "user", Content: "What does WordCount do?"}}}
			for b.Loop() {
				ans, err := r.Respond(b.Context(), req)
				if err != nil || len(ans.Candidates) < 2 {
					b.Fatalf("%d candidates, %v", len(ans.Candidates), err)
				}
				b.ReportMetric(float64(len(ans.Candidates)), "candidates")
			}
		})
	}
}
