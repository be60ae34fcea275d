package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAdaptersValidateSchema(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"adapters", "validate", "--live=false", "--root", "../..", "ask"}, &out, &bytes.Buffer{}); err != nil {
		t.Fatalf("bundled ask: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "schema: ok (bundled:ask, plugin dialogfarm.askplugin, triggers panel, palette, keybinding, context_menu)") {
		t.Errorf("output: %s", out.String())
	}
	src, err := os.ReadFile("../../internal/testdata/quill/adapter.yaml")
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.NewReplacer("method: type", "method: paste", "  selector: '#composer'", "  selectr: '#composer'").Replace(string(src))
	path := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	err = run(context.Background(), []string{"adapters", "validate", "--live=false", path}, &out, &bytes.Buffer{})
	if err == nil {
		t.Fatal("a broken adapter validated")
	}
	for _, want := range []string{"schema: FAIL", path + ":", "field selectr: unknown field", "field input.selector: is required", `field input.method: must be fill`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := run(context.Background(), []string{"adapters", "list"}, &out, &bytes.Buffer{}); err != nil || strings.TrimSpace(out.String()) != "ask" {
		t.Errorf("adapters list: %q %v", out.String(), err)
	}
}
