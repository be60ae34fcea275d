// Package chatmodel is the small OpenAI-compatible chat client the
// front-half stages share: the analyst's classifier, the configs' query
// writer and the user simulator that writes follow-ups. One request, one
// answer, transient failures retried with exponential backoff.
package chatmodel

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Config names an OpenAI-compatible chat model. The API key is read
// from the environment variable APIKeyEnv when the client is built; it is
// never logged or written anywhere.
type Config struct {
	// BaseURL ends in /v1; empty means OpenAI's.
	BaseURL string
	// Model is the model name; empty means no model is configured.
	Model string
	// APIKeyEnv names the environment variable holding the API key; the
	// key may be empty for local endpoints that need none.
	APIKeyEnv   string
	Temperature float32
	// Timeout bounds one request; MaxRetries retries 429s, 5xx and network
	// errors with exponential backoff from RetryBackoff.
	Timeout      time.Duration
	MaxRetries   int
	RetryBackoff time.Duration
}

// DefaultConfig configures no model (Model is empty) with the usual
// defaults for the rest: key in OPENAI_API_KEY, temperature 0, 60 s per
// request, 3 retries from 500 ms.
func DefaultConfig() Config {
	return Config{APIKeyEnv: "OPENAI_API_KEY", Timeout: 60 * time.Second, MaxRetries: 3,
		RetryBackoff: 500 * time.Millisecond}
}

// Enabled reports whether a model is configured.
func (m Config) Enabled() bool { return m.Model != "" }

// Client asks one configured model.
type Client struct {
	cfg    Config
	client *openai.Client
}

// New builds a client; the API key is read from cfg.APIKeyEnv now.
func New(cfg Config) *Client {
	key := ""
	if cfg.APIKeyEnv != "" {
		key = os.Getenv(cfg.APIKeyEnv)
	}
	oc := openai.DefaultConfig(key)
	if cfg.BaseURL != "" {
		oc.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	}
	oc.HTTPClient = &http.Client{}
	return &Client{cfg: cfg, client: openai.NewClientWithConfig(oc)}
}

// Complete sends one chat request and returns the answer's text, retrying
// transient failures.
func (c *Client) Complete(ctx context.Context, messages []openai.ChatCompletionMessage) (string, error) {
	req := openai.ChatCompletionRequest{Model: c.cfg.Model, Temperature: c.cfg.Temperature, Messages: messages}
	backoff := c.cfg.RetryBackoff
	for attempt := 0; ; attempt++ {
		rctx, cancel := ctx, context.CancelFunc(func() {})
		if c.cfg.Timeout > 0 {
			rctx, cancel = context.WithTimeout(ctx, c.cfg.Timeout)
		}
		resp, err := c.client.CreateChatCompletion(rctx, req)
		cancel()
		if err == nil {
			if len(resp.Choices) == 0 {
				return "", fmt.Errorf("model %s: answer has no choices", c.cfg.Model)
			}
			return resp.Choices[0].Message.Content, nil
		}
		if attempt >= c.cfg.MaxRetries || !transient(ctx, err) {
			return "", fmt.Errorf("model %s: %w", c.cfg.Model, err)
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("model %s: %w", c.cfg.Model, ctx.Err())
		case <-time.After(backoff):
		}
		backoff *= 2
	}
}

func transient(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	var api *openai.APIError
	if errors.As(err, &api) {
		return api.HTTPStatusCode == http.StatusTooManyRequests || api.HTTPStatusCode >= 500
	}
	var req *openai.RequestError
	if errors.As(err, &req) {
		return req.HTTPStatusCode == http.StatusTooManyRequests || req.HTTPStatusCode >= 500
	}
	return true // network errors, timeouts of a single attempt
}
