package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"

	"dialogfarm/driver/internal/procenv"
	"dialogfarm/internal/runfiles"
)

// Config says how to launch Chromium.
type Config struct {
	// Bin is the Chromium binary. dialogfarm never downloads a browser.
	Bin string
	// Dir holds the browser's profile; a fresh folder per run.
	Dir string
	// Headless is false only for debugging on a desktop.
	Headless bool
	// Width and Height size each simulator window.
	Width, Height int
	// Backend is the library that speaks the DevTools protocol.
	Backend Backend
	// RendererProcesses is how many renderer processes the windows
	// share, each about as many as the others (windowGroups; 0: a
	// process per window, as Chromium does by default). All of a
	// window's frames then run in one shared V8 heap and main thread with
	// the other windows', which cost less CPU and memory than a process
	// each: editorbench, 1 and 4 sims x 12 configs, 2 s model, a process
	// per window against one for all (with the V8 flags in flags.go), one
	// run each: all 4 windows warm after 84 -> 47 s, 4 sims vs 1 over the
	// whole run 2.22x -> 2.82x, steady CPU-s per dialogue at 4 sims 2.14
	// -> 1.65, RSS per extra simulator 591 -> 406 MiB.
	RendererProcesses int
	// WindowsPerRenderer, when set, raises RendererProcesses to one
	// process per this many windows (see Renderers). Windows of one
	// process take turns at their steps on its main thread, and with
	// many windows the turns queue: editorbench -standing, 16 windows on
	// 2 cores, 10 s model, 64 configs, 4 alternated pairs (load 1.7-4.5):
	// one process 30.2 / 31.8 / 32.6 / 32.7 dialogues/min, median
	// dialogue 25.6-28.5 s (20.8 s at one window); two processes 34.1 /
	// 35.0 / 34.2 / 34.2, 22.6-23.0 s; RSS per extra window 340-353 ->
	// 348-378 MiB (PSS 229-239 -> 231-256).
	WindowsPerRenderer int
	// RendererHeapMiB is the V8 heap limit of each renderer process (0:
	// Chromium's, which low-end device mode sets to 272 MiB: enough for
	// one window, while 8 windows sharing it stalled the process's main
	// thread for over a minute in editorbench). A run (driver.Runner)
	// sets it from its windows per process.
	RendererHeapMiB int
	// OptimizingJIT lets V8 optimise hot scripts with Maglev and
	// TurboFan. Off by default (jsFlags): a workbench runs mostly code
	// it runs a few times per dialogue. A plugin whose webview runs
	// heavy scripts of its own (say, re-rendering Markdown for every
	// streamed chunk) may need it on.
	OptimizingJIT bool
	// JSFlags are more V8 switches for the renderers, after dialogfarm's
	// own (where both set one, these win); see ParseJSFlags.
	JSFlags []string
}

// DefaultConfig uses Debian's chromium package, driven with go-rod,
// with a renderer process per two CPU cores (at least one) and at least
// one per 8 windows: a process's windows take turns on its one main
// thread, so a machine with many cores or windows needs several
// (measured on 2 cores only).
// The window is 1024x768: every step fits (Quick Open, the context menu,
// the chat view beside the editor), and headless Chromium rasterises and
// composites in software, so a smaller window costs less CPU per frame
// (editorbench: the GPU process used 28% less per dialogue than at
// 1400x900).
func DefaultConfig() Config {
	return Config{Bin: "/usr/bin/chromium", Headless: true, Width: 1024, Height: 768, Backend: BackendRod,
		RendererProcesses: max(1, runtime.NumCPU()/2), WindowsPerRenderer: 8}
}

// Renderers is how many renderer processes the given number of windows
// share: RendererProcesses (0: a process per window), raised to one per
// WindowsPerRenderer windows when that is set.
func (c Config) Renderers(windows int) int {
	p := c.RendererProcesses
	if p > 0 && c.WindowsPerRenderer > 0 {
		p = max(p, (windows+c.WindowsPerRenderer-1)/c.WindowsPerRenderer)
	}
	return p
}

// Backend names the library that drives Chromium. Both launch the same
// binary with the same switches and environment; the driver's steps do not
// depend on the choice.
type Backend string

const (
	// BackendRod is go-rod, over a websocket on a random loopback port.
	BackendRod Backend = "rod"
	// BackendChromedp is chromedp, over a pipe (no DevTools port).
	BackendChromedp Backend = "chromedp"
)

// ParseBackend checks a backend name.
func ParseBackend(s string) (Backend, error) {
	switch b := Backend(s); b {
	case BackendRod, BackendChromedp:
		return b, nil
	}
	return "", fmt.Errorf("unknown browser backend %q (use %s or %s)", s, BackendRod, BackendChromedp)
}

// jsFlag is one V8 switch as --js-flags takes it: no space or quote.
var jsFlag = regexp.MustCompile(`^--[a-z0-9][a-z0-9_-]*(=[^\s"'\\]+)?$`)

// ParseJSFlags reads V8 switches separated by spaces (for JSFlags), each
// --name or --name=value.
func ParseJSFlags(s string) ([]string, error) {
	fs := strings.Fields(s)
	for _, f := range fs {
		if !jsFlag.MatchString(f) {
			return nil, fmt.Errorf("V8 switch %q: want --name or --name=value, separated by spaces", f)
		}
	}
	return fs, nil
}

