package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// TestPluginsThatCannotActivate runs doctor and adapters validate as a
// user would on the two test extensions of driver/testdata/activation:
// one that requires packages it does not ship is named before any editor
// starts; one whose activation fails in the editor is reported with the
// extension host's error lines, long before any wait's timeout.
func TestPluginsThatCannotActivate(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	const dir = "../../driver/testdata/activation/"
	cli := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := run(ctx, append(args, "--root", "../.."), &out, &bytes.Buffer{})
		return out.String(), err
	}

	out, err := cli("adapters", "validate", dir+"missing-module.yaml")
	if err == nil || !strings.Contains(out, "modules: FAIL") || !strings.Contains(out, `"udx-native" (extension.js:5), "b4a" (lib/helper.js:1)`) || strings.Contains(out, "live") {
		t.Errorf("validate missing-module: %v\n%s", err, out)
	}
	out, err = cli("doctor", "--adapter", dir+"missing-module.yaml")
	if err == nil || !strings.Contains(out, "modules      MISSING  extension dialogfarm-test.missingmodule") || strings.Contains(out, "\nactivation ") {
		t.Errorf("doctor missing-module: %v\n%s", err, out)
	}

	start := time.Now()
	out, err = cli("adapters", "validate", dir+"throws.yaml")
	if err == nil || !strings.Contains(out, "modules: ok") || !strings.Contains(out, "FAIL extension") ||
		!strings.Contains(out, "extension dialogfarm-test.throws failed to activate") || !strings.Contains(out, "Cannot find module 'udx-native'") {
		t.Errorf("validate throws: %v\n%s", err, out)
	}
	t.Logf("validate throws took %s", time.Since(start).Round(time.Millisecond))
	start = time.Now()
	out, err = cli("doctor", "--adapter", "ask", "--adapter", dir+"throws.yaml")
	if err == nil || !strings.Contains(out, "activation   ok       dialogfarm.askplugin: activated, chat view shown") ||
		!strings.Contains(out, "activation   MISSING  dialogfarm-test.throws: ") || !strings.Contains(out, "Cannot find module 'udx-native'") {
		t.Errorf("doctor ask + throws: %v\n%s", err, out)
	}
	t.Logf("doctor took %s:\n%s", time.Since(start).Round(time.Millisecond), out)
}
