package pool

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"dialogfarm/dialog"
	"dialogfarm/internal/llmtest"
)

// fastRetry keeps backoffs short so retry tests run quickly; Retry-After
// waits are the server's and stay as given.
func fastRetry() RetryConfig {
	return RetryConfig{MaxAttempts: 4, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond, MaxRetryAfter: 5 * time.Second}
}

func member(name, url string) MemberConfig {
	m := DefaultMemberConfig()
	m.Name, m.BaseURL, m.Model = name, url, name+"-model"
	m.Timeout = 5 * time.Second
	return m
}

func newTestMember(tb testing.TB, cfg MemberConfig, cache *Cache) *Member {
	tb.Helper()
	m, err := NewMember(cfg, Policy{Retry: fastRetry()}, cache, zaptest.NewLogger(tb))
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

func ask(msg string) Request {
	return Request{Messages: []dialog.Message{{Role: "system", Content: "sys"}, {Role: "user", Content: msg}}}
}

// inflight is a handler wrapper that records the most requests in flight
// at once; each request is held for hold.
type inflight struct {
	now, peak atomic.Int64
}

func (f *inflight) handler(hold time.Duration, reply llmtest.Handler) llmtest.Handler {
	return func(r llmtest.Request) llmtest.Reply {
		n := f.now.Add(1)
		for {
			p := f.peak.Load()
			if n <= p || f.peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(hold) // test code: holds the request open so overlaps show
		f.now.Add(-1)
		return reply(r)
	}
}

func TestPoolConcurrencyLimit(t *testing.T) {
	var f inflight
	s := llmtest.New(t, f.handler(30*time.Millisecond, llmtest.Echo))
	cfg := DefaultConfig()
	cfg.CacheDir, cfg.Retry, cfg.Concurrency = "", fastRetry(), 1
	cfg.Members = []MemberConfig{member("a", s.URL), member("b", s.URL), member("c", s.URL)}
	p, err := New(cfg, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	prop, err := p.Propose(t.Context(), ask("hi"))
	if err != nil || len(prop.Candidates) != 3 {
		t.Fatalf("Propose = %+v, %v", prop, err)
	}
	if got := f.peak.Load(); got != 1 {
		t.Errorf("peak requests in flight = %d, want 1 (concurrency)", got)
	}
	for i, name := range []string{"a", "b", "c"} {
		if c := prop.Candidates[i]; c.Member != name || c.Model != name+"-model" || c.Text != "hi" {
			t.Errorf("candidate %d = %+v", i, c)
		}
	}
}

func TestRetryOn429HonoursRetryAfter(t *testing.T) {
	s := llmtest.New(t, func(r llmtest.Request) llmtest.Reply {
		if r.Seq == 1 {
			return llmtest.Reply{Status: 429, RetryAfter: "1", Text: "slow down"}
		}
		return llmtest.Reply{Text: "ok now"}
	})
	m := newTestMember(t, member("a", s.URL), nil)
	start := time.Now()
	c, err := m.Ask(t.Context(), ask("q"))
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < time.Second {
		t.Errorf("answered after %v; Retry-After: 1 asks for at least 1s (backoff alone is ≤ 5ms)", took)
	}
	st := m.Stats()
	if c.Text != "ok now" || st.Calls != 2 || st.Retries != 1 || len(s.Requests()) != 2 {
		t.Errorf("candidate %q, stats %+v, requests %d", c.Text, st, len(s.Requests()))
	}
}

func TestRetryAfterTooLongFailsAtOnce(t *testing.T) {
	s := llmtest.New(t, func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Status: 429, RetryAfter: "3600"}
	})
	m := newTestMember(t, member("a", s.URL), nil)
	_, err := m.Ask(t.Context(), ask("q"))
	if err == nil || !strings.Contains(err.Error(), "max_retry_after") || len(s.Requests()) != 1 {
		t.Errorf("err = %v after %d requests", err, len(s.Requests()))
	}
}

func TestRetryOn500AndPermanent400(t *testing.T) {
	cases := []struct {
		name     string
		status   int
		requests int
		ok       bool
	}{
		{"500 twice then ok", 500, 3, true},
		{"503 twice then ok", 503, 3, true},
		{"400 is permanent", 400, 1, false},
		{"401 is permanent", 401, 1, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := llmtest.New(t, func(r llmtest.Request) llmtest.Reply {
				if r.Seq <= 2 {
					return llmtest.Reply{Status: c.status}
				}
				return llmtest.Reply{Text: "fine"}
			})
			m := newTestMember(t, member("a", s.URL), nil)
			_, err := m.Ask(t.Context(), ask("q"))
			if (err == nil) != c.ok || len(s.Requests()) != c.requests {
				t.Fatalf("err = %v after %d requests; want ok=%v after %d", err, len(s.Requests()), c.ok, c.requests)
			}
			var me *MemberError
			if err != nil && (!errors.As(err, &me) || me.Attempts != 1 || httpStatus(err) != c.status) {
				t.Errorf("err %v: want a *MemberError after 1 attempt with status %d", err, c.status)
			}
		})
	}
}

