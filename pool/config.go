package pool

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"dialogfarm/internal/bounds"
)

// Secret is an API key. It prints, formats and encodes as "[redacted]", so
// a config logged or written by mistake does not leak it.
type Secret string

const redacted = "[redacted]"

// String is "[redacted]" (or "" for no key).
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return redacted
}

// GoString is String, for %#v.
func (s Secret) GoString() string { return s.String() }

// MarshalText encodes the redaction, never the key.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// MemberConfig is one pool member: an OpenAI-compatible endpoint and model.
type MemberConfig struct {
	// Name identifies the member in candidates, logs and the cache key.
	Name string `yaml:"name" json:"name"`
	// BaseURL is the API root ending in /v1, e.g. https://api.openai.com/v1
	// or http://127.0.0.1:8000/v1 for a local vLLM server.
	BaseURL string `yaml:"base_url" json:"base_url"`
	Model   string `yaml:"model" json:"model"`
	// APIKeyEnv names the environment variable holding the key; "" sends
	// no key (local servers). The key itself is never in a config file.
	APIKeyEnv string `yaml:"api_key_env" json:"api_key_env,omitempty"`
	// APIKey is filled by ResolveKeys from APIKeyEnv; never written.
	APIKey Secret `yaml:"-" json:"-"`
	// AllowKeyEnv sends the variable APIKeyEnv names even though it does
	// not look like a credential of the member's host, and AllowInsecure
	// sends the key over plain http to a host other than loopback (see
	// keys.go). The CLI takes both from a config file only, never from an
	// environment variable or --set (setting:"file").
	AllowKeyEnv   bool `yaml:"allow_key_env" json:"allow_key_env,omitempty" setting:"file"`
	AllowInsecure bool `yaml:"allow_insecure" json:"allow_insecure,omitempty" setting:"file"`
	// Temperature replaces the captured request's temperature; nil keeps
	// the request's.
	Temperature *float32 `yaml:"temperature" json:"temperature,omitempty"`
	// MaxTokens bounds the answer; 0 leaves it to the server.
	MaxTokens int `yaml:"max_tokens" json:"max_tokens,omitempty"`
	// MaxConcurrency bounds this member's calls in flight across all turns.
	MaxConcurrency int `yaml:"max_concurrency" json:"max_concurrency"`
	// FarmMaxConcurrency, when > 0, bounds the calls in flight to this
	// model with this key across every process of a farm (see
	// Policy.Limits); a process alone makes no more than that either.
	FarmMaxConcurrency int `yaml:"farm_max_concurrency" json:"farm_max_concurrency,omitempty"`
	// Timeout bounds one attempt; a timed-out attempt is retried.
	Timeout time.Duration `yaml:"timeout" json:"timeout"`
	// RPM, when > 0, spaces this member's calls at least 60s/RPM apart.
	RPM int `yaml:"rpm" json:"rpm,omitempty"`
	// TPM, when > 0, bounds the tokens of this member's calls a minute
	// (prompt and max_tokens, booked before each call; a longer answer's
	// tokens when it is in), up to a minute's at once.
	TPM int `yaml:"tpm" json:"tpm,omitempty"`
	// InputPrice and OutputPrice are USD per million prompt and completion
	// tokens, for the estimated cost of each candidate.
	InputPrice  float64 `yaml:"input_price" json:"input_price,omitempty"`
	OutputPrice float64 `yaml:"output_price" json:"output_price,omitempty"`
	// Stream asks for an SSE stream (with usage in the last chunk) rather
	// than one JSON document; a stream cut before its end is retried.
	Stream bool `yaml:"stream" json:"stream"`
}

// DefaultMemberConfig is what a member gets for the fields a config leaves
// out: 4 calls in flight, 2 minute attempts, streaming.
func DefaultMemberConfig() MemberConfig {
	return MemberConfig{MaxConcurrency: 4, Timeout: 2 * time.Minute, Stream: true}
}

// RetryConfig is the retry policy for transient failures: 429 (honouring
// Retry-After), 408, 409, 425, 5xx, timeouts, refused or reset connections
// and streams cut before their end.
type RetryConfig struct {
	// MaxAttempts counts the first call; 1 means no retry.
	MaxAttempts int `yaml:"max_attempts" json:"max_attempts"`
	// BaseDelay is the first backoff; it doubles each retry up to MaxDelay,
	// and each wait is drawn uniformly from [delay/2, delay] (jitter).
	BaseDelay time.Duration `yaml:"base_delay" json:"base_delay"`
	MaxDelay  time.Duration `yaml:"max_delay" json:"max_delay"`
	// MaxRetryAfter caps how long a server's Retry-After is honoured; a
	// longer one fails the attempt at once.
	MaxRetryAfter time.Duration `yaml:"max_retry_after" json:"max_retry_after"`
}

