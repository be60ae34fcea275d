package pool

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/sony/gobreaker/v2"
	"go.uber.org/zap"

	"dialogfarm/dialog"
)

// Request is what a member is asked: the captured request's messages,
// exactly as the plugin sent them, and its temperature.
type Request struct {
	Messages    []dialog.Message
	Temperature *float32
}

// Policy is what every call of a member follows besides the member's own
// config: the retry policy and the circuit breaker.
type Policy struct {
	Retry   RetryConfig
	Breaker BreakerConfig
	// Limits, when set, makes the limiters of each member's rpm and tpm
	// and the slots of its farm_max_concurrency (see Limits); nil gives
	// each member token buckets and slots of its own.
	Limits Limits
}

// DefaultPolicy is DefaultRetryConfig and DefaultBreakerConfig.
func DefaultPolicy() Policy {
	return Policy{Retry: DefaultRetryConfig(), Breaker: DefaultBreakerConfig()}
}

// Member is one OpenAI-compatible model: a pool member, the judge model or
// a stage's model. It bounds its calls in flight, keeps its RPM and TPM
// limits, retries transient failures, stops calling for a cool-down after
// failing too often (circuit breaker), counts tokens and cost, answers from
// the cache when it can, and cuts its API key out of every error, log line
// and answer. Its methods are safe for concurrent use.
type Member struct {
	cfg      MemberConfig
	retry    RetryConfig
	where    string // BaseURL without credentials
	client   *openai.Client
	slots    chan struct{}
	calls    Limiter // nil: no rpm limit
	tokens   Limiter // nil: no tpm limit
	shared   Slots   // nil: no farm_max_concurrency across processes
	breaker  *gobreaker.CircuitBreaker[dialog.Candidate]
	cooldown time.Duration
	scrub    scrubber
	cache    *Cache
	log      *zap.Logger

	mu    sync.Mutex
	stats Stats
}

// NewMember builds a member; cache may be nil.
func NewMember(cfg MemberConfig, policy Policy, cache *Cache, log *zap.Logger) (*Member, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if err := policy.Breaker.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	oc := openai.DefaultConfig(string(cfg.APIKey))
	oc.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	oc.HTTPClient = headerCatcher{client: &http.Client{}}
	where := redactURL(cfg.BaseURL)
	m := &Member{
		cfg: cfg, retry: policy.Retry, where: where,
		client: openai.NewClientWithConfig(oc),
		slots:  make(chan struct{}, cfg.ownSlots()),
		calls:  policy.limiter(cfg.CallLimit()),
		tokens: policy.limiter(cfg.TokenLimit()),
		shared: policy.slots(cfg.FarmConcurrency()),
		scrub:  newScrubber(cfg.APIKey),
		cache:  cache,
		log:    log.With(zap.String("member", cfg.Name), zap.String("model", cfg.Model), zap.String("base_url", where)),
		stats:  Stats{Member: cfg.Name, Model: cfg.Model, Circuit: gobreaker.StateClosed.String()},
	}
	m.breaker = m.newBreaker(policy.Breaker)
	// Which variable goes to which host, by name only: the first line a
	// command that calls models prints for each of them.
	m.log.Info("key: " + cfg.KeyRoute())
	return m, nil
}

// Name is the member's configured name.
func (m *Member) Name() string { return m.cfg.Name }

// Model is the member's configured model.
func (m *Member) Model() string { return m.cfg.Model }

// Complete asks the member with msgs and no temperature of the request's
// (the member's own applies). It makes Member the judge's, the analyst's
// and configgen's model.
func (m *Member) Complete(ctx context.Context, msgs []dialog.Message) (dialog.Candidate, error) {
	return m.Ask(ctx, Request{Messages: msgs})
}

// Ask returns the member's candidate answer to req: from the cache if this
// exact call was made before, otherwise from the model, retrying transient
// failures. A failure is a *MemberError; while the member's circuit is
// open it fails at once with ErrCircuitOpen.
func (m *Member) Ask(ctx context.Context, req Request) (dialog.Candidate, error) {
	creq := m.request(req)
	key := ""
	if m.cache != nil {
		var err error
		if key, err = cacheKey(m.cfg.Name, m.cfg.BaseURL, creq); err != nil {
			return dialog.Candidate{}, &MemberError{Member: m.cfg.Name, Err: err}
		}
		c, ok, err := m.cache.Get(key)
		if err != nil {
			m.log.Warn("response cache unreadable; asking the model", zap.Error(err))
		}
		if ok {
			c.Cached = true
			m.record(func(s *Stats) { s.CacheHits++; s.Answers++ })
			return c, nil
		}
	}
	select {
	case m.slots <- struct{}{}:
		defer func() { <-m.slots }()
	case <-ctx.Done():
		return dialog.Candidate{}, &MemberError{Member: m.cfg.Name, Err: ctx.Err()}
	}
	attempts := 0
	c, err := m.breaker.Execute(func() (dialog.Candidate, error) {
		c, n, err := m.attempts(ctx, creq)
		attempts = n
		if err != nil && ctx.Err() != nil {
			return c, &cancelled{err}
		}
		return c, err
	})
	if err != nil {
		if errors.Is(err, gobreaker.ErrOpenState) || errors.Is(err, gobreaker.ErrTooManyRequests) {
			m.record(func(s *Stats) { s.Skipped++ })
			return dialog.Candidate{}, &MemberError{Member: m.cfg.Name, Err: m.openError()}
		}
		if ctx.Err() == nil { // a request its caller gave up on says nothing about the member
			m.record(func(s *Stats) { s.Failures++; s.LastError = err.Error() })
		}
		return dialog.Candidate{}, &MemberError{Member: m.cfg.Name, Attempts: attempts, Err: err}
	}
	c.Text = m.scrub.text(c.Text)
	m.record(func(s *Stats) {
		s.Answers++
		s.PromptTokens += c.PromptTokens
		s.CompletionTokens += c.CompletionTokens
		s.CostUSD += c.CostUSD
	})
	if m.cache != nil {
		if err := m.cache.Put(key, c); err != nil {
			m.log.Warn("response cache not written", zap.Error(err))
		}
	}
	return c, nil
}

