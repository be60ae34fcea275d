package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/css"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"go.uber.org/zap"
)

// rodDefaultFlags are the switches go-rod's launcher adds by default
// (beside those chromiumFlags overrides). The chromedp backend adds the
// same ones, so that both backends run the same browser and a comparison
// measures the libraries, not the switches.
var rodDefaultFlags = []chromiumFlag{
	{Name: "no-startup-window"},
	{Name: "disable-dev-shm-usage"},
	{Name: "disable-background-timer-throttling"},
	{Name: "disable-backgrounding-occluded-windows"},
	{Name: "disable-breakpad"},
	{Name: "disable-client-side-phishing-detection"},
	{Name: "disable-component-extensions-with-background-pages"},
	{Name: "disable-hang-monitor"},
	{Name: "disable-ipc-flooding-protection"},
	{Name: "disable-popup-blocking"},
	{Name: "disable-prompt-on-repost"},
	{Name: "disable-renderer-backgrounding"},
	{Name: "disable-site-isolation-trials"},
	{Name: "enable-features", Value: "NetworkService,NetworkServiceInProcess"},
	{Name: "force-color-profile", Value: "srgb"},
	{Name: "metrics-recording-only"},
	{Name: "use-mock-keychain"},
}

// cdpBrowser is a Chromium process controlled with chromedp. chromedp
// talks to it over a pipe (--remote-debugging-pipe), so unlike go-rod's
// websocket no DevTools port is open at all.
type cdpBrowser struct {
	cfg         Config
	ctx         context.Context // the browser's chromedp context
	cancel      context.CancelFunc
	cancelAlloc context.CancelFunc
	version     string
	pid         int
	dialogs     sync.WaitGroup // dialog-accepting loops, one per window
}

var _ browser = (*cdpBrowser)(nil)

// launchChromedp starts Chromium with the same switches and environment as
// LaunchRod, and connects to it with chromedp.
func launchChromedp(ctx context.Context, cfg Config, log *zap.Logger) (*cdpBrowser, error) {
	profile, env, err := prepareLaunch(cfg)
	if err != nil {
		return nil, err
	}
	// Not chromedp.DefaultExecAllocatorOptions: the switches are ours. The
	// environment is exactly env: NoInheritEnv keeps the Go process's
	// (and so any API key in it) away from the browser.
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(cfg.Bin),
		chromedp.UserDataDir(profile),
		chromedp.NoSandbox,
		chromedp.NoInheritEnv,
		chromedp.Env(env...),
		// Its own process group, as go-rod's launcher gives it, so that
		// killStale ends the browser's helpers with it; killed with the
		// thread that started it, as chromedp does by default.
		chromedp.ModifyCmdFunc(func(cmd *exec.Cmd) {
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		}),
	}
	if cfg.Headless {
		opts = append(opts, chromedp.Flag("headless", true))
	}
	for _, f := range append(rodDefaultFlags, chromiumFlags(cfg)...) {
		switch {
		case f.Name == "remote-debugging-address":
			// The pipe needs no address; chromedp would take the
			// switch for a request to listen on a port.
			continue
		case f.Value == "":
			opts = append(opts, chromedp.Flag(f.Name, true))
		default:
			opts = append(opts, chromedp.Flag(f.Name, f.Value))
		}
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	bctx, cancel := chromedp.NewContext(actx)
	// The first call starts the browser and binds its life to bctx; it
	// opens no tab.
	v, err := chromedp.CallBrowser(bctx, cdpbrowser.GetVersion, cdp.Empty{})
	if err != nil {
		cancel()
		cancelAlloc()
		return nil, fmt.Errorf("launch chromium %s: %w", cfg.Bin, err)
	}
	// The browser's session announces new targets: a window opened
	// beside another (openBeside) is known by its opener.
	if _, err := chromedp.CallBrowser(bctx, target.SetDiscoverTargets, target.SetDiscoverTargetsParams{Discover: true}); err != nil {
		cancel()
		cancelAlloc()
		return nil, fmt.Errorf("have chromium announce new windows: %w", err)
	}
	b := &cdpBrowser{cfg: cfg, ctx: bctx, cancel: cancel, cancelAlloc: cancelAlloc, version: v.Product}
	if p := chromedp.FromContext(bctx).Browser.Process(); p != nil {
		b.pid = p.Pid
	}
	log.Info("chromium started", zap.String("backend", "chromedp"), zap.String("version", v.Product), zap.Int("pid", b.pid))
	return b, nil
}

