package driver

import (
	"strings"
	"testing"

	"dialogfarm/driver/browser"
)

// TestRecycleReason: a window is due by its dialogue count or its heap,
// each bound off at 0, and the reason says which bound it passed.
func TestRecycleReason(t *testing.T) {
	cases := []struct {
		cfg  Recycle
		use  windowUse
		want string
	}{
		{Recycle{}, windowUse{dialogues: 1000, heapMiB: 5000}, ""},
		{Recycle{After: 3}, windowUse{dialogues: 2}, ""},
		{Recycle{After: 3}, windowUse{dialogues: 3}, "drove 3 dialogues (recycle after 3)"},
		{Recycle{HeapMiB: 512}, windowUse{dialogues: 9, heapMiB: 512}, ""},
		{Recycle{HeapMiB: 512}, windowUse{dialogues: 9, heapMiB: 700}, "heap is 700 MiB (recycle above 512 MiB)"},
		{DefaultRecycle(), windowUse{dialogues: 100000, heapMiB: 90}, ""},
	}
	for _, c := range cases {
		got := c.use.reason(c.cfg)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%+v with %+v: reason %q, want %q", c.use, c.cfg, got, c.want)
		}
	}
	if err := (Recycle{After: -1}).Validate(); err == nil {
		t.Error("a negative count was accepted")
	}
	if err := DefaultRecycle().Validate(); err != nil {
		t.Errorf("default: %v", err)
	}
}

// TestWindowsPerRenderer: windows sharing a capped number of renderer
// processes each count their share of its heap; uncapped, a window has
// its process to itself.
func TestWindowsPerRenderer(t *testing.T) {
	for _, c := range []struct{ sessions, processes, want int }{
		{sessions: 1, processes: 1, want: 1},
		{sessions: 4, processes: 1, want: 4},
		{sessions: 8, processes: 3, want: 3},
		{sessions: 8, processes: 0, want: 1},
		{sessions: 2, processes: 8, want: 1},
	} {
		r := &Runner{cfg: RunConfig{Sessions: c.sessions, Browser: browser.Config{RendererProcesses: c.processes}}}
		if got := r.windowsPerRenderer(); got != c.want {
			t.Errorf("%d sessions on %d renderer processes: %d windows per process, want %d", c.sessions, c.processes, got, c.want)
		}
		r.sizeRenderers()
		if want := map[bool]int{true: c.want * heapMiBPerWindow}[c.want > 1]; r.cfg.Browser.RendererHeapMiB != want {
			t.Errorf("%d sessions on %d renderer processes: heap limit %d MiB, want %d (0: Chromium's)", c.sessions, c.processes, r.cfg.Browser.RendererHeapMiB, want)
		}
	}
	// The default config on any machine: at least one process per 8
	// windows, so 16 windows never share one main thread.
	for _, sessions := range []int{8, 16, 64} {
		r := &Runner{cfg: RunConfig{Sessions: sessions, Browser: browser.DefaultConfig()}}
		r.sizeRenderers()
		if got, least := r.cfg.Browser.RendererProcesses, (sessions+7)/8; got < least {
			t.Errorf("%d sessions, default browser config: %d renderer processes, want at least %d", sessions, got, least)
		}
		if per := r.windowsPerRenderer(); r.cfg.Browser.RendererHeapMiB != map[bool]int{true: per * heapMiBPerWindow}[per > 1] {
			t.Errorf("%d sessions: heap limit %d MiB for %d windows per process", sessions, r.cfg.Browser.RendererHeapMiB, per)
		}
	}
}
