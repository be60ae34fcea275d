package configgen

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"dialogfarm/dialog"
	"dialogfarm/internal/llmtest"
	"dialogfarm/pool"
)

const echoedKey = "sk-live-ConfiggenEcho0123456789SECRET"

// echoModel is a gateway member with a key, on a server that echoes it.
func echoModel(tb testing.TB, log *zap.Logger) (*pool.Member, *llmtest.Server) {
	tb.Helper()
	srv := llmtest.New(tb, llmtest.EchoKey)
	cfg := pool.DefaultMemberConfig()
	cfg.Name, cfg.BaseURL, cfg.Model, cfg.Stream, cfg.APIKey = "writer", srv.URL, "writer", false, pool.Secret(echoedKey)
	m, err := pool.NewMember(cfg, pool.Policy{Retry: pool.RetryConfig{MaxAttempts: 3}}, nil, log)
	if err != nil {
		tb.Fatal(err)
	}
	return m, srv
}

func checkNoKey(tb testing.TB, err error, logs *observer.ObservedLogs) {
	tb.Helper()
	if err == nil {
		tb.Fatal("want an error from the failing model")
	}
	if strings.Contains(fmt.Sprintf("%v %+v", err, err), echoedKey) || !strings.Contains(err.Error(), "[redacted]") {
		tb.Errorf("error: %v", err)
	}
	for _, e := range logs.All() {
		if strings.Contains(e.Message+fmt.Sprint(e.ContextMap()), echoedKey) {
			tb.Errorf("log line holds the key: %s %v", e.Message, e.ContextMap())
		}
	}
}

// The query writer's model echoes the key in its error bodies: the
// configs stage's error and log lines never hold it.
func TestQueryWriterKeyNeverLeaks(t *testing.T) {
	core, logs := observer.New(zap.DebugLevel)
	m, srv := echoModel(t, zap.New(core))
	cfg := DefaultConfig()
	cfg.Repos, cfg.Model = []string{"testdata/repos/go"}, m
	_, err := Generate(context.Background(), testPlan([]string{"go"}, []string{"idle"}, 2), cfg, zap.New(core))
	if len(srv.Requests()) < 3 {
		t.Errorf("%d requests: want 500, 429 and 401 seen", len(srv.Requests()))
	}
	checkNoKey(t, err, logs)
}

// The follow-up writer's model echoes the key: the error that fails the
// turn (and so reaches the record) never holds it.
func TestFollowUpWriterKeyNeverLeaks(t *testing.T) {
	core, logs := observer.New(zap.DebugLevel)
	m, _ := echoModel(t, zap.New(core))
	w := NewFollowUpWriter(m)
	cfg := dialog.ChatConfig{ID: "c1", Locale: "en", Turns: []dialog.TurnSpec{{Query: "q"}},
		FollowUp: &dialog.FollowUpPolicy{Kinds: []string{"clarify"}}}
	_, err := w.Next(context.Background(), cfg, []dialog.Turn{{Query: "q", Shown: "a"}})
	checkNoKey(t, err, logs)
}
