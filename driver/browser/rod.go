package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"sync"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/launcher"
	"github.com/go-rod/rod/lib/launcher/flags"
	"github.com/go-rod/rod/lib/proto"
	"github.com/ysmood/gson"
	"go.uber.org/zap"

	"dialogfarm/driver/internal/tether"
)

// RodBrowser is a Chromium process controlled with go-rod.
type RodBrowser struct {
	cfg     Config
	proc    *tether.Process
	rod     *rod.Browser
	version string
	control string         // the DevTools websocket URL
	dialogs sync.WaitGroup // dialog-accepting loops, one per window
}

var _ browser = (*RodBrowser)(nil)

// LaunchRod starts Chromium with flags that keep it off the network and
// away from first-run UI, and connects to it with go-rod.
func LaunchRod(ctx context.Context, cfg Config, log *zap.Logger) (*RodBrowser, error) {
	profile, env, err := prepareLaunch(cfg)
	if err != nil {
		return nil, err
	}
	// go-rod's launcher composes the command line (its default switches
	// and ours); Chromium is started tethered, which the launcher cannot.
	l := launcher.New().
		Headless(cfg.Headless).
		NoSandbox(true).
		UserDataDir(profile).
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
	proc, u, err := startChromium(ctx, cfg.Bin, l.FormatArgs(), env)
	if err != nil {
		return nil, fmt.Errorf("launch chromium %s: %w", cfg.Bin, err)
	}
	// Connect with the caller's context only for the handshake: the
	// browser outlives this call.
	b := rod.New().ControlURL(u).NoDefaultDevice()
	if err := b.Connect(); err != nil {
		proc.Kill()
		return nil, fmt.Errorf("connect to chromium: %w", err)
	}
	v, err := b.Version()
	if err != nil {
		proc.Kill()
		return nil, fmt.Errorf("chromium version: %w", err)
	}
	log.Info("chromium started", zap.String("backend", "rod"), zap.String("version", v.Product), zap.Int("pid", proc.Pid()))
	return &RodBrowser{cfg: cfg, proc: proc, rod: b, version: v.Product, control: u}, nil
}

// startChromium starts bin with args and exactly env, tethered: in its own
// process group (which killStale and Close end), killed when this process
// dies. It returns with the DevTools websocket URL once Chromium prints
// that it listens.
func startChromium(ctx context.Context, bin string, args, env []string) (*tether.Process, string, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	parser := launcher.NewURLParser().Context(ctx)
	cmd.Stdout, cmd.Stderr = parser, parser
	// Chromium's helpers hold its output open: Wait gives them this
	// long after it exits.
	cmd.WaitDelay = 5 * time.Second
	proc, err := tether.Start(cmd)
	if err != nil {
		return nil, "", err
	}
	select {
	case u := <-parser.URL:
		ws, err := launcher.ResolveURL(u)
		if err != nil {
			proc.Kill()
			return nil, "", fmt.Errorf("its DevTools address %s: %w", u, err)
		}
		return proc, ws, nil
	case <-proc.Done():
		return nil, "", fmt.Errorf("%w (%v)", parser.Err(), proc.Err())
	case <-ctx.Done():
		proc.Kill()
		return nil, "", ctx.Err()
	}
}

// Version is the browser's product string, e.g. "Chrome/156.0.8078.108".
func (b *RodBrowser) Version() string { return b.version }

// NewWindow opens a window for the workbench's steps (see
// browser.NewWindow).
func (b *RodBrowser) NewWindow(ctx context.Context, beside Page) (Page, error) {
	var from *rod.Page
	if beside != nil {
		rp, ok := beside.(rodPage)
		if !ok {
			return nil, fmt.Errorf("open a window beside a %T: not a rod window", beside)
		}
		from = rp.p
	}
	p, err := b.openPage(ctx, from)
	if err != nil {
		return nil, err
	}
	return rodPage{p}, nil
}

// NewPage opens a separate window as NewWindow does, as a rod page for
// callers that drive it with rod itself.
func (b *RodBrowser) NewPage(ctx context.Context) (*rod.Page, error) { return b.openPage(ctx, nil) }

