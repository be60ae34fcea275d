package driver

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"dialogfarm/adapter"
	"dialogfarm/capture"
	"dialogfarm/driver/workbench"
)

// liveRig is a run config in a temporary folder and a capture endpoint
// answering from the offline stand-in, for validate and probe.
func liveRig(t *testing.T, adapters []*adapter.Adapter) (RunConfig, *capture.Server) {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	// A short folder: Chromium's socket path has a length limit.
	out, err := os.MkdirTemp("", "df-live-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(out) })
	rc := DefaultRunConfig(root, out)
	if _, err := os.Stat(rc.Editor.Bin); err != nil {
		t.Fatalf("code-server is not installed (%v): run `make setup`", err)
	}
	rc.Adapters = adapters
	cc := capture.DefaultConfig()
	cc.Classify = adapter.Classify(adapters)
	srv, err := capture.Listen(context.Background(), cc, capture.Offline{}, nil, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	return rc, srv
}

// A broken selector and a command the plugin does not have are reported by
// field; everything else in the adapter checks out.
func TestValidateLiveNamesBrokenFields(t *testing.T) {
	root, _ := filepath.Abs("..")
	q := quillAdapter(t, root)
	q.Input.Selector = "#composr"
	q.Commands["/summarize"] = adapter.Command{Title: "Quill: Summarize"}
	rc, srv := liveRig(t, []*adapter.Adapter{q})
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	checks, err := ValidateLive(ctx, rc, srv, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	failed := map[string]string{}
	for _, c := range checks {
		t.Logf("%-32s ok=%v %s", c.Field, c.OK, c.Detail)
		if !c.OK {
			failed[c.Field] = c.Detail
		}
	}
	for _, f := range []string{"input.selector", "commands./summarize.title"} {
		if _, ok := failed[f]; !ok {
			t.Errorf("%s not reported as failed", f)
		}
	}
	for f, d := range failed {
		// The answer check types into the broken input too.
		if f != "input.selector" && f != "commands./summarize.title" && f != "answer" && f != "new_chat.button" {
			t.Errorf("%s failed: %s", f, d)
		}
	}
	for _, f := range []string{"extension", "open.activity_bar", "commands./explain.title", "commands./explain.context_menu", "open.command.keybinding", "setup"} {
		if !slices.ContainsFunc(checks, func(c workbench.Check) bool { return c.Field == f && c.OK }) {
			t.Errorf("%s was not checked ok", f)
		}
	}
}

// The probe finds the input and the send button of both plugins, and the
// requests a test message makes them send: Ask on Enter; Quill only after
// Ctrl+Enter and its provider picked, followed by its title request.
func TestProbeFindsInputAndSend(t *testing.T) {
	root, _ := filepath.Abs("..")
	q := quillAdapter(t, root)
	cases := []struct {
		name, ext         string
		settings          map[string]any
		input, send, sent string
		requests          int
		setup             *adapter.Value
	}{
		{"ask", filepath.Join(root, "plugin"), map[string]any{"askplugin.baseUrl": "{{capture_url}}"},
			"#ask-input", "#ask-send", "key enter", 1, nil},
		{"quill", q.Path(q.Extension.VSIX), map[string]any{"quill.providers": []any{
			map[string]any{"name": "dead", "baseUrl": "http://127.0.0.1:9/v1", "model": "x"},
			map[string]any{"name": "farm", "baseUrl": "{{capture_url}}", "model": "quill-model"}}},
			"#composer", "#go", "key ctrl+enter", 2, &adapter.Value{Selector: "#provider", Value: "farm"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rc, srv := liveRig(t, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			rep, err := Probe(ctx, rc, ProbeConfig{Extension: c.ext, Settings: c.settings, Message: "probe says hi"}, srv, zaptest.NewLogger(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("sent %q, setup %+v, elements %+v, notes %q", rep.Sent, rep.Setup, rep.Elements, rep.Notes)
			for _, ex := range rep.Requests {
				t.Logf("request: %s", ex.Request)
			}
			var in, send bool
			for _, e := range rep.Elements {
				in = in || (e.Selector == c.input && (e.Kind == "textarea" || e.Kind == "contenteditable"))
				send = send || (e.Selector == c.send && e.Kind == "button")
			}
			if !in || !send {
				t.Errorf("input %s found %v, send %s found %v in %+v", c.input, in, c.send, send, rep.Elements)
			}
			if !strings.HasPrefix(rep.Sent, c.sent) || len(rep.Requests) != c.requests {
				t.Errorf("sent by %q with %d requests, want %q and %d", rep.Sent, len(rep.Requests), c.sent, c.requests)
			}
			if c.setup != nil && !slices.ContainsFunc(rep.Setup, func(a adapter.Action) bool { return a.Select != nil && *a.Select == *c.setup }) {
				t.Errorf("setup %+v, want %+v", rep.Setup, c.setup)
			}
			for _, ex := range rep.Requests {
				if !strings.Contains(string(ex.Request), "probe says hi") {
					t.Errorf("request without the test message: %s", ex.Request)
				}
			}
		})
	}
}