func TestRetryOnTimeout(t *testing.T) {
	s := llmtest.New(t, func(r llmtest.Request) llmtest.Reply {
		if r.Seq == 1 {
			return llmtest.Reply{Text: "late", Delay: 5 * time.Second}
		}
		return llmtest.Reply{Text: "in time"}
	})
	cfg := member("a", s.URL)
	cfg.Timeout = 100 * time.Millisecond
	m := newTestMember(t, cfg, nil)
	start := time.Now()
	c, err := m.Ask(t.Context(), ask("q"))
	if err != nil || c.Text != "in time" {
		t.Fatalf("Ask = %q, %v", c.Text, err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("took %v: the slow attempt was not cut at its 100ms timeout", took)
	}
}

func TestRetryOnDroppedStream(t *testing.T) {
	for _, stream := range []bool{true, false} {
		t.Run(map[bool]string{true: "stream", false: "json"}[stream], func(t *testing.T) {
			s := llmtest.New(t, func(r llmtest.Request) llmtest.Reply {
				if r.Seq == 1 {
					return llmtest.Reply{Text: "one two three four five", DropAfterChunks: 2}
				}
				return llmtest.Reply{Text: "one two three four five"}
			})
			cfg := member("a", s.URL)
			cfg.Stream = stream
			m := newTestMember(t, cfg, nil)
			c, err := m.Ask(t.Context(), ask("q"))
			if err != nil || c.Text != "one two three four five" || len(s.Requests()) != 2 {
				t.Fatalf("Ask = %q, %v after %d requests", c.Text, err, len(s.Requests()))
			}
			if r := s.Requests()[0]; r.Stream != stream {
				t.Errorf("request stream = %v, want %v", r.Stream, stream)
			}
		})
	}
}

func TestStreamWithoutFinishIsDropped(t *testing.T) {
	frames := "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"half an ans\"}}]}\n\n"
	s := llmtest.New(t, func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Raw: frames} })
	m := newTestMember(t, member("a", s.URL), nil)
	_, err := m.Ask(t.Context(), ask("q"))
	if !errors.Is(err, ErrStreamDropped) || len(s.Requests()) != 4 {
		t.Errorf("err = %v after %d requests; want ErrStreamDropped after 4 attempts", err, len(s.Requests()))
	}
}

// downURL is a base URL where nothing listens.
func downURL(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/v1"
}

func TestOneMemberPermanentlyDown(t *testing.T) {
	s := llmtest.New(t, llmtest.Echo)
	core, logs := observer.New(zap.WarnLevel)
	cfg := DefaultConfig()
	cfg.CacheDir, cfg.Retry, cfg.FailingAfter = "", fastRetry(), 2
	cfg.Members = []MemberConfig{member("up1", s.URL), member("down", downURL(t)), member("up2", s.URL)}
	p, err := New(cfg, zap.New(core))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		prop, err := p.Propose(t.Context(), ask("q"+string(rune('0'+i))))
		if err != nil {
			t.Fatal(err)
		}
		if len(prop.Candidates) != 2 || prop.Candidates[0].Member != "up1" || prop.Candidates[1].Member != "up2" {
			t.Fatalf("candidates %+v", prop.Candidates)
		}
		if len(prop.Failures) != 1 || prop.Failures[0].Member != "down" || prop.Failures[0].Attempts != 4 ||
			!strings.Contains(prop.Failures[0].Error(), "connection refused") {
			t.Fatalf("failures %v", prop.Failures)
		}
	}
	st := p.Stats()
	if !st[1].Failing || st[1].FailingStreak != 2 || st[1].Failures != 2 || st[0].Failing {
		t.Errorf("stats %+v", st)
	}
	if n := logs.FilterMessage("pool member keeps failing").FilterField(zap.String("member", "down")).Len(); n != 1 {
		t.Errorf("%d 'keeps failing' reports, want 1", n)
	}
}