// DefaultRetryConfig: 4 attempts, backoff from 1s to 30s, Retry-After
// honoured up to 2 minutes.
func DefaultRetryConfig() RetryConfig {
	return RetryConfig{MaxAttempts: 4, BaseDelay: time.Second, MaxDelay: 30 * time.Second, MaxRetryAfter: 2 * time.Minute}
}

// Config is the candidate pool.
type Config struct {
	Members []MemberConfig `yaml:"members" json:"members"`
	Retry   RetryConfig    `yaml:"retry" json:"retry"`
	// Concurrency bounds the members asked at once for one request; 0
	// asks all of them at once.
	Concurrency int `yaml:"concurrency" json:"concurrency"`
	// CacheDir holds the response cache; "" turns it off. The CLI resolves
	// a relative path against the run folder.
	CacheDir string `yaml:"cache_dir" json:"cache_dir"`
	// FailingAfter is how many requests in a row a member must fail before
	// it is reported as failing (an error log, and Stats.Failing).
	FailingAfter int `yaml:"failing_after" json:"failing_after"`
	// Quorum is how many members must answer before the pool stops waiting
	// for the rest; 0 waits for all of them.
	Quorum int `yaml:"quorum" json:"quorum"`
	// Deadline, when > 0, is how long the pool waits for its quorum: once
	// it has passed, the pool answers with the candidates it has (it still
	// waits for the first one if there is none). Members cut off by the
	// quorum or the deadline are recorded as late.
	Deadline time.Duration `yaml:"deadline" json:"deadline"`
	// Breaker is every member's circuit breaker (the judge model's too).
	Breaker BreakerConfig `yaml:"breaker" json:"breaker"`
}

// Policy is the retry and breaker policy the config gives each member.
func (c Config) Policy() Policy { return Policy{Retry: c.Retry, Breaker: c.Breaker} }

// DefaultConfig is a pool with no members yet, the default retry policy, a
// cache in "cache" (under the run folder), failing members reported after
// 3 failed requests in a row, every member waited for (no quorum, no
// deadline) and the default circuit breaker.
func DefaultConfig() Config {
	return Config{Retry: DefaultRetryConfig(), CacheDir: "cache", FailingAfter: 3, Breaker: DefaultBreakerConfig()}
}

// ErrConfig marks an invalid pool configuration.
var ErrConfig = errors.New("invalid pool config")

// Validate checks the config; every problem is reported.
func (c Config) Validate() error {
	var errs []error
	if len(c.Members) == 0 {
		errs = append(errs, errors.New("no members"))
	}
	seen := map[string]bool{}
	for i, m := range c.Members {
		if err := m.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("member %d: %w", i, err))
		}
		if seen[m.Name] {
			errs = append(errs, fmt.Errorf("member %d: name %q used twice", i, m.Name))
		}
		seen[m.Name] = true
	}
	if c.Quorum > len(c.Members) {
		errs = append(errs, fmt.Errorf("quorum is %d, need 0 (all) to %d (the members)", c.Quorum, len(c.Members)))
	}
	errs = append(errs, bounds.Check(c.rangeFields()...), c.Breaker.Validate())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return nil
}

// Day is the longest duration any setting of the pool takes.
const Day = 24 * time.Hour

// ValidateRanges checks every number of the config, its members' included,
// against its range (NaN and infinities are out of every range), without
// asking for the fields a complete config needs. The ranges are:
//
//	retry.max_attempts 1 to 100; retry.base_delay 0 to retry.max_delay;
//	retry.max_delay and retry.max_retry_after 0 to 24h; concurrency 0 to
//	1024 (0: all at once); failing_after 0 to 1000 (0: never reported);
//	deadline 0 to 24h; breaker.failures 0 to 1000 (0: off);
//	breaker.cooldown up to 24h (more than 0 with the breaker on); quorum 0
//	to 1024 (and at most the members, checked by Validate).
//
// A member's ranges are those of MemberConfig.ValidateRanges.
func (c Config) ValidateRanges() error {
	errs := []error{bounds.Check(c.rangeFields()...), c.Breaker.Validate()}
	for i, m := range c.Members {
		fs := m.rangeFields()
		for j := range fs {
			fs[j].Name = fmt.Sprintf("members.%d.%s", i, fs[j].Name)
		}
		errs = append(errs, bounds.Check(fs...))
	}
	return errors.Join(errs...)
}