// request is the chat completion request the member sends for req.
func (m *Member) request(req Request) openai.ChatCompletionRequest {
	creq := openai.ChatCompletionRequest{
		Model:     m.cfg.Model,
		Messages:  make([]openai.ChatCompletionMessage, 0, len(req.Messages)),
		MaxTokens: m.cfg.MaxTokens,
		Stream:    m.cfg.Stream,
	}
	if m.cfg.Stream {
		creq.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	}
	for _, msg := range req.Messages {
		creq.Messages = append(creq.Messages, openai.ChatCompletionMessage{Role: msg.Role, Content: msg.Content})
	}
	t := req.Temperature
	if m.cfg.Temperature != nil {
		t = m.cfg.Temperature
	}
	if t != nil {
		creq.Temperature = *t
		if *t == 0 {
			// go-openai omits a zero temperature; the smallest float32 is
			// sent instead and means 0 to every server.
			creq.Temperature = math.SmallestNonzeroFloat32
		}
	}
	return creq
}

// attempts calls the model until it answers, the error is permanent, the
// attempts are used up or ctx ends. Every error it returns or logs has the
// key cut out.
func (m *Member) attempts(ctx context.Context, creq openai.ChatCompletionRequest) (dialog.Candidate, int, error) {
	var errs []error
	booked := m.tokensAhead(creq)
	for n := 1; ; n++ {
		if err := m.waitLimits(ctx, booked); err != nil {
			return dialog.Candidate{}, n - 1, errors.Join(append(errs, err)...)
		}
		release, err := m.waitSlot(ctx)
		if err != nil {
			return dialog.Candidate{}, n - 1, errors.Join(append(errs, err)...)
		}
		actx, slot := withHeaderSlot(ctx)
		c, err := m.once(actx, creq)
		release()
		err = m.scrub.err(err)
		m.record(func(s *Stats) { s.Calls++ })
		if err == nil {
			if used := c.PromptTokens + c.CompletionTokens; m.tokens != nil && used > booked {
				m.tokens.Book(used - booked)
			}
			return c, n, nil
		}
		if ctx.Err() != nil {
			return dialog.Candidate{}, n, errors.Join(append(errs, ctx.Err())...)
		}
		errs = append(errs, fmt.Errorf("attempt %d: %w", n, err))
		if !retryable(err) || n >= m.retry.MaxAttempts {
			return dialog.Candidate{}, n, errors.Join(errs...)
		}
		wait := m.retry.backoff(n)
		if h := slot.get(); h != nil {
			if d, ok := retryAfter(h, time.Now()); ok {
				if d > m.retry.MaxRetryAfter {
					errs = append(errs, fmt.Errorf("Retry-After %v is longer than max_retry_after %v", d, m.retry.MaxRetryAfter))
					return dialog.Candidate{}, n, errors.Join(errs...)
				}
				wait = d
			}
		}
		m.record(func(s *Stats) { s.Retries++ })
		m.log.Info("retrying", zap.Int("attempt", n), zap.Duration("wait", wait), zap.Error(err))
		if err := sleep(ctx, wait); err != nil {
			return dialog.Candidate{}, n, errors.Join(append(errs, err)...)
		}
	}
}

// tokensAhead is what a call of creq is booked under the member's tpm
// before it goes, as providers count it: the prompt's tokens and the
// answer's max_tokens; an answer beyond that is booked when it is in.
func (m *Member) tokensAhead(creq openai.ChatCompletionRequest) int {
	if m.tokens == nil {
		return 0
	}
	msgs := make([]dialog.Message, 0, len(creq.Messages))
	for _, msg := range creq.Messages {
		msgs = append(msgs, dialog.Message{Role: msg.Role, Content: msg.Content})
	}
	return countPrompt(msgs) + creq.MaxTokens
}

// waitSlot waits for one of the calls in flight farm_max_concurrency
// allows across the farm (the wait counts as a limit's) and returns the
// function that frees it.
func (m *Member) waitSlot(ctx context.Context) (func(), error) {
	if m.shared == nil {
		return func() {}, nil
	}
	start := time.Now()
	release, err := m.shared.Acquire(ctx)
	waited := time.Since(start).Seconds()
	m.record(func(s *Stats) { s.LimitWait += waited })
	if err != nil {
		return nil, fmt.Errorf("wait for farm_max_concurrency: %w", err)
	}
	return release, nil
}

// waitLimits waits until the member's rpm and tpm limits let a call of
// tokens go.
func (m *Member) waitLimits(ctx context.Context, tokens int) error {
	if m.calls == nil && m.tokens == nil {
		return nil
	}
	start := time.Now()
	defer func() {
		waited := time.Since(start).Seconds()
		m.record(func(s *Stats) { s.LimitWait += waited })
	}()
	if m.calls != nil {
		if err := m.calls.WaitN(ctx, 1); err != nil {
			return fmt.Errorf("wait for the rpm limit: %w", err)
		}
	}
	if m.tokens != nil {
		if err := m.tokens.WaitN(ctx, tokens); err != nil {
			return fmt.Errorf("wait for the tpm limit: %w", err)
		}
	}
	return nil
}