func TestNoCandidatesGivesEveryReason(t *testing.T) {
	s := llmtest.New(t, func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Status: 401, Text: "bad key"} })
	cfg := DefaultConfig()
	cfg.CacheDir, cfg.Retry = "", fastRetry()
	cfg.Members = []MemberConfig{member("a", s.URL), member("b", downURL(t))}
	p, err := New(cfg, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = p.Candidates(t.Context(), ask("q").Messages, nil)
	if !errors.Is(err, ErrNoCandidates) {
		t.Fatalf("err = %v, want ErrNoCandidates", err)
	}
	for _, want := range []string{"member a failed after 1 attempt", "bad key", "member b failed after 4 attempt", "connection refused"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestCacheHitsOnRerun(t *testing.T) {
	s := llmtest.New(t, func(r llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: "answer to " + r.LastUser(), PromptTokens: 1000, CompletionTokens: 500}
	})
	dir := filepath.Join(t.TempDir(), "run", "cache")
	cfg := DefaultConfig()
	cfg.CacheDir, cfg.Retry = dir, fastRetry()
	a, b := member("a", s.URL), member("b", s.URL)
	a.InputPrice, a.OutputPrice = 1, 2
	cfg.Members = []MemberConfig{a, b}
	run := func() ([]dialog.Candidate, []Stats) {
		p, err := New(cfg, zaptest.NewLogger(t))
		if err != nil {
			t.Fatal(err)
		}
		c, _, err := p.Candidates(t.Context(), ask("q").Messages, nil)
		if err != nil {
			t.Fatal(err)
		}
		return c, p.Stats()
	}
	first, st1 := run()
	second, st2 := run()
	if n := len(s.Requests()); n != 2 {
		t.Fatalf("%d model calls over two runs, want 2 (the re-run is served from the cache)", n)
	}
	if first[0].Cached || !second[0].Cached || !second[1].Cached {
		t.Errorf("cached flags: first %v, second %v %v", first[0].Cached, second[0].Cached, second[1].Cached)
	}
	if second[0].Text != first[0].Text || second[0].PromptTokens != 1000 || second[0].CostUSD != first[0].CostUSD {
		t.Errorf("cached candidate %+v differs from %+v", second[0], first[0])
	}
	// 1000 prompt tokens at $1/M + 500 completion tokens at $2/M = $0.002.
	if first[0].CostUSD != 0.002 || st1[0].CostUSD != 0.002 || st2[0].CostUSD != 0 || st2[0].CacheHits != 1 {
		t.Errorf("cost %v, first-run spend %v, re-run spend %v, re-run hits %d", first[0].CostUSD, st1[0].CostUSD, st2[0].CostUSD, st2[0].CacheHits)
	}
	// A different request is a miss.
	p, _ := New(cfg, zaptest.NewLogger(t))
	if _, _, err := p.Candidates(t.Context(), ask("another").Messages, nil); err != nil || len(s.Requests()) != 4 {
		t.Errorf("a new request was not asked: %v, %d calls", err, len(s.Requests()))
	}
}

func TestRPMLimit(t *testing.T) {
	s := llmtest.New(t, llmtest.Echo)
	cfg := member("a", s.URL)
	cfg.RPM = 600 // one call per 100ms
	m := newTestMember(t, cfg, nil)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			if _, err := m.Ask(t.Context(), ask(strings.Repeat("y", i+1))); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if took := time.Since(start); took < 300*time.Millisecond {
		t.Errorf("4 calls at 600 rpm took %v, want at least 300ms", took)
	}
}

// A tpm limit books each call's prompt and max_tokens before it goes: two
// calls fit in the bucket of a minute's tokens at once, and the third
// waits for the tokens it lacks (about 100 of 2,900 a minute: 2 s).
func TestTPMLimit(t *testing.T) {
	s := llmtest.New(t, llmtest.Echo)
	cfg := member("a", s.URL)
	cfg.MaxTokens = 1000
	q := ask("q")
	per := countPrompt(q.Messages) + cfg.MaxTokens
	cfg.TPM = 3*per - 100
	m := newTestMember(t, cfg, nil)
	for i := range 3 {
		if _, err := m.Ask(t.Context(), ask(strings.Repeat("q", i+1))); err != nil {
			t.Fatal(err)
		}
	}
	reqs := s.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d calls, want 3", len(reqs))
	}
	if w := reqs[2].At.Sub(reqs[0].At); w < 1500*time.Millisecond {
		t.Errorf("the third call of %d tokens under %d tpm came %v after the first, want about 2 s", per, cfg.TPM, w)
	}
	if w := m.Stats().LimitWait; w < 1.5 || w > 30 {
		t.Errorf("the member's calls waited %.2f s for its limit, want about 2", w)
	}
}

