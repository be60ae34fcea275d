package driver

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"dialogfarm/capture"
	"dialogfarm/internal/llmtest"
)

// startRealRunner starts a Runner on the real code-server and Chromium
// from `make setup`, with the reference plugin answered by a fake model
// that takes delay per answer; edit adjusts the run config first. The
// runner stops when the test ends.
func startRealRunner(ctx context.Context, t *testing.T, delay time.Duration, edit func(*RunConfig)) *Runner {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	rc := DefaultRunConfig(root, t.TempDir())
	if _, err := os.Stat(rc.Editor.Bin); err != nil {
		t.Fatalf("code-server is not installed (%v): run `make setup`", err)
	}
	if edit != nil {
		edit(&rc)
	}
	log := zaptest.NewLogger(t)
	model := llmtest.New(t, func(r llmtest.Request) llmtest.Reply {
		rep := e2eAnswer(r)
		rep.Delay = delay
		return rep
	})
	srv := listenCapture(ctx, t, capture.DefaultConfig(), oneModel(t, model.URL, "test-model", log), nil, log)
	rc.PluginVersion = pluginVersion(t, root)
	r := NewRunner(rc, srv, nil, log)
	setFakeKeys(t)
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)
	return r
}
