package driver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/launcher"
	"github.com/go-rod/rod/lib/launcher/flags"
	"github.com/go-rod/rod/lib/proto"
	"go.uber.org/zap"

	"dialogfarm/internal/runfiles"
)

// BrowserConfig says how to launch Chromium.
type BrowserConfig struct {
	// Bin is the Chromium binary. dialogfarm never downloads a browser.
	Bin string
	// Dir holds the browser's profile; a fresh folder per run.
	Dir string
	// Headless is false only for debugging on a desktop.
	Headless bool
	// Width and Height size each simulator window.
	Width, Height int
}

// DefaultBrowserConfig uses Debian's chromium package.
func DefaultBrowserConfig() BrowserConfig {
	return BrowserConfig{Bin: "/usr/bin/chromium", Headless: true, Width: 1400, Height: 900}
}

// Browser is a Chromium process controlled through the DevTools protocol.
type Browser struct {
	cfg      BrowserConfig
	launcher *launcher.Launcher
	rod      *rod.Browser
	version  string
	control  string         // the DevTools websocket URL
	dialogs  sync.WaitGroup // dialog-accepting loops, one per window
}

// LaunchBrowser starts Chromium with flags that keep it off the network and
// away from first-run UI.
func LaunchBrowser(ctx context.Context, cfg BrowserConfig, log *zap.Logger) (*Browser, error) {
	if _, err := os.Stat(cfg.Bin); err != nil {
		return nil, fmt.Errorf("launch chromium: %w (run `make setup`)", err)
	}
	profile := filepath.Join(cfg.Dir, "chromium-profile")
	if err := runfiles.MkdirAll(profile); err != nil {
		return nil, fmt.Errorf("launch chromium: %w", err)
	}
	var display []string
	if !cfg.Headless {
		display = displayEnv
	}
	env, err := isolatedEnv(cfg.Dir, display...)
	if err != nil {
		return nil, fmt.Errorf("launch chromium: %w", err)
	}
	l := launcher.New().
		Context(ctx).
		Bin(cfg.Bin).
		Headless(cfg.Headless).
		NoSandbox(true).
		Leakless(false).
		UserDataDir(profile).
		Env(env...).
		// DevTools: rod speaks it over a websocket (it has no pipe
		// transport), so the port is random and on loopback only.
		RemoteDebuggingPort(0).
		Delete("enable-automation")
	for _, f := range chromiumFlags(cfg) {
		if f.Value == "" {
			l.Set(flags.Flag(f.Name))
		} else {
			l.Set(flags.Flag(f.Name), f.Value)
		}
	}
	u, err := l.Launch()
	if err != nil {
		return nil, fmt.Errorf("launch chromium %s: %w", cfg.Bin, err)
	}
	// Connect with the caller's context only for the handshake: the
	// browser outlives this call.
	b := rod.New().ControlURL(u).NoDefaultDevice()
	if err := b.Connect(); err != nil {
		l.Kill()
		return nil, fmt.Errorf("connect to chromium: %w", err)
	}
	v, err := b.Version()
	if err != nil {
		l.Kill()
		return nil, fmt.Errorf("chromium version: %w", err)
	}
	log.Info("chromium started", zap.String("version", v.Product), zap.Int("pid", l.PID()))
	return &Browser{cfg: cfg, launcher: l, rod: b, version: v.Product, control: u}, nil
}

// Version is the browser's product string, e.g. "Chrome/156.0.8078.108".
func (b *Browser) Version() string { return b.version }

// NewWindow opens a separate window (not a background tab: background tabs
// are throttled) with focus emulation on, so that several simulators can
// each believe they have focus.
func (b *Browser) NewWindow() (*rod.Page, error) {
	w, h := b.cfg.Width, b.cfg.Height
	t, err := proto.TargetCreateTarget{URL: "about:blank", NewWindow: true, Width: &w, Height: &h}.Call(b.rod)
	if err != nil {
		return nil, fmt.Errorf("open browser window: %w", err)
	}
	page, err := b.rod.PageFromTarget(t.TargetID)
	if err != nil {
		return nil, fmt.Errorf("attach to browser window: %w", err)
	}
	if err := (proto.EmulationSetFocusEmulationEnabled{Enabled: true}).Call(page); err != nil {
		return nil, fmt.Errorf("enable focus emulation: %w", err)
	}
	if err := (proto.EmulationSetDeviceMetricsOverride{Width: w, Height: h, DeviceScaleFactor: 1}).Call(page); err != nil {
		return nil, fmt.Errorf("size browser window: %w", err)
	}
	// Accept JavaScript dialogs (an editor left dirty by a failed config
	// asks "leave site?" on reload), so that no dialog blocks the window.
	// The loop ends when the page or the browser goes away.
	wait := page.EachEvent(func(e *proto.PageJavascriptDialogOpening) {
		_ = proto.PageHandleJavaScriptDialog{Accept: true}.Call(page)
	})
	b.dialogs.Add(1)
	go func() {
		defer b.dialogs.Done()
		wait()
	}()
	return page, nil
}

// Alive reports whether the browser still answers.
func (b *Browser) Alive() bool {
	_, err := b.rod.Version()
	return err == nil
}

// PID is the browser's main process id.
func (b *Browser) PID() int { return b.launcher.PID() }

// Close ends the browser and removes nothing: the profile stays in the run
// folder for inspection.
func (b *Browser) Close() {
	_ = b.rod.Close()
	b.launcher.Kill()
	b.dialogs.Wait()
}
