package browser

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"
)

// Chromium is a launched browser, driven with either backend, and its
// start-up, which may still be going on (see endStartup).
type Chromium struct {
	b       browser
	startup *startup
	windows *windowGroups // nil: a renderer process per window
}

// NewWindow opens a separate window (not a background tab: background
// tabs are throttled) with focus emulation on, so that several
// simulators can each believe they have focus, and JavaScript dialogs
// accepted as they open. With Config.RendererProcesses set, the window
// joins the process that has the fewest windows (windowGroups);
// otherwise it gets a process of its own.
func (c *Chromium) NewWindow(ctx context.Context) (Page, error) {
	if c.windows == nil {
		return c.b.NewWindow(ctx, nil)
	}
	return c.windows.open(ctx, c.b)
}

// NewLoneWindow opens a window as NewWindow does, but always in a renderer
// process of its own, outside Config.RendererProcesses' groups: a window
// that must not share the main thread of the windows that drive the
// dialogues (a check beside them).
func (c *Chromium) NewLoneWindow(ctx context.Context) (Page, error) {
	return c.b.NewWindow(ctx, nil)
}

// PID is the browser's main process id (the leader of its process group).
func (c *Chromium) PID() int { return c.b.PID() }

// Version is the browser's product string, e.g. "Chrome/156.0.8078.108".
func (c *Chromium) Version() string { return c.b.Version() }

// WaitStartup returns once Chromium's start-up has ended (or endStartup
// stopped waiting for it), or ctx ends. A window's webviews wait for that
// end, so a window waits for it before its first steps; it may load
// meanwhile.
func (c *Chromium) WaitStartup(ctx context.Context) error { return c.startup.wait(ctx) }

// Close ends the browser, and returns once endStartup's watch has ended
// too: nothing of the browser's is left running or logging. The profile
// stays in its folder.
func (c *Chromium) Close() {
	c.b.Close()
	<-c.startup.ended
}

// Launch starts Chromium with the configured backend (go-rod when none
// is set) and sets about ending its start-up (endStartup), without
// waiting for that: windows may load meanwhile, and their webviews wait
// for it (WaitStartup).
func Launch(ctx context.Context, cfg Config, log *zap.Logger) (*Chromium, error) {
	var b browser
	switch cfg.Backend {
	case BackendRod, "":
		rb, err := LaunchRod(ctx, cfg, log)
		if err != nil {
			return nil, err
		}
		b = rb
	case BackendChromedp:
		cb, err := launchChromedp(ctx, cfg, log)
		if err != nil {
			return nil, err
		}
		b = cb
	default:
		_, err := ParseBackend(string(cfg.Backend))
		return nil, fmt.Errorf("launch chromium: %w", err)
	}
	s, err := endStartup(ctx, b, log)
	if err != nil {
		b.Close()
		return nil, err
	}
	return &Chromium{b: b, startup: s, windows: newWindowGroups(cfg.RendererProcesses, log)}, nil
}

// startup is Chromium's start-up as the windows see it: ended is closed
// once it has ended, or once endStartup stopped waiting for it.
type startup struct{ ended chan struct{} }

// wait returns when the start-up has ended (see startup) or ctx ends.
func (s *startup) wait(ctx context.Context) error {
	select {
	case <-s.ended:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("wait for chromium's start-up to end: %w", ctx.Err())
	}
}

// endStartup opens a blank page that ends Chromium's start-up and watches
// for that end in the background. Until then Chromium holds back its
// after-start-up tasks, and service worker register and update jobs are
// such tasks: every webview waits for one before it shows anything.
// Start-up ends once a visible page has loaded and then idled (about 2 s
// after it loads). The windows share renderer processes
// (Config.RendererProcesses), so a blank page among them idled only
// once every window had loaded: without an end of start-up first, in about
// a third of editorbench's 4-simulator runs the four windows' first chat
// views waited 9-25 s for their webviews, all released in the same
// millisecond as Chromium's deferred start-up tasks (a Chromium trace:
// ServiceWorkerContainerHost::Register completed 11.4 s after the call,
// right after after_startup_task_utils' MaybeSignalStartupComplete). So
// launching waited for the end, ~2 s, before any window loaded. The blank
// page now opens in a browser context of its own, whose renderer process
// only it uses: it idles while the windows load (a page busy in a loop in
// the default context: start-up ended 3.4 s after launch with the blank
// page apart, never with it beside the busy one), and the windows wait
// only before their first steps (WaitStartup), by when it has ended.
// The page and its context close when the start-up has ended.
func endStartup(ctx context.Context, b browser, log *zap.Logger) (*startup, error) {
	closeApart, err := b.OpenApart(ctx, "data:text/html,")
	if err != nil {
		return nil, fmt.Errorf("open the start-up window: %w", err)
	}
	s := &startup{ended: make(chan struct{})}
	go func() {
		defer close(s.ended)
		defer closeApart()
		start := time.Now()
		// Its own bound, not the caller's: the browser outlives the
		// launch. A browser closed meanwhile ends it with an error.
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), startupWait)
		defer cancel()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			done, err := b.StartupDone(wctx)
			switch {
			case err == nil && done:
				log.Debug("chromium start-up ended", zap.Duration("after", time.Since(start)))
				return
			case wctx.Err() != nil:
				// Chromium ends it itself after 3 minutes at the
				// latest; the windows work meanwhile, their webviews
				// only later.
				log.Warn("chromium's start-up has not ended; webviews may wait for their service worker", zap.Duration("waited", startupWait))
				return
			case err != nil:
				log.Debug("stopped watching chromium's start-up", zap.Error(err))
				return
			}
			select {
			case <-tick.C:
			case <-wctx.Done():
			}
		}
	}()
	return s, nil
}

// startupWait bounds endStartup's wait: a blank page ends Chromium's
// start-up within a second or two of loading on an idle machine.
const startupWait = 20 * time.Second

// closeApartWait bounds the closing of a window OpenApart opened.
const closeApartWait = 5 * time.Second

// startupHistogram is the histogram Chromium records when its start-up
// ends (with the reason: a visible page loaded and idled, or its 3-minute
// fail-safe).
const startupHistogram = "Startup.BrowserStartupCompleteReason"
