package pool

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"dialogfarm/internal/llmtest"
)

const echoedKey = "sk-live-Echo0123456789abcdefSECRET"

// noKey fails when text holds the key.
func noKey(tb testing.TB, where, text string) {
	tb.Helper()
	if strings.Contains(text, echoedKey) {
		tb.Errorf("%s holds the API key: %s", where, text)
	}
}

// noKeyInLogs fails when any logged message or field holds the key.
func noKeyInLogs(tb testing.TB, logs *observer.ObservedLogs) {
	tb.Helper()
	for _, e := range logs.All() {
		noKey(tb, "log line "+e.Message, e.Message+" "+fmt.Sprint(e.ContextMap()))
	}
}

// An upstream that echoes the bearer token in its 500 (plain text), 429
// and 401 (JSON) bodies: the key is in no error text, unwrapped API error,
// log line, stats or pool record — streaming or not.
func TestKeyNeverLeaksFromEchoingUpstream(t *testing.T) {
	for _, stream := range []bool{true, false} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			s := llmtest.New(t, llmtest.EchoKey)
			core, logs := observer.New(zap.DebugLevel)
			cfg := DefaultConfig()
			cfg.CacheDir, cfg.Retry = "", fastRetry()
			m := member("echo", s.URL)
			m.APIKey, m.Stream = Secret(echoedKey), stream
			cfg.Members = []MemberConfig{m}
			p, err := New(cfg, zap.New(core))
			if err != nil {
				t.Fatal(err)
			}
			prop, err := p.Propose(t.Context(), ask("q"))
			if !errors.Is(err, ErrNoCandidates) {
				t.Fatalf("err = %v, want ErrNoCandidates", err)
			}
			reqs := s.Requests()
			if len(reqs) != 3 || reqs[0].Header.Get("Authorization") != "Bearer "+echoedKey {
				t.Fatalf("%d requests (want 500, 429, 401), first authorization %q", len(reqs), reqs[0].Header.Get("Authorization"))
			}
			for _, want := range []string{"500", "429", "401", "[redacted]"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not show %s", err, want)
				}
			}
			noKey(t, "error", fmt.Sprintf("%v %+v %#v", err, err, err))
			for _, miss := range prop.Missing() {
				noKey(t, "missing reason", miss.Reason)
			}
			if apiErr, ok := errors.AsType[*openai.APIError](err); !ok || apiErr.HTTPStatusCode < 400 {
				t.Errorf("the upstream's status is not reachable with errors.As: %v", apiErr)
			} else {
				noKey(t, "unwrapped API error", fmt.Sprintf("%+v %v %v", *apiErr, apiErr.Message, apiErr.Code))
			}
			for e := error(err); e != nil; e = errors.Unwrap(e) {
				noKey(t, "wrapped error", e.Error())
			}
			noKey(t, "stats", fmt.Sprintf("%+v", p.Stats()))
			noKeyInLogs(t, logs)
			if logs.Len() == 0 {
				t.Error("nothing was logged: the log check proves nothing")
			}
		})
	}
}

// A model answer that quotes the key has it cut out too.
func TestKeyCutFromAnswers(t *testing.T) {
	s := llmtest.New(t, func(r llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: "your header was " + r.Header.Get("Authorization")}
	})
	cfg := member("a", s.URL)
	cfg.APIKey = Secret(echoedKey)
	c, err := newTestMember(t, cfg, nil).Ask(t.Context(), ask("q"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Text != "your header was Bearer [redacted]" {
		t.Errorf("answer %q", c.Text)
	}
}

func TestScrubberKeepsShortKeysAndJoinedErrors(t *testing.T) {
	s := newScrubber("", "abc", Secret(echoedKey))
	if len(s) != 1 {
		t.Fatalf("scrubber holds %d keys, want only the long one", len(s))
	}
	joined := errors.Join(errors.New("first "+echoedKey), fmt.Errorf("wrapped: %w", errors.New("x"+echoedKey+"y")))
	got := s.err(joined)
	if strings.Contains(got.Error(), echoedKey) || !strings.Contains(got.Error(), "x[redacted]y") {
		t.Errorf("scrubbed %q", got)
	}
	plain := errors.New("nothing secret")
	if s.err(plain) != plain {
		t.Error("an error without the key was rewrapped")
	}
}

// The log core cuts the keys from messages, string, error and stringer
// fields, including fields added with With.
func TestRedactLogs(t *testing.T) {
	core, logs := observer.New(zap.DebugLevel)
	log := zap.New(RedactLogs(core, Secret(echoedKey), ""))
	log = log.With(zap.String("base", "k="+echoedKey))
	log.Warn("saw "+echoedKey, zap.Error(errors.New("body: "+echoedKey)), zap.Stringer("s", Secret("x")),
		zap.Int("n", 3), zap.String("ok", "plain"))
	if logs.Len() != 1 {
		t.Fatalf("%d lines", logs.Len())
	}
	e := logs.All()[0]
	noKeyInLogs(t, logs)
	if e.Message != "saw [redacted]" || e.ContextMap()["error"] != "body: [redacted]" || e.ContextMap()["base"] != "k=[redacted]" ||
		e.ContextMap()["n"] != int64(3) || e.ContextMap()["ok"] != "plain" {
		t.Errorf("logged %q %v", e.Message, e.ContextMap())
	}
	if RedactLogs(core) != core {
		t.Error("no keys: the core should be returned as is")
	}
}
