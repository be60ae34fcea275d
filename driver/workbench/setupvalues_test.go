package workbench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"dialogfarm/adapter"
	"dialogfarm/driver/browser"
)

// setupPage is a chat view in a frame with the controls setup steps fill.
const setupPage = `<!doctype html><title>chat</title>
<iframe id="f" srcdoc="<input id='url'><select id='p'><option value=''>none</option><option value='s9'>s9</option></select>"></iframe>`

// TestSetupValuesGetPlaceholders runs setup steps whose values hold
// placeholders in a real browser: the page gets the session's values,
// and a step that cannot be done names its value as the adapter wrote it,
// never the secret it stands for.
func TestSetupValuesGetPlaceholders(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, setupPage)
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, p := testWindow(ctx, t, browser.BackendRod)
	w := &window{page: p}
	u := ui{Frames: []string{"iframe"}, Ready: "#url", Input: "#url"}
	a := &adapter.Adapter{Name: "setup", Extension: adapter.Extension{ID: "pub.setup"}}
	v := adapter.Vars{CaptureURL: "http://127.0.0.1:5151/K3Y/s/s9/v1", Session: "s9", Secret: "K3Y"}
	expand := func(s string) string { return a.Expand(s, v) }
	load := func() {
		t.Helper()
		if err := w.navigate(ctx, srv.URL); err != nil {
			t.Fatal(err)
		}
		if err := w.waitFor(ctx, "the chat view is loaded", js("ui", `return !!chatDoc(ui);`, jsChatDoc), u); err != nil {
			t.Fatal(err)
		}
	}
	load()
	steps := []adapter.Action{
		{Fill: &adapter.Value{Selector: "#url", Value: "{{capture_origin}}{{capture_path}}"}},
		{Select: &adapter.Value{Selector: "#p", Value: "{{session}}"}},
		{JS: `document.body.dataset.key = "{{secret}}:{{capture_port}}";`},
	}
	if err := w.runSetup(ctx, u, steps, expand); err != nil {
		t.Fatal(err)
	}
	got, err := w.eval(ctx, js("ui", `const d = chatDoc(ui).d; return [d.querySelector('#url').value, d.querySelector('#p').value, d.body.dataset.key].join(' ');`, jsChatDoc), u)
	if err != nil {
		t.Fatal(err)
	}
	if want := "http://127.0.0.1:5151/K3Y/s/s9/v1 s9 K3Y:5151"; got.Str() != want {
		t.Errorf("the page holds %q, want %q", got.Str(), want)
	}

	load()
	sctx, scancel := context.WithTimeout(ctx, 3*time.Second)
	defer scancel()
	err = w.runSetup(sctx, u, []adapter.Action{{Select: &adapter.Value{Selector: "#p", Value: "{{secret}}"}}}, expand)
	if err == nil || !strings.Contains(err.Error(), "select {{secret}} in #p") || strings.Contains(err.Error(), "K3Y") {
		t.Errorf("a step that cannot be done: %v; want it named with {{secret}}, not the secret", err)
	}
}
