package analyst

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"dialogfarm/internal/llmtest"
)

// The classifier's model echoes the key in its 500, 429 and 401 bodies:
// the error and the log lines never hold it.
func TestClassifierKeyNeverLeaks(t *testing.T) {
	const key = "sk-live-AnalystEcho0123456789SECRET"
	srv := llmtest.New(t, llmtest.EchoKey)
	t.Setenv("TEST_ANALYST_ECHO_KEY", key)
	core, logs := observer.New(zap.DebugLevel)
	cfg := DefaultClassifyConfig()
	cfg.Model = testModel(t, srv.URL, "labeller", "TEST_ANALYST_ECHO_KEY", 3)
	cls, err := NewLLMClassifier(cfg, zap.New(core))
	if err != nil {
		t.Fatal(err)
	}
	_, err = cls.Classify(context.Background(), []Item{{Query: "x"}})
	if err == nil || len(srv.Requests()) != 3 {
		t.Fatalf("err %v after %d requests: want an error after 500, 429, 401", err, len(srv.Requests()))
	}
	if strings.Contains(fmt.Sprintf("%v %+v", err, err), key) || !strings.Contains(err.Error(), "[redacted]") {
		t.Errorf("error: %v", err)
	}
	for _, e := range logs.All() {
		if strings.Contains(e.Message+fmt.Sprint(e.ContextMap()), key) {
			t.Errorf("log line holds the key: %s %v", e.Message, e.ContextMap())
		}
	}
}
