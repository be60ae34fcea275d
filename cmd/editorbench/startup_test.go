package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"dialogfarm/driver"
)

func TestStartupVariantApplies(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lean.json")
	if err := os.WriteFile(path, []byte(`{"settings": {"editor.minimap.enabled": true}, "chromium": "/x/chromium-wrapper", "code_server": "/x/cs", "renderer_processes": 0}`), 0o644); err != nil {
		t.Fatal(err)
	}
	v, err := readVariant(path)
	if err != nil {
		t.Fatal(err)
	}
	if v.Name != "lean" {
		t.Errorf("name %q, want the file's base name lean", v.Name)
	}
	rc := driver.DefaultRunConfig("../..", t.TempDir())
	given := map[string]any{"askplugin.contextLines": 3}
	rc.Editor.Settings = given
	v.apply(&rc)
	if rc.Browser.Bin != "/x/chromium-wrapper" || rc.Browser.RendererProcesses != 0 || rc.Editor.Bin != "/x/cs" {
		t.Errorf("browser %q with %d renderers, want the variant's wrapper and 0", rc.Browser.Bin, rc.Browser.RendererProcesses)
	}
	if rc.Editor.Settings["editor.minimap.enabled"] != true || rc.Editor.Settings["askplugin.contextLines"] != 3 {
		t.Errorf("settings %v, want the variant's over the given ones", rc.Editor.Settings)
	}
	if len(given) != 1 {
		t.Errorf("the given settings map was written to: %v", given)
	}
	if _, err := readVariant(filepath.Join(t.TempDir(), "none.json")); err == nil || !strings.Contains(err.Error(), "-startup-alt") {
		t.Errorf("missing file: %v, want an error naming -startup-alt", err)
	}
}

func TestStartupWindowCost(t *testing.T) {
	phase := func(name string, cpu float64) startupPhase {
		return startupPhase{Name: name, CPU: cpu, ByClass: map[string]float64{"Chromium renderers": cpu}}
	}
	f := &startupFigures{Windows: 2}
	for _, start := range []float64{2, 3, 4} {
		f.Runs = append(f.Runs, startupRun{Variant: "default", Phases: []startupPhase{
			phase("start", start), phase("window 1 first", 10), phase("window 1 warm", 2), phase("window 2 first", 7), phase("window 2 warm", 2),
		}})
	}
	var b strings.Builder
	f.print(&b)
	out := b.String()
	// Window 1: start 3 (median) + 10 - 2/2 = 12; window 2: 7 - 2/2 = 6.
	for _, want := range []string{"window 1: the first window's start (start + its first dialogue less a warm one): median 12.00 CPU-s",
		"window 2: an extra window's start (its first dialogue less a warm one): median 6.00 CPU-s", "warm dialogue: median 1.00 CPU-s"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

// TestStartupWindowCostWithSettle: with -startup-settle, a window's start
// keeps its settle and loses the idle cost of the windows opened before it
// over that time (the last phase's share per window).
func TestStartupWindowCostWithSettle(t *testing.T) {
	phase := func(name string, cpu float64) startupPhase {
		return startupPhase{Name: name, CPU: cpu, ByClass: map[string]float64{"Chromium renderers": cpu}}
	}
	f := &startupFigures{Windows: 3, Settle: 15 * time.Second}
	f.Runs = []startupRun{{Variant: "default", Phases: []startupPhase{
		phase("start", 1), phase("window 1 first", 10), phase("window 1 warm", 2),
		phase("window 2 first", 7), phase("window 2 warm", 2), phase("window 3 first", 8), phase("window 3 warm", 2),
		phase(idlePhase, 0.9),
	}}}
	var b strings.Builder
	f.print(&b)
	out := b.String()
	// Window 1: 1 + 10 - 1 = 10; window 2: 7 - 1 - 0.3 = 5.7; window 3: 8 - 1 - 0.6 = 6.4.
	for _, want := range []string{"window 1: the first window's start (start + its first dialogue and 15s of settling, less a warm one and the other windows' idle cost): median 10.00",
		"window 2: an extra window's start (its first dialogue and 15s of settling, less a warm one and the other windows' idle cost): median 5.70",
		"window 3: an extra window's start (its first dialogue and 15s of settling, less a warm one and the other windows' idle cost): median 6.40"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}
