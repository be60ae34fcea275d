package capture

import (
	"dialogfarm/dialog"

	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"go.uber.org/zap"
)

// OpenAIConfig configures the OpenAI responder.
type OpenAIConfig struct {
	// BaseURL is the OpenAI-compatible API root, ending in /v1.
	BaseURL string
	// Model is the upstream model; "" forwards the request's model.
	Model string
	// APIKeyEnv names the environment variable holding the API key; ""
	// sends no key (local model servers).
	APIKeyEnv string
	// Temperature, when set, replaces the request's temperature.
	Temperature *float32
	// MaxTokens bounds the answer (sent as max_tokens); 0 leaves it to the
	// model.
	MaxTokens int
	// Timeout bounds one upstream call; 0 means only the request's context.
	Timeout time.Duration
}

// DefaultOpenAIConfig asks gpt-4o-mini at api.openai.com with the key in
// OPENAI_API_KEY, within two minutes.
func DefaultOpenAIConfig() OpenAIConfig {
	return OpenAIConfig{
		BaseURL:   "https://api.openai.com/v1",
		Model:     "gpt-4o-mini",
		APIKeyEnv: "OPENAI_API_KEY",
		Timeout:   2 * time.Minute,
	}
}

// ErrNoAPIKey is returned by NewOpenAI when the key's variable is unset or
// empty.
var ErrNoAPIKey = errors.New("no API key")

// OpenAI answers with one upstream OpenAI-compatible model, forwarding the
// captured messages as they are. Upstream HTTP errors stay reachable with
// errors.As(err, **openai.APIError).
type OpenAI struct {
	cfg    OpenAIConfig
	where  string // BaseURL without credentials, for errors and logs
	key    string
	client *openai.Client
	log    *zap.Logger
}

var _ Responder = (*OpenAI)(nil)

// NewOpenAI reads the API key from the variable cfg.APIKeyEnv names and
// returns the responder; log may be nil. The key never appears in logs or
// errors.
func NewOpenAI(cfg OpenAIConfig, log *zap.Logger) (*OpenAI, error) {
	if log == nil {
		log = zap.NewNop()
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("openai responder: base URL %q is not an http(s) URL", cfg.BaseURL)
	}
	key := ""
	if cfg.APIKeyEnv != "" {
		v, ok := os.LookupEnv(cfg.APIKeyEnv)
		switch {
		case !ok:
			return nil, fmt.Errorf("openai responder: environment variable %s is not set: %w", cfg.APIKeyEnv, ErrNoAPIKey)
		case strings.TrimSpace(v) == "":
			return nil, fmt.Errorf("openai responder: environment variable %s is empty: %w", cfg.APIKeyEnv, ErrNoAPIKey)
		}
		key = strings.TrimSpace(v)
	}
	oc := openai.DefaultConfig(key)
	oc.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	oc.HTTPClient = &http.Client{}
	return &OpenAI{cfg: cfg, where: u.Redacted(), key: key, client: openai.NewClientWithConfig(oc), log: log}, nil
}

// Name is "openai".
func (o *OpenAI) Name() string { return "openai" }

// Candidates makes the upstream model's answer the only candidate of a
// pool, so that its answers are judged (and can be exported) like a pool's.
func (o *OpenAI) Candidates(ctx context.Context, msgs []dialog.Message, temperature *float32) ([]dialog.Candidate, error) {
	return soleCandidate(ctx, o, "openai", msgs, temperature)
}

// Respond asks the upstream model, non-streaming, with the request's
// messages (roles and contents exactly) and the configured model, or the
// request's if none is configured.
func (o *OpenAI) Respond(ctx context.Context, req Request) (Answer, error) {
	model := o.cfg.Model
	if model == "" {
		model = req.Model
	}
	ans := Answer{Responder: o.Name(), Model: model}
	if model == "" {
		return ans, fmt.Errorf("ask upstream model at %s: no model configured and the request names none", o.where)
	}
	if o.cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.cfg.Timeout)
		defer cancel()
	}
	creq := openai.ChatCompletionRequest{
		Model:     model,
		Messages:  make([]openai.ChatCompletionMessage, 0, len(req.Messages)),
		MaxTokens: o.cfg.MaxTokens,
	}
	for _, m := range req.Messages {
		creq.Messages = append(creq.Messages, openai.ChatCompletionMessage{Role: m.Role, Content: m.Content})
	}
	if t := o.temperature(req); t != nil {
		creq.Temperature = *t
		if creq.Temperature == 0 {
			// go-openai omits a zero temperature; the smallest float32 is
			// sent and means 0 to every server.
			creq.Temperature = math.SmallestNonzeroFloat32
		}
	}

	start := time.Now()
	resp, err := o.client.CreateChatCompletion(ctx, creq)
	if err == nil && len(resp.Choices) == 0 {
		err = errors.New("the answer has no choices")
	}
	if err != nil {
		err = o.redact(fmt.Errorf("ask upstream model %s at %s: %w", model, o.where, err))
		o.log.Warn("upstream model failed", zap.String("model", model), zap.String("base_url", o.where),
			zap.Duration("took", time.Since(start)), zap.Error(err))
		return ans, err
	}
	if resp.Model != "" {
		ans.Model = resp.Model
	}
	ans.Text = resp.Choices[0].Message.Content
	o.log.Debug("upstream model answered", zap.String("model", ans.Model), zap.String("base_url", o.where),
		zap.Duration("took", time.Since(start)), zap.Int("prompt_tokens", resp.Usage.PromptTokens),
		zap.Int("completion_tokens", resp.Usage.CompletionTokens))
	return ans, nil
}

func (o *OpenAI) temperature(req Request) *float32 {
	if o.cfg.Temperature != nil {
		return o.cfg.Temperature
	}
	return req.Temperature
}

// redact hides the API key should an upstream error message echo it.
func (o *OpenAI) redact(err error) error {
	if o.key == "" || !strings.Contains(err.Error(), o.key) {
		return err
	}
	return &redactedError{err: err, key: o.key}
}

// redactedError is err with the key cut out of its message; errors.Is and
// errors.As still see err.
type redactedError struct {
	err error
	key string
}

func (e *redactedError) Error() string {
	return strings.ReplaceAll(e.err.Error(), e.key, "[redacted]")
}

func (e *redactedError) Unwrap() error { return e.err }
