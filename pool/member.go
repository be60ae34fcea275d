package pool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"go.uber.org/zap"

	"dialogfarm/dialog"
)

// Request is what a member is asked: the captured request's messages,
// exactly as the plugin sent them, and its temperature.
type Request struct {
	Messages    []dialog.Message
	Temperature *float32
}

// Member is one OpenAI-compatible model of the pool. It bounds its calls in
// flight, spaces them by its RPM limit, retries transient failures, counts
// tokens and cost, and answers from the cache when it can. Its methods are
// safe for concurrent use.
type Member struct {
	cfg    MemberConfig
	retry  RetryConfig
	where  string // BaseURL without credentials
	client *openai.Client
	slots  chan struct{}
	rate   *limiter
	cache  *Cache
	log    *zap.Logger

	mu    sync.Mutex
	stats Stats
}

// NewMember builds a member; cache may be nil.
func NewMember(cfg MemberConfig, retry RetryConfig, cache *Cache, log *zap.Logger) (*Member, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	oc := openai.DefaultConfig(string(cfg.APIKey))
	oc.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	oc.HTTPClient = headerCatcher{client: &http.Client{}}
	where := redactURL(cfg.BaseURL)
	return &Member{
		cfg: cfg, retry: retry, where: where,
		client: openai.NewClientWithConfig(oc),
		slots:  make(chan struct{}, cfg.MaxConcurrency),
		rate:   newLimiter(cfg.RPM),
		cache:  cache,
		log:    log.With(zap.String("member", cfg.Name), zap.String("model", cfg.Model), zap.String("base_url", where)),
		stats:  Stats{Member: cfg.Name, Model: cfg.Model},
	}, nil
}

// Name is the member's configured name.
func (m *Member) Name() string { return m.cfg.Name }

// Complete asks the member with msgs and no temperature of the request's
// (the member's own applies). It makes Member a judge.Completer.
func (m *Member) Complete(ctx context.Context, msgs []dialog.Message) (dialog.Candidate, error) {
	return m.Ask(ctx, Request{Messages: msgs})
}

// Ask returns the member's candidate answer to req: from the cache if this
// exact call was made before, otherwise from the model, retrying transient
// failures. A failure is a *MemberError.
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
	c, attempts, err := m.attempts(ctx, creq)
	if err != nil {
		m.record(func(s *Stats) { s.Failures++; s.LastError = err.Error() })
		return dialog.Candidate{}, &MemberError{Member: m.cfg.Name, Attempts: attempts, Err: err}
	}
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
// attempts are used up or ctx ends.
func (m *Member) attempts(ctx context.Context, creq openai.ChatCompletionRequest) (dialog.Candidate, int, error) {
	var errs []error
	for n := 1; ; n++ {
		if err := m.rate.wait(ctx); err != nil {
			return dialog.Candidate{}, n - 1, errors.Join(append(errs, err)...)
		}
		actx, slot := withHeaderSlot(ctx)
		c, err := m.once(actx, creq)
		m.record(func(s *Stats) { s.Calls++ })
		if err == nil {
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

// once makes one call within the member's timeout.
func (m *Member) once(ctx context.Context, creq openai.ChatCompletionRequest) (dialog.Candidate, error) {
	ctx, cancel := context.WithTimeout(ctx, m.cfg.Timeout)
	defer cancel()
	start := time.Now()
	var (
		c   dialog.Candidate
		err error
	)
	if creq.Stream {
		c, err = m.stream(ctx, creq)
	} else {
		c, err = m.complete(ctx, creq)
	}
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
			err = fmt.Errorf("timed out after %v: %w", m.cfg.Timeout, err)
		}
		return c, err
	}
	c.Member, c.Seconds = m.cfg.Name, time.Since(start).Seconds()
	if c.Model == "" {
		c.Model = m.cfg.Model
	}
	if c.PromptTokens == 0 && c.CompletionTokens == 0 {
		msgs := make([]dialog.Message, 0, len(creq.Messages))
		for _, msg := range creq.Messages {
			msgs = append(msgs, dialog.Message{Role: msg.Role, Content: msg.Content})
		}
		c.PromptTokens, c.CompletionTokens, c.TokensCounted = countPrompt(msgs), CountTokens(c.Text), true
	}
	c.CostUSD = m.cfg.cost(c.PromptTokens, c.CompletionTokens)
	return c, nil
}

func (m *Member) complete(ctx context.Context, creq openai.ChatCompletionRequest) (dialog.Candidate, error) {
	resp, err := m.client.CreateChatCompletion(ctx, creq)
	if err != nil {
		return dialog.Candidate{}, err
	}
	if len(resp.Choices) == 0 {
		return dialog.Candidate{}, errors.New("the answer has no choices")
	}
	return dialog.Candidate{
		Model: resp.Model, Text: resp.Choices[0].Message.Content,
		PromptTokens: resp.Usage.PromptTokens, CompletionTokens: resp.Usage.CompletionTokens,
	}, nil
}

// stream reads an SSE answer. A stream that ends without a finish reason
// was cut off: ErrStreamDropped.
func (m *Member) stream(ctx context.Context, creq openai.ChatCompletionRequest) (dialog.Candidate, error) {
	s, err := m.client.CreateChatCompletionStream(ctx, creq)
	if err != nil {
		return dialog.Candidate{}, err
	}
	defer s.Close()
	var (
		c        dialog.Candidate
		text     strings.Builder
		finished bool
	)
	for {
		chunk, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				err = fmt.Errorf("%w: %w", ErrStreamDropped, err)
			}
			return dialog.Candidate{}, err
		}
		if chunk.Model != "" {
			c.Model = chunk.Model
		}
		if chunk.Usage != nil {
			c.PromptTokens, c.CompletionTokens = chunk.Usage.PromptTokens, chunk.Usage.CompletionTokens
		}
		if len(chunk.Choices) > 0 {
			text.WriteString(chunk.Choices[0].Delta.Content)
			if chunk.Choices[0].FinishReason != "" {
				finished = true
			}
		}
	}
	if !finished {
		return dialog.Candidate{}, ErrStreamDropped
	}
	c.Text = text.String()
	return c, nil
}

// Stats is a member's accounting since it was built.
type Stats struct {
	Member string `json:"member"`
	Model  string `json:"model"`
	// Calls counts HTTP calls made (retries included); Retries the waits
	// between them; Answers the candidates returned (cache hits included);
	// Failures the requests that got no candidate.
	Calls     int `json:"calls"`
	Retries   int `json:"retries"`
	Answers   int `json:"answers"`
	Failures  int `json:"failures"`
	CacheHits int `json:"cache_hits"`
	// PromptTokens and CompletionTokens count the calls made (cache hits
	// excluded).
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// CostUSD is the estimated spend: cache hits cost nothing.
	CostUSD float64 `json:"cost_usd"`
	// FailingStreak counts the pool requests failed in a row; Failing is
	// set once it reaches Config.FailingAfter.
	FailingStreak int    `json:"failing_streak"`
	Failing       bool   `json:"failing"`
	LastError     string `json:"last_error,omitempty"`
}

func (m *Member) record(f func(*Stats)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f(&m.stats)
}

// Stats returns the member's accounting.
func (m *Member) Stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stats
}
