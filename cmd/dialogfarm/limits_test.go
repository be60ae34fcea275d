package main

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/spf13/viper"
	"go.uber.org/zap/zaptest"

	"dialogfarm/dialog"
	"dialogfarm/farm"
	"dialogfarm/internal/llmtest"
	"dialogfarm/pool"
)

// The pools of two workers of one farm, each with a member limited to 300
// calls a minute on the same model and key variable, call that model 200
// ms apart at the least between them, as the farm's shared limit books
// their calls: 8 calls span 1.4 s. With a limit of their own each, each
// worker's 4 calls would span 0.6 s, side by side.
func TestWorkersPoolsShareTheirModelsRPM(t *testing.T) {
	llm := llmtest.New(t, llmtest.Fixed("ok"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	member := pool.DefaultMemberConfig()
	member.Name, member.BaseURL, member.Model, member.RPM = "coder", llm.URL, "coder-7b", 300
	member.Stream = false
	arrived := callFromTwoWorkers(t, ctx, llm, member)
	if span := arrived[7].Sub(arrived[0]); span < 1300*time.Millisecond {
		t.Errorf("8 calls from two workers under one limit of 300 a minute spanned %v, want 1.4 s less a little", span)
	}
}

// The pools of two workers of one farm, each with a member whose
// farm_max_concurrency is 2 (and max_concurrency 4), have at most 2 calls
// in flight to the model between them: each answer takes 300 ms, so no 3
// calls arrive within 290 ms, and 8 calls come in 4 waves.
func TestWorkersPoolsShareTheirModelsCallsInFlight(t *testing.T) {
	llm := llmtest.New(t, func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: "ok", Delay: 300 * time.Millisecond} })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	member := pool.DefaultMemberConfig()
	member.Name, member.BaseURL, member.Model, member.FarmMaxConcurrency = "coder", llm.URL, "coder-7b", 2
	member.Stream = false
	arrived := callFromTwoWorkers(t, ctx, llm, member)
	for i := 2; i < len(arrived); i++ {
		if gap := arrived[i].Sub(arrived[i-2]); gap < 290*time.Millisecond {
			t.Errorf("calls %d to %d arrived within %v: 3 in flight at once under a farm_max_concurrency of 2", i-1, i+1, gap)
		}
	}
}

// Without --nats (the embedded farm: one process) the models keep their
// rpm on their own.
func TestModelLimitsOnlyOnARemoteFarm(t *testing.T) {
	a := &app{v: viper.New(), log: zaptest.NewLogger(t)}
	fc, err := a.farmConfig()
	if err != nil {
		t.Fatal(err)
	}
	if fc.Limits != nil || modelLimits(fc) != nil {
		t.Error("shared limits without a remote farm")
	}
}

// callFromTwoWorkers makes 4 calls at once from each of two workers'
// pools with member alone, and returns when they reached llm, in order.
func callFromTwoWorkers(t *testing.T, ctx context.Context, llm *llmtest.Server, member pool.MemberConfig) []time.Time {
	t.Helper()
	var wg sync.WaitGroup
	for _, p := range workersPools(t, ctx, member) {
		for i := range 4 {
			wg.Go(func() {
				msgs := []dialog.Message{{Role: "user", Content: "question " + string(rune('a'+i))}}
				if _, err := p.Members()[0].Complete(ctx, msgs); err != nil {
					t.Error(err)
				}
			})
		}
	}
	wg.Wait()
	var arrived []time.Time
	for _, r := range llm.Requests() {
		arrived = append(arrived, r.At)
	}
	if len(arrived) != 8 {
		t.Fatalf("the model got %d calls, want 8", len(arrived))
	}
	slices.SortFunc(arrived, func(a, b time.Time) int { return a.Compare(b) })
	return arrived
}

// workersPools are the pools of two workers of one farm, each with
// member alone.
func workersPools(t *testing.T, ctx context.Context, member pool.MemberConfig) []*pool.Pool {
	t.Helper()
	dir := t.TempDir()
	creds, err := farm.EnsureCreds(filepath.Join(dir, farm.CredsDir), 2)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := farm.StartServer(ctx, farm.ServerConfig{StoreDir: filepath.Join(dir, "store"), Listen: "127.0.0.1:-1", Users: creds.Users})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	coord, err := farm.Dial(ctx, farm.ClientConfig{URL: srv.ClientURL(), Creds: creds.Coordinator})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(coord.Close)
	cjs, _ := farm.JetStream(coord)
	if _, err := farm.Setup(ctx, cjs, farm.DefaultQueueConfig()); err != nil {
		t.Fatal(err)
	}
	var pools []*pool.Pool
	for _, seed := range creds.Workers {
		a := &app{v: viper.New(), log: zaptest.NewLogger(t)}
		a.v.Set("nats", srv.ClientURL())
		fc, err := a.farmConfig()
		if err != nil {
			t.Fatal(err)
		}
		if fc.Limits == nil {
			t.Fatal("a worker's farm config has no shared limits with --nats")
		}
		nc, err := farm.Dial(ctx, farm.ClientConfig{URL: srv.ClientURL(), Creds: seed})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		js, _ := farm.JetStream(nc)
		q, err := farm.Open(ctx, js)
		if err != nil {
			t.Fatal(err)
		}
		fc.Limits.Bind(ctx, q)
		p, err := pool.New(pool.Config{Members: []pool.MemberConfig{member}, Retry: pool.DefaultRetryConfig(), Breaker: pool.DefaultBreakerConfig()},
			zaptest.NewLogger(t), pool.WithLimits(modelLimits(fc)))
		if err != nil {
			t.Fatal(err)
		}
		pools = append(pools, p)
	}
	return pools
}