// Version is the browser's product string, e.g. "Chrome/156.0.8078.108".
func (b *cdpBrowser) Version() string { return b.version }

// StartupDone reports whether Chromium has ended its start-up (see
// endStartup).
func (b *cdpBrowser) StartupDone(ctx context.Context) (bool, error) {
	res, err := cdp.Call(ctx, chromedp.FromContext(b.ctx).Browser, cdpbrowser.GetHistograms, cdpbrowser.GetHistogramsParams{Query: startupHistogram})
	if err != nil {
		return false, fmt.Errorf("read chromium's histograms: %w", err)
	}
	return len(res.Histograms) > 0, nil
}

// OpenApart opens url in a window of a browser context of its own (see
// browser).
func (b *cdpBrowser) OpenApart(ctx context.Context, url string) (func(), error) {
	br := chromedp.FromContext(b.ctx).Browser
	bc, err := cdp.Call(ctx, br, target.CreateBrowserContext, target.CreateBrowserContextParams{})
	if err != nil {
		return nil, fmt.Errorf("create a browser context: %w", err)
	}
	closeIt := func() {
		ctx, cancel := context.WithTimeout(b.ctx, closeApartWait)
		defer cancel()
		_, _ = cdp.Call(ctx, br, target.DisposeBrowserContext, target.DisposeBrowserContextParams{BrowserContextID: bc.BrowserContextID})
	}
	newWindow := true
	if _, err := cdp.Call(ctx, br, target.CreateTarget, target.CreateTargetParams{URL: url, NewWindow: &newWindow,
		Width: int64(b.cfg.Width), Height: int64(b.cfg.Height), BrowserContextID: bc.BrowserContextID}); err != nil {
		closeIt()
		return nil, fmt.Errorf("open a window in its own browser context: %w", err)
	}
	return closeIt, nil
}

// PID is the browser's main process id.
func (b *cdpBrowser) PID() int { return b.pid }

// Close closes the browser as LaunchRod's does: gracefully, then the
// process is ended; the profile stays.
func (b *cdpBrowser) Close() {
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	_ = chromedp.Cancel(ctx)
	b.cancel()
	b.cancelAlloc()
	b.dialogs.Wait()
}

// NewWindow opens a separate window, beside another when it is set (see
// browser), and attaches to it.
func (b *cdpBrowser) NewWindow(ctx context.Context, beside Page) (Page, error) {
	w, h := int64(b.cfg.Width), int64(b.cfg.Height)
	var id target.ID
	if beside == nil {
		newWindow := true
		t, err := cdp.Call(ctx, chromedp.FromContext(b.ctx).Browser, target.CreateTarget,
			target.CreateTargetParams{URL: "about:blank", NewWindow: &newWindow, Width: w, Height: h})
		if err != nil {
			return nil, fmt.Errorf("open browser window: %w", err)
		}
		id = t.TargetID
	} else {
		from, ok := beside.(*cdpPage)
		if !ok {
			return nil, fmt.Errorf("open a window beside a %T: not a chromedp window", beside)
		}
		var err error
		if id, err = b.openBeside(ctx, from); err != nil {
			return nil, err
		}
	}
	// The tab's context lives until Close: chromedp closes a tab when its
	// context ends, so calls get the caller's deadline through cdp.Call
	// on the tab's session, never through the tab's context.
	tctx, cancel := chromedp.NewContext(b.ctx, chromedp.WithTargetID(id))
	attached := make(chan error, 1)
	go func() { attached <- chromedp.Do(tctx) }()
	var err error
	select {
	case err = <-attached:
	case <-ctx.Done():
		cancel()
		<-attached
		err = ctx.Err()
	}
	if err != nil {
		cancel()
		return nil, fmt.Errorf("attach to browser window: %w", err)
	}
	p := &cdpPage{t: chromedp.FromContext(tctx).Target, cancel: cancel}
	if err := p.setUp(ctx, w, h); err != nil {
		cancel()
		return nil, err
	}
	// Accept JavaScript dialogs (see RodBrowser.NewPage). The loop ends
	// when the window closes.
	dialogs := chromedp.Events(tctx, cdppage.JavascriptDialogOpening)
	b.dialogs.Add(1)
	go func() {
		defer b.dialogs.Done()
		for _, err := range dialogs {
			if err != nil {
				return
			}
			_, _ = cdp.Call(tctx, p.t, cdppage.HandleJavaScriptDialog, cdppage.HandleJavaScriptDialogParams{Accept: true})
		}
	}()
	return p, nil
}