// openPage opens a window, beside from when it is set (see
// browser.NewWindow), and sets it up for the driver.
func (b *RodBrowser) openPage(ctx context.Context, from *rod.Page) (*rod.Page, error) {
	w, h := b.cfg.Width, b.cfg.Height
	var page *rod.Page
	if from == nil {
		t, err := proto.TargetCreateTarget{URL: "about:blank", NewWindow: true, Width: &w, Height: &h}.Call(b.rod.Context(ctx))
		if err != nil {
			return nil, fmt.Errorf("open browser window: %w", err)
		}
		if page, err = b.rod.PageFromTarget(t.TargetID); err != nil {
			return nil, fmt.Errorf("attach to browser window: %w", err)
		}
	} else {
		fc := from.Context(ctx)
		opened := fc.WaitOpen()
		if _, err := (proto.RuntimeEvaluate{Expression: openBesideJS(w, h), UserGesture: true}).Call(fc); err != nil {
			return nil, fmt.Errorf("open a browser window beside another: %w", err)
		}
		p, err := opened()
		if err == nil {
			err = ctx.Err()
		}
		if err != nil {
			return nil, fmt.Errorf("attach to the browser window opened beside another: %w", err)
		}
		// The window outlives this call, as one CreateTarget opened does.
		page = p.Context(b.rod.GetContext())
	}
	pc := page.Context(ctx)
	if err := (proto.EmulationSetFocusEmulationEnabled{Enabled: true}).Call(pc); err != nil {
		return nil, fmt.Errorf("enable focus emulation: %w", err)
	}
	if err := (proto.EmulationSetDeviceMetricsOverride{Width: w, Height: h, DeviceScaleFactor: 1}).Call(pc); err != nil {
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

// StartupDone reports whether Chromium has ended its start-up (see
// endStartup).
func (b *RodBrowser) StartupDone(ctx context.Context) (bool, error) {
	res, err := proto.BrowserGetHistograms{Query: startupHistogram}.Call(b.rod.Context(ctx))
	if err != nil {
		return false, fmt.Errorf("read chromium's histograms: %w", err)
	}
	return len(res.Histograms) > 0, nil
}

// OpenApart opens url in a window of a browser context of its own (see
// browser).
func (b *RodBrowser) OpenApart(ctx context.Context, url string) (func(), error) {
	br := b.rod.Context(ctx)
	bc, err := proto.TargetCreateBrowserContext{}.Call(br)
	if err != nil {
		return nil, fmt.Errorf("create a browser context: %w", err)
	}
	closeIt := func() {
		_ = proto.TargetDisposeBrowserContext{BrowserContextID: bc.BrowserContextID}.Call(b.rod.Timeout(closeApartWait))
	}
	w, h := b.cfg.Width, b.cfg.Height
	if _, err := (proto.TargetCreateTarget{URL: url, NewWindow: true, Width: &w, Height: &h, BrowserContextID: bc.BrowserContextID}).Call(br); err != nil {
		closeIt()
		return nil, fmt.Errorf("open a window in its own browser context: %w", err)
	}
	return closeIt, nil
}

// PID is the browser's main process id.
func (b *RodBrowser) PID() int { return b.proc.Pid() }

// Close ends the browser and removes nothing: the profile stays in the run
// folder for inspection.
func (b *RodBrowser) Close() {
	_ = b.rod.Close()
	b.proc.Kill()
	b.dialogs.Wait()
}

// rodPage is a window driven with go-rod.
type rodPage struct{ p *rod.Page }

var _ Page = rodPage{}

func (r rodPage) Eval(ctx context.Context, fn string, args ...any) (json.RawMessage, error) {
	res, err := r.p.Context(ctx).Eval(fn, args...)
	if err != nil {
		return nil, err
	}
	return res.Value.MarshalJSON()
}

func (r rodPage) Navigate(ctx context.Context, url string) error {
	return r.p.Context(ctx).Navigate(url)
}

func (r rodPage) Key(ctx context.Context, e KeyEvent) error {
	return proto.InputDispatchKeyEvent{
		Type:                  proto.InputDispatchKeyEventType(e.Type),
		Modifiers:             e.Modifiers,
		Key:                   e.Key,
		Code:                  e.Code,
		Text:                  e.Text,
		UnmodifiedText:        e.Text,
		WindowsVirtualKeyCode: e.KeyCode,
		Location:              gson.Int(e.Location),
	}.Call(r.p.Context(ctx))
}

func (r rodPage) InsertText(ctx context.Context, text string) error {
	return proto.InputInsertText{Text: text}.Call(r.p.Context(ctx))
}

func (r rodPage) Mouse(ctx context.Context, e MouseEvent) error {
	button := proto.InputMouseButton(e.Button)
	if button == "" {
		button = proto.InputMouseButtonNone
	}
	return proto.InputDispatchMouseEvent{
		Type:       proto.InputDispatchMouseEventType(e.Type),
		X:          e.X,
		Y:          e.Y,
		Button:     button,
		Buttons:    gson.Int(e.Buttons),
		ClickCount: e.ClickCount,
		Modifiers:  e.Modifiers,
	}.Call(r.p.Context(ctx))
}

func (r rodPage) Screenshot(ctx context.Context) ([]byte, error) {
	return r.p.Context(ctx).Screenshot(false, nil)
}

func (r rodPage) HeapUsed(ctx context.Context) (float64, error) {
	res, err := proto.RuntimeGetHeapUsage{}.Call(r.p.Context(ctx))
	if err != nil {
		return 0, err
	}
	return res.UsedSize, nil
}

func (r rodPage) Close() error { return r.p.Close() }
