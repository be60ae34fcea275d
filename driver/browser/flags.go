package browser

import (
	"fmt"
	"strconv"
	"strings"
)

// chromiumFlag is one Chromium command-line switch; an empty Value is a bare
// switch ("--no-first-run").
type chromiumFlag struct{ Name, Value string }

// chromiumFlags are the switches every browser backend launches Chromium
// with, beside the ones a backend sets itself (headless, profile folder,
// DevTools endpoint): off the network, no first-run UI, and what cuts the
// cost of drawing a workbench.
func chromiumFlags(cfg Config) []chromiumFlag {
	flags := []chromiumFlag{
		{Name: "remote-debugging-address", Value: "127.0.0.1"},
		{Name: "disable-gpu"},
		{Name: "disable-quic"},
		{Name: "no-first-run"},
		{Name: "disable-background-networking"},
		{Name: "disable-component-update"},
		{Name: "disable-sync"},
		{Name: "disable-default-apps"},
		// The WebUI omnibox popup is a page Chromium preloads in a
		// renderer of its own for the address bar's dropdown, which a
		// headless browser never shows: 155 MiB and about a CPU-second
		// per browser.
		// AutofillServerCommunication: autofill asks Google's server
		// about every form it sees (a plugin's chat view, a textarea
		// and a button, is one), and offline each query fails and is
		// tried again later. A Chromium trace of one window 20 s into a
		// wait for the model: 21 HTTP transactions to
		// content-autofill.googleapis.com and 12 DNS look-ups, in the
		// browser process, its thread pool and the network service.
		// BackgroundResourceFetch fetches scripts off the main thread
		// and streams them to V8, which then compiles the 19 MB
		// workbench.js module again in every window: the module code
		// cache Chromium writes on the second window's load was never
		// read. Without it, from the third window on the module comes
		// from that cache. Traces of three window loads in one browser:
		// the third window's renderer thread pool 5.2 -> 3.0 CPU-s
		// (workbench.js: a 1.7 s background compile -> a 0.19 s read of
		// the 12.6 MB cache on the main thread).
		{Name: "disable-features", Value: "Translate,MediaRouter,OptimizationHints," +
			"WebUIOmniboxPopup,WebUIOmniboxAimPopup,WebUIOmniboxFullPopup," +
			"AutofillServerCommunication,BackgroundResourceFetch"},
		{Name: "window-size", Value: fmt.Sprintf("%d,%d", cfg.Width, cfg.Height)},
		// Pages see prefers-reduced-motion: reduce, so that a plugin's
		// webview that honours it (the reference plugin stops its caret
		// blinking) repaints nothing while a window waits for the model.
		{Name: "force-prefers-reduced-motion"},
		{Name: "disable-smooth-scrolling"},
		// Chromium's low-end device mode: among others, 16-bit raster
		// tiles and smaller caches. editorbench: the GPU process's CPU per
		// dialogue halved and one window's Chromium RSS fell by ~150 MiB,
		// with every step still working.
		{Name: "enable-low-end-device-mode"},
		// V8's memory reducer starts full garbage collections a few
		// seconds after a page stops allocating, which is what a window
		// waiting for the model does: its GC threads were most of what
		// that window cost (one window, 20 s into a 40 s answer: renderer
		// 0.037 -> 0.011 CPU-s/s, code-server + Chromium 0.058 -> 0.029).
		// Collections that allocation needs still run.
		// --no-optimize-for-size undoes the heap sizing low-end device
		// mode asks of V8 (small young generation, early full GCs), which
		// several windows sharing one renderer's heap would outgrow; the
		// figures in Config.RendererProcesses were measured with it.
		// --no-maglev --no-turbofan (unless Config.OptimizingJIT)
		// leave V8 its interpreter and baseline compiler: a workbench
		// runs mostly code it runs a few times per dialogue, and on 2
		// cores the optimising compilers' background jobs cost more than
		// the faster code saved. editorbench 1 sim x 24 configs, 2 s
		// model, binaries alternated (1-minute load 0.1-1.6):
		// code-server + Chromium CPU-s per dialogue steady 1.56 / 1.63
		// -> 1.32 / 1.43 / 1.45, whole run 2.78 / 2.65 -> 2.27 / 2.50 /
		// 2.30, UI time per dialogue 0.80 / 0.87 -> 0.72 / 0.75 / 0.78 s;
		// without TurboFan alone 1.51, without Maglev alone 1.67. 4 sims
		// x 12: 28.1 -> 30.2 dialogues/min over the whole run, steady
		// CPU-s per dialogue 1.65 -> 1.36.
		// --heap-growing-percent=200 lets the heap grow to 3x what a full
		// collection left before the next one. V8 picks the factor from
		// how fast the page allocates against how fast it collects; a
		// window that mostly waits for the model allocates slowly, so it
		// got V8's smallest factor, ~1.1: a full collection (marking the
		// whole ~60 MB heap on a background thread) every ~7 MB
		// allocated. Chromium traces, 24 s of 1 sim x 12 warm (2 s
		// model): 2-3 full collections and 1.6-1.9 s of background
		// marking -> none; the first 30 s of 4 sims loading their
		// windows: 3 collections, 3.7 s of marking -> 2, 1.9 s. Peak RSS
		// at 4 sims: Chromium 1582 -> 1536 MiB; each window's heap keeps
		// its limit (RendererHeapMiB), near which V8 grows it less.
		// 100 (2x) held ~9 MiB less per window at the peak of fresh
		// 16-window runs (whose windows share two renderers' heaps:
		// Chromium 2892/2897 against 3038/3000 MiB), but the renderers
		// spent more on each window's start (-startup, 3 alternated
		// runs: window 3 2.94 against 2.43 CPU-s).
		{Name: "js-flags", Value: jsFlags(cfg)},
		// No --renderer-process-limit: Config.RendererProcesses is kept
		// by how windows open (windowGroups), which a cap would undo.
	}
	return flags
}

// jsFlags are V8's switches (see chromiumFlags), with the heap limit when
// the config sets one, and the config's own last.
func jsFlags(cfg Config) string {
	f := "--no-memory-reducer --no-optimize-for-size --heap-growing-percent=200"
	if !cfg.OptimizingJIT {
		f += " --no-maglev --no-turbofan"
	}
	if cfg.RendererHeapMiB > 0 {
		f += " --max-old-space-size=" + strconv.Itoa(cfg.RendererHeapMiB)
	}
	if len(cfg.JSFlags) > 0 {
		f += " " + strings.Join(cfg.JSFlags, " ")
	}
	return f
}