func (c Config) rangeFields() []bounds.Field {
	return []bounds.Field{
		bounds.Int("retry.max_attempts", c.Retry.MaxAttempts, 1, 100),
		bounds.Duration("retry.max_delay", c.Retry.MaxDelay, 0, Day),
		bounds.Duration("retry.base_delay", c.Retry.BaseDelay, 0, max(c.Retry.MaxDelay, 0)),
		bounds.Duration("retry.max_retry_after", c.Retry.MaxRetryAfter, 0, Day),
		bounds.Int("concurrency", c.Concurrency, 0, 1024),
		bounds.Int("failing_after", c.FailingAfter, 0, 1000),
		bounds.Int("quorum", c.Quorum, 0, 1024),
		bounds.Duration("deadline", c.Deadline, 0, Day),
	}
}

// Validate checks one member's config: its name, model and URL, its
// numbers' ranges, and the rules its key must pass (keys.go).
func (m MemberConfig) Validate() error {
	var errs []error
	if m.Name == "" {
		errs = append(errs, errors.New("no name"))
	}
	if m.Model == "" {
		errs = append(errs, errors.New("no model"))
	}
	if u, err := url.Parse(m.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("base_url %q is not an http(s) URL", redactURL(m.BaseURL)))
	} else {
		errs = append(errs, m.keyPolicy())
	}
	errs = append(errs, m.ValidateRanges())
	if err := errors.Join(errs...); m.Name != "" && err != nil {
		return fmt.Errorf("%s: %w", m.Name, err)
	}
	return errors.Join(errs...)
}

// ValidateRanges checks the member's numbers: max_concurrency 1 to 1024,
// farm_max_concurrency 0 to 100000 (0: no bound across the farm), timeout 1ms to 24h, rpm 0 to 1000000 and tpm 0 to 1000000000 (0: no limit), max_tokens 0 to
// 10000000 (0: the server's), temperature 0 to 2, input_price and
// output_price 0 to 10000 (USD per million tokens).
func (m MemberConfig) ValidateRanges() error { return bounds.Check(m.rangeFields()...) }

func (m MemberConfig) rangeFields() []bounds.Field {
	fs := []bounds.Field{
		bounds.Int("max_concurrency", m.MaxConcurrency, 1, 1024),
		bounds.Int("farm_max_concurrency", m.FarmMaxConcurrency, 0, 100_000),
		bounds.Duration("timeout", m.Timeout, time.Millisecond, Day),
		bounds.Int("rpm", m.RPM, 0, 1_000_000),
		bounds.Int("tpm", m.TPM, 0, 1_000_000_000),
		bounds.Int("max_tokens", m.MaxTokens, 0, 10_000_000),
		bounds.Float("input_price", m.InputPrice, 0, 10_000),
		bounds.Float("output_price", m.OutputPrice, 0, 10_000),
	}
	if m.Temperature != nil {
		fs = append(fs, bounds.Float("temperature", *m.Temperature, 0, 2))
	}
	return fs
}

// ResolveKeys fills each member's APIKey from the variable its APIKeyEnv
// names, using lookup (os.LookupEnv in the CLI). A named variable that is
// unset or empty is an error naming the variable, never a key.
func (c *Config) ResolveKeys(lookup func(string) (string, bool)) error {
	var errs []error
	for i := range c.Members {
		if err := c.Members[i].ResolveKey(lookup); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// ResolveKey fills APIKey from the variable APIKeyEnv names, once the
// name and the transport pass the key rules (keys.go): a refused variable
// is not even read.
func (m *MemberConfig) ResolveKey(lookup func(string) (string, bool)) error {
	if m.APIKeyEnv == "" {
		return nil
	}
	if err := m.keyPolicy(); err != nil {
		return fmt.Errorf("member %s: %w", m.Name, err)
	}
	v, ok := lookup(m.APIKeyEnv)
	if !ok || strings.TrimSpace(v) == "" {
		return fmt.Errorf("member %s: environment variable %s (api_key_env) is unset or empty", m.Name, m.APIKeyEnv)
	}
	m.APIKey = Secret(strings.TrimSpace(v))
	return nil
}

// redactURL drops credentials from a URL for logs and errors.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable URL)"
	}
	return u.Redacted()
}