func TestTokensFromAPIOrCounted(t *testing.T) {
	noUsage := "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"model\":\"served\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hello world\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
	s := llmtest.New(t, func(r llmtest.Request) llmtest.Reply {
		if strings.Contains(r.LastUser(), "raw") {
			return llmtest.Reply{Raw: noUsage}
		}
		return llmtest.Reply{Text: "hi", PromptTokens: 11, CompletionTokens: 7}
	})
	m := newTestMember(t, member("a", s.URL), nil)
	c, err := m.Ask(t.Context(), ask("api"))
	if err != nil || c.PromptTokens != 11 || c.CompletionTokens != 7 || c.TokensCounted {
		t.Errorf("usage from API: %+v, %v", c, err)
	}
	c, err = m.Ask(t.Context(), ask("raw"))
	// prompt: 3 + (4 + "sys"=1) + (4 + "raw"=1) = 13; completion "hello world" = 2 + 1 (5 letters → 2 tokens each) → 4
	if err != nil || !c.TokensCounted || c.PromptTokens != 13 || c.CompletionTokens != 4 || c.Model != "served" {
		t.Errorf("counted usage: %+v, %v", c, err)
	}
}

func TestTemperatureAndKeyNeverLeak(t *testing.T) {
	s := llmtest.New(t, func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Status: 500, Text: "boom"} })
	core, logs := observer.New(zap.DebugLevel)
	dir := t.TempDir()
	cfg := member("a", s.URL)
	zero := float32(0)
	cfg.Temperature, cfg.APIKeyEnv = &zero, "POOL_TEST_KEY"
	if err := cfg.ResolveKey(func(string) (string, bool) { return "sk-very-secret", true }); err != nil {
		t.Fatal(err)
	}
	cache, _ := OpenCache(dir)
	m, err := NewMember(cfg, Policy{Retry: fastRetry()}, cache, zap.New(core))
	if err != nil {
		t.Fatal(err)
	}
	_, askErr := m.Ask(t.Context(), Request{Messages: []dialog.Message{{Role: "user", Content: "q"}}})
	reqs := s.Requests()
	if got := reqs[0].Header.Get("Authorization"); got != "Bearer sk-very-secret" {
		t.Errorf("Authorization = %q", got)
	}
	if !strings.Contains(string(reqs[0].Body), `"temperature":1e-45`) {
		t.Errorf("temperature 0 not sent: %s", reqs[0].Body)
	}
	var seen strings.Builder
	for _, e := range logs.All() {
		seen.WriteString(e.Message)
		for k, v := range e.ContextMap() {
			seen.WriteString(k + "=" + strings.TrimSpace(strings.ReplaceAll(fmtAny(v), "\n", " ")))
		}
	}
	seen.WriteString(askErr.Error() + fmtAny(cfg) + fmtAny(&cfg))
	if strings.Contains(seen.String(), "sk-very-secret") {
		t.Errorf("the API key leaked: %s", seen.String())
	}
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, _ error) error {
		if b, _ := os.ReadFile(p); d != nil && !d.IsDir() && strings.Contains(string(b), "sk-very-secret") {
			t.Errorf("the API key is in %s", p)
		}
		return nil
	})
	if err := cfg.ResolveKey(func(string) (string, bool) { return "", false }); err == nil || !strings.Contains(err.Error(), "POOL_TEST_KEY") {
		t.Errorf("missing key: %v", err)
	}
}

func TestContextEndsRetryWait(t *testing.T) {
	s := llmtest.New(t, func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Status: 429, RetryAfter: "4"} })
	m := newTestMember(t, member("a", s.URL), nil)
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := m.Ask(ctx, ask("q"))
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
		t.Errorf("err = %v after %v; want the deadline to end the Retry-After wait", err, time.Since(start))
	}
}

func TestConfigValidate(t *testing.T) {
	cfg := DefaultConfig()
	if err := cfg.Validate(); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "no members") {
		t.Errorf("empty pool: %v", err)
	}
	bad := DefaultMemberConfig()
	bad.Name, bad.BaseURL = "x", "ftp://host"
	cfg.Members = []MemberConfig{bad, bad}
	err := cfg.Validate()
	for _, want := range []string{"no model", "not an http(s) URL", `name "x" used twice`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("validate: %v lacks %q", err, want)
		}
	}
}

func TestFaultKnobsValidate(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Members = []MemberConfig{member("a", "http://127.0.0.1:1/v1"), member("b", "http://127.0.0.1:2/v1")}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	cfg.Quorum, cfg.Deadline, cfg.Breaker = 3, -time.Second, BreakerConfig{Failures: -1}
	err := cfg.Validate()
	for _, want := range []string{"quorum is 3, need 0 (all) to 2", "deadline is -1s", "breaker.failures is -1"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("validate: %v lacks %q", err, want)
		}
	}
	cfg.Quorum, cfg.Deadline, cfg.Breaker = 2, time.Second, BreakerConfig{Failures: 3}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "breaker.cooldown is 0s") {
		t.Errorf("breaker without cool-down: %v", err)
	}
}