// browser is a Chromium process as the driver uses it, whichever library
// speaks the DevTools protocol to it.
type browser interface {
	// NewWindow opens a separate window (not a background tab: background
	// tabs are throttled) with focus emulation on, so that several
	// simulators can each believe they have focus, and JavaScript dialogs
	// accepted as they open. Without beside, the window opens as a tab
	// opened by hand does, in a browsing instance of its own, and
	// Chromium gives it a renderer process of its own. Beside a window of
	// the same browser, it opens from that window's page (openBesideJS),
	// in its browsing instance, where one site's pages share one process:
	// the window loads the workbench in the process beside's workbench
	// runs in.
	NewWindow(ctx context.Context, beside Page) (Page, error)
	// StartupDone reports whether Chromium has ended its start-up (see
	// endStartup).
	StartupDone(ctx context.Context) (bool, error)
	// OpenApart opens url in a window of a browser context of its own
	// (no cookies or storage shared), which Chromium gives a renderer
	// process of its own whatever the limit on them, and returns the
	// function that closes the window and its context.
	OpenApart(ctx context.Context, url string) (closeIt func(), err error)
	// PID is the browser's main process id.
	PID() int
	// Version is the browser's product string, e.g. "Chrome/156.0.8078.108".
	Version() string
	// Close ends the browser; the profile stays in the run folder.
	Close()
}

// Page is one browser window as the workbench's steps use it: the few
// DevTools calls a person's actions and the driver's observations need.
// Both backends implement it.
type Page interface {
	// Eval calls the JS function expression fn with args (JSON values) in
	// the top document, awaits the promise it returns and gives its value
	// as JSON ("null" for undefined).
	Eval(ctx context.Context, fn string, args ...any) (json.RawMessage, error)
	// Navigate starts loading url; it does not wait for the load.
	Navigate(ctx context.Context, url string) error
	// Key dispatches one key event.
	Key(ctx context.Context, e KeyEvent) error
	// InsertText types text as a paste or an IME would.
	InsertText(ctx context.Context, text string) error
	// Mouse dispatches one mouse event.
	Mouse(ctx context.Context, e MouseEvent) error
	// Screenshot returns a PNG of the window.
	Screenshot(ctx context.Context) ([]byte, error)
	// HeapUsed is the JavaScript heap in use of the window's isolate, in
	// bytes (DevTools Runtime.getHeapUsage: exact, unlike the page's own
	// performance.memory, which is bucketed and cached for minutes).
	HeapUsed(ctx context.Context) (float64, error)
	// Close closes the window.
	Close() error
}

// MouseButton is "left" or "right".
type MouseButton string

// The buttons a window's steps press.
const (
	MouseLeft  MouseButton = "left"
	MouseRight MouseButton = "right"
)

// MouseEvent is one Input.dispatchMouseEvent of the DevTools protocol.
type MouseEvent struct {
	// Type is "mouseMoved", "mousePressed" or "mouseReleased".
	Type string
	X, Y float64
	// Button is the button that changed ("none" for a move); Buttons is
	// the mask of the buttons held after the event (1 left, 2 right).
	Button     MouseButton
	Buttons    int
	ClickCount int
	// Modifiers are the modifier keys held (the key events' bits: 8 Shift).
	Modifiers int
}

// KeyEvent is one Input.dispatchKeyEvent of the DevTools protocol.
type KeyEvent struct {
	// Type is "keyDown" (a key that types text), "rawKeyDown" or "keyUp".
	Type      string
	Modifiers int
	Key, Code string
	Text      string
	KeyCode   int
	Location  int
}

// prepareLaunch checks the browser binary and makes what every backend
// launches it with: the profile folder and the allow-listed environment.
func prepareLaunch(cfg Config) (profile string, env []string, err error) {
	if _, err := os.Stat(cfg.Bin); err != nil {
		return "", nil, fmt.Errorf("launch chromium: %w (run `make setup`)", err)
	}
	profile = filepath.Join(cfg.Dir, "chromium-profile")
	if err := runfiles.MkdirAll(profile); err != nil {
		return "", nil, fmt.Errorf("launch chromium: %w", err)
	}
	if env, err = procenv.Isolated(cfg.Dir, !cfg.Headless); err != nil {
		return "", nil, fmt.Errorf("launch chromium: %w", err)
	}
	return profile, env, nil
}

// NavigatedAway reports the DevTools errors of a script whose document a
// navigation replaced (or whose context was not yet there) while it ran,
// with either backend: a check that failed so is worth making again in
// the new document.
func NavigatedAway(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "Execution context was destroyed") ||
		strings.Contains(msg, "Cannot find context with specified id") ||
		strings.Contains(msg, "Cannot find default execution context") ||
		strings.Contains(msg, "Inspected target navigated or closed")
}

// openBesideJS opens a blank window of w x h from the page it runs in,
// for NewWindow beside that page. It runs as a user's gesture, which
// popup blocking lets through.
func openBesideJS(w, h int) string {
	return fmt.Sprintf(`void window.open("about:blank", "_blank", "popup,width=%d,height=%d")`, w, h)
}