// openBeside has the page of from open a window (openBesideJS, see
// browser.NewWindow) and returns the new window's target once the
// browser has announced it.
func (b *cdpBrowser) openBeside(ctx context.Context, from *cdpPage) (target.ID, error) {
	lctx, stop := context.WithCancel(b.ctx)
	defer stop()
	opened := make(chan target.ID, 1)
	err := chromedp.ListenBrowser(lctx, func(ev any) {
		if e, ok := ev.(*target.EventTargetCreated); ok && e.TargetInfo.OpenerID == from.t.TargetID {
			select {
			case opened <- e.TargetInfo.TargetID:
			default:
			}
		}
	})
	if err != nil {
		return "", fmt.Errorf("listen for the window opened beside another: %w", err)
	}
	yes := true
	if _, err := cdp.Call(ctx, from.t, runtime.Evaluate, runtime.EvaluateParams{Expression: openBesideJS(b.cfg.Width, b.cfg.Height), UserGesture: &yes}); err != nil {
		return "", fmt.Errorf("open a browser window beside another: %w", err)
	}
	select {
	case id := <-opened:
		return id, nil
	case <-ctx.Done():
		return "", fmt.Errorf("wait for the browser window opened beside another: %w", ctx.Err())
	}
}

// cdpPage is a window driven with chromedp.
type cdpPage struct {
	t      *chromedp.Target
	cancel context.CancelFunc // closes the tab
}

var _ Page = (*cdpPage)(nil)

// setUp turns off what chromedp turns on for its own DOM queries and
// that the driver does not use (every network request, DOM and style
// change, console line, new worker or frame and lifecycle step would be
// sent over the pipe as an event), then
// emulates focus and sizes the page as the rod backend does.
func (p *cdpPage) setUp(ctx context.Context, w, h int64) error {
	off := false
	steps := []struct {
		what string
		do   func() error
	}{
		{"network events off", func() error { _, err := cdp.Call(ctx, p.t, network.Disable, cdp.Empty{}); return err }},
		{"style events off", func() error { _, err := cdp.Call(ctx, p.t, css.Disable, cdp.Empty{}); return err }},
		{"DOM events off", func() error { _, err := cdp.Call(ctx, p.t, dom.Disable, cdp.Empty{}); return err }},
		{"log events off", func() error { _, err := cdp.Call(ctx, p.t, cdplog.Disable, cdp.Empty{}); return err }},
		{"runtime events off", func() error { _, err := cdp.Call(ctx, p.t, runtime.Disable, cdp.Empty{}); return err }},
		{"target discovery off", func() error {
			_, err := cdp.Call(ctx, p.t, target.SetDiscoverTargets, target.SetDiscoverTargetsParams{Discover: false})
			return err
		}},
		{"lifecycle events off", func() error {
			_, err := cdp.Call(ctx, p.t, cdppage.SetLifecycleEventsEnabled, cdppage.SetLifecycleEventsEnabledParams{Enabled: false})
			return err
		}},
		{"auto-attach off", func() error {
			_, err := cdp.Call(ctx, p.t, target.SetAutoAttach, target.SetAutoAttachParams{AutoAttach: false, WaitForDebuggerOnStart: false, Flatten: &off})
			return err
		}},
		{"enable focus emulation", func() error {
			_, err := cdp.Call(ctx, p.t, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true})
			return err
		}},
		{"size browser window", func() error {
			_, err := cdp.Call(ctx, p.t, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{Width: w, Height: h, DeviceScaleFactor: 1})
			return err
		}},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			return fmt.Errorf("%s: %w", s.what, err)
		}
	}
	return nil
}

// Eval calls fn as an expression with its JSON-encoded arguments written
// in: JSON is JavaScript, so no remote object handles are needed.
func (p *cdpPage) Eval(ctx context.Context, fn string, args ...any) (json.RawMessage, error) {
	var expr strings.Builder
	expr.WriteString("(" + fn + ")(")
	for i, a := range args {
		b, err := json.Marshal(a)
		if err != nil {
			return nil, fmt.Errorf("encode argument %d: %w", i, err)
		}
		if i > 0 {
			expr.WriteString(", ")
		}
		expr.Write(b)
	}
	expr.WriteString(")")
	yes := true
	res, err := cdp.Call(ctx, p.t, runtime.Evaluate, runtime.EvaluateParams{Expression: expr.String(), ReturnByValue: &yes, AwaitPromise: &yes})
	switch {
	case err != nil:
		return nil, err
	case res.ExceptionDetails != nil:
		return nil, &chromedp.ExceptionError{ExceptionDetails: res.ExceptionDetails}
	case res.Result == nil || len(res.Result.Value) == 0:
		return json.RawMessage("null"), nil
	}
	return json.RawMessage(res.Result.Value), nil
}

func (p *cdpPage) Navigate(ctx context.Context, url string) error {
	res, err := cdp.Call(ctx, p.t, cdppage.Navigate, cdppage.NavigateParams{URL: url})
	if err == nil && res.ErrorText != "" {
		err = fmt.Errorf("%s", res.ErrorText)
	}
	return err
}

func (p *cdpPage) Key(ctx context.Context, e KeyEvent) error {
	_, err := cdp.Call(ctx, p.t, input.DispatchKeyEvent, input.DispatchKeyEventParams{
		Type:                  input.DispatchKeyEventType(e.Type),
		Modifiers:             int64(e.Modifiers),
		Key:                   e.Key,
		Code:                  e.Code,
		Text:                  e.Text,
		UnmodifiedText:        e.Text,
		WindowsVirtualKeyCode: int64(e.KeyCode),
		Location:              int64(e.Location),
	})
	return err
}

func (p *cdpPage) InsertText(ctx context.Context, text string) error {
	_, err := cdp.Call(ctx, p.t, input.InsertText, input.InsertTextParams{Text: text})
	return err
}

func (p *cdpPage) Mouse(ctx context.Context, e MouseEvent) error {
	button := input.MouseButton(e.Button)
	if button == "" {
		button = input.MouseButton("none")
	}
	_, err := cdp.Call(ctx, p.t, input.DispatchMouseEvent, input.DispatchMouseEventParams{
		Type:       input.DispatchMouseEventType(e.Type),
		X:          e.X,
		Y:          e.Y,
		Button:     button,
		Buttons:    int64(e.Buttons),
		ClickCount: int64(e.ClickCount),
		Modifiers:  int64(e.Modifiers),
	})
	return err
}

func (p *cdpPage) Screenshot(ctx context.Context) ([]byte, error) {
	res, err := cdp.Call(ctx, p.t, cdppage.CaptureScreenshot, cdppage.CaptureScreenshotParams{Format: cdppage.CaptureScreenshotFormatPng})
	if err != nil {
		return nil, err
	}
	return res.Data, nil
}

func (p *cdpPage) HeapUsed(ctx context.Context) (float64, error) {
	res, err := cdp.Call(ctx, p.t, runtime.GetHeapUsage, cdp.Empty{})
	if err != nil {
		return 0, err
	}
	return res.UsedSize, nil
}

// Close closes the tab (chromedp closes it when its context ends).
func (p *cdpPage) Close() error {
	p.cancel()
	return nil
}
