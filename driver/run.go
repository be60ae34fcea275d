package driver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"
	"golang.org/x/time/rate"

	"dialogfarm/adapter"
	"dialogfarm/dialog"
	"dialogfarm/driver/browser"
	"dialogfarm/driver/editor"
	"dialogfarm/driver/workbench"
	"dialogfarm/internal/runfiles"
)

// RunConfig says how to drive a batch of configs.
type RunConfig struct {
	// Out is the run folder: dialogues.jsonl, failures/, the editor's and
	// browser's own folders.
	Out string
	// Sessions is how many simulators run at once: windows of one
	// code-server, or each a window of a code-server of its own (see
	// Isolation).
	Sessions int
	// Isolation is what a simulator is: adapter.IsolationWindow (a window
	// of the editor every simulator shares) or adapter.IsolationEditor
	// (a window of an editor of its own: its own user-data, HOME, XDG
	// folders and extension state). Empty: editor when an adapter asks
	// for it, else window. --isolation sets it for a run.
	Isolation string
	Editor    editor.Config
	Browser   browser.Config
	// Adapters are the plugins the run drives; the first one drives the
	// configs that name no plugin. Each is installed into the run's own
	// extensions folder.
	Adapters []*adapter.Adapter
	// Secret is the run's capture secret, the {{secret}} of adapter files.
	Secret   string
	Timeouts workbench.Timeouts
	// PluginVersion is recorded in every dialogue.
	PluginVersion string
	// Progress, when set, is called after each config is recorded.
	Progress func(Progress)
	// Assignments, when set, is told which config each session is
	// driving, so that a responder can look up a request's config.
	Assignments *Assignments
	// Recycle says when a window is replaced by a fresh one.
	Recycle Recycle
	// StartSpacing is the least time between the starts of two of the
	// run's dialogues (0: none). See DefaultStartSpacing.
	StartSpacing time.Duration
}

// DefaultStartSpacing is StartSpacing for a machine with the given
// number of cores: a second over the cores. Simulators that fall idle
// together (all of them when a run starts, as a worker's jobs arrive)
// would start their dialogues at the same moment, take turns at their
// first steps on the renderers, and, with a model that answers all of
// them in about the same time, meet again at every turn: the machine
// then alternates between all windows stepping and all waiting. Spaced
// starts spread the windows' steps over the time they wait for answers.
func DefaultStartSpacing(cores int) time.Duration {
	return time.Second / time.Duration(max(cores, 1))
}

// Progress says how far a run's drive stage has got.
type Progress struct {
	Done, Total, OK, Failed int
	Elapsed                 time.Duration
	Last                    dialog.Dialogue
}

// Assignments maps each session to the config it is driving now.
type Assignments struct {
	mu sync.Mutex
	m  map[string]dialog.ChatConfig
}

// NewAssignments returns an empty map.
func NewAssignments() *Assignments { return &Assignments{m: map[string]dialog.ChatConfig{}} }

// Lookup returns the config a session is driving.
func (a *Assignments) Lookup(session string) (dialog.ChatConfig, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	c, ok := a.m[session]
	return c, ok
}

func (a *Assignments) set(session string, c *dialog.ChatConfig) {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if c == nil {
		delete(a.m, session)
		return
	}
	a.m[session] = *c
}

// DefaultRunConfig returns a one-session run of the reference plugin (the
// bundled adapter "ask", its plugin under root) with the tools folder
// under root.
func DefaultRunConfig(root, out string) RunConfig {
	rc := RunConfig{
		Out:      out,
		Sessions: 1,
		Editor:   editor.DefaultConfig(root),
		Browser:  browser.DefaultConfig(),
		Timeouts: workbench.DefaultTimeouts(),
		Recycle:  DefaultRecycle(),

		StartSpacing: DefaultStartSpacing(runtime.NumCPU()),
	}
	// A checkout without plugin/ gets no adapter; Start says so.
	if a, err := adapter.Load(adapter.DefaultName, root); err == nil {
		rc.Adapters = []*adapter.Adapter{a}
	}
	return rc
}

// Summary counts what a run did.
type Summary struct {
	OK, Failed, Skipped int
	Records             string // path of dialogues.jsonl
}

// Runner owns the editors and browser of a run and the simulators on them.
// Each simulator is a slot (slot.go), which knows whether its window
// shows the editor every slot shares or an editor of its own.
type Runner struct {
	cfg       RunConfig
	capture   workbench.Exchanges
	followUps workbench.FollowUps
	log       *zap.Logger
	isolation string // the run's: adapter.IsolationWindow or IsolationEditor

	mu       sync.Mutex     // guards the editors, the browser and the slots
	editor   *editor.Editor // the editor the slots share; nil with isolation editor
	browser  *browser.Chromium
	version  string             // what the last editor started says it is
	loads    chan struct{}      // one window loads at a time: loads saturate the CPU
	turns    *workbench.UITurns // windows sharing a renderer take turns at their steps
	starts   *rate.Limiter      // spaces the dialogues' starts (cfg.StartSpacing); nil: none
	slots    []*slot            // the simulators, opened by OpenSessions and NewSession
	lock     *FolderLock        // the run folder's lock, when Start took it
	recycled atomic.Int64       // windows replaced under cfg.Recycle
}

// NewRunner prepares a run; Start launches the editor and browser.
func NewRunner(cfg RunConfig, capture workbench.Exchanges, followUps workbench.FollowUps, log *zap.Logger) *Runner {
	if cfg.Sessions < 1 {
		cfg.Sessions = 1
	}
	if s, ok := capture.(interface{ Secret() string }); ok && cfg.Secret == "" {
		cfg.Secret = s.Secret() // the capture endpoint's run secret
	}
	r := &Runner{cfg: cfg, capture: capture, followUps: followUps, log: log, loads: make(chan struct{}, 1)}
	if cfg.StartSpacing > 0 && cfg.Sessions > 1 {
		r.starts = rate.NewLimiter(rate.Every(cfg.StartSpacing), 1)
	}
	return r
}

// Isolation is the run's isolation: the config's, else editor when an
// adapter asks for it, else window.
func (c RunConfig) isolation() (string, error) {
	switch c.Isolation {
	case adapter.IsolationWindow, adapter.IsolationEditor:
		return c.Isolation, nil
	case "":
		if slices.ContainsFunc(c.Adapters, (*adapter.Adapter).Isolated) {
			return adapter.IsolationEditor, nil
		}
		return adapter.IsolationWindow, nil
	}
	return "", fmt.Errorf("isolation %q: want window (simulators are windows of one editor) or editor (an editor per simulator)", c.Isolation)
}

// Start launches Chromium and, unless each simulator gets an editor of
// its own (isolation editor, started as its slot opens), the editor the
// simulators share.
func (r *Runner) Start(ctx context.Context) error {
	iso, err := r.cfg.isolation()
	if err != nil {
		return fmt.Errorf("start the run: %w", err)
	}
	r.isolation = iso
	for _, a := range r.cfg.Adapters {
		if err := a.CheckIsolation(iso); err != nil {
			return fmt.Errorf("start the run with isolation %s: %w", iso, err)
		}
		// A plugin that requires packages it does not ship cannot
		// activate: say so before any editor starts.
		if err := editor.CheckModules(a); err != nil {
			return fmt.Errorf("start the run: adapter %s: %w", a.Name, err)
		}
		r.cfg.Editor.Plugins = append(r.cfg.Editor.Plugins, a.Extension.ID)
	}
	if len(r.cfg.Adapters) == 0 {
		return errors.New("start the run: no plugin adapter (give --adapter, or keep plugin/ for the bundled adapter ask)")
	}
	out, err := filepath.Abs(r.cfg.Out)
	if err != nil {
		return fmt.Errorf("run folder %s: %w", r.cfg.Out, err)
	}
	r.cfg.Out = out
	if err := runfiles.MkdirAll(out); err != nil {
		return fmt.Errorf("create run folder: %w", err)
	}
	// The run folder's lock: taken here unless this process already holds
	// it (the command takes it before anything else), so a second run on
	// the folder fails before it touches the first one's editor.
	lock, err := LockRunFolder(out)
	var locked *LockedError
	switch {
	case errors.As(err, &locked) && locked.PID == os.Getpid():
	case err != nil:
		return err
	default:
		r.lock = lock
	}
	if err := r.start(ctx); err != nil {
		r.unlock()
		return err
	}
	return nil
}

// start is Start once the run folder is locked.
func (r *Runner) start(ctx context.Context) error {
	if err := killStale(r.cfg.Out, r.log); err != nil {
		return err
	}
	r.cfg.Editor.Dir = filepath.Join(r.cfg.Out, "editor")
	// One password (and hash) per run, for every editor: a restarted
	// code-server accepts the browser's session cookie, so windows need
	// not log in again.
	if err := r.cfg.Editor.SharePassword(); err != nil {
		return err
	}
	r.cfg.Browser.Dir = filepath.Join(r.cfg.Out, "browser")
	r.sizeRenderers()
	r.turns = workbench.NewUITurns(r.cfg.Sessions, r.cfg.Browser.RendererProcesses)
	// The installed extensions are shared by every editor of the run.
	r.cfg.Editor.ExtensionsDir = filepath.Join(r.cfg.Out, "extensions")
	r.cfg.Editor.SkipBuiltin = slices.DeleteFunc(slices.Clone(r.cfg.Editor.SkipBuiltin), func(id string) bool {
		return slices.ContainsFunc(r.cfg.Adapters, func(a *adapter.Adapter) bool { return a.NeedsBuiltin(id) })
	})
	if err := editor.Install(ctx, r.cfg.Editor.Bin, r.cfg.Editor.ExtensionsDir, filepath.Join(r.cfg.Out, "install"), r.cfg.Adapters); err != nil {
		return err
	}
	if r.isolation == adapter.IsolationEditor {
		br, err := browser.Launch(ctx, r.cfg.Browser, r.log)
		if err != nil {
			return err
		}
		r.browser = br
		return r.saveProcessGroups()
	}
	if err := r.cfg.Editor.WriteFiles(r.sharedVars(), r.cfg.Adapters); err != nil {
		return err
	}
	ed, br, err := startEditorAndBrowser(ctx, r.cfg.Editor, r.cfg.Browser, r.log)
	if err != nil {
		return err
	}
	r.editor, r.browser, r.version = ed, br, ed.Version()
	return r.saveProcessGroups()
}

// saveProcessGroups records every editor's and the browser's process
// groups in the run folder, for killStale. The caller holds r.mu or is
// the only one using r.
func (r *Runner) saveProcessGroups() error {
	p := processGroups{Editors: r.editorPIDs(), Run: os.Getpid()}
	if r.browser != nil {
		p.Browser = r.browser.PID()
	}
	return writeProcessGroups(r.cfg.Out, p)
}

// editorPIDs are the process groups of the run's editors: the shared one
// and the slots' own. The caller holds r.mu.
func (r *Runner) editorPIDs() []int {
	var out []int
	if r.editor != nil {
		out = append(out, r.editor.PID())
	}
	for _, sl := range r.slots {
		if sl.editor != nil {
			out = append(out, sl.editor.PID())
		}
	}
	return out
}

// unlock releases the run folder's lock if Start took it.
func (r *Runner) unlock() {
	_ = r.lock.Unlock()
	r.lock = nil
}

// Stop ends the browser and every editor's process group.
func (r *Runner) Stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.browser != nil {
		r.browser.Close()
	}
	var wg sync.WaitGroup
	for _, ed := range append([]*editor.Editor{r.editor}, r.slotEditors()...) {
		if ed != nil {
			wg.Go(ed.Stop)
		}
	}
	wg.Wait()
	_ = os.Remove(filepath.Join(r.cfg.Out, processesFile))
	r.unlock()
}

// Versions names the editor, plugin and browser of this run.
func (r *Runner) Versions() dialog.Versions {
	r.mu.Lock()
	defer r.mu.Unlock()
	v := dialog.Versions{Plugin: r.cfg.PluginVersion, CodeServer: r.version}
	if _, code, ok := strings.Cut(v.CodeServer, "with Code "); ok {
		v.VSCode = code
	}
	if r.browser != nil {
		v.Chromium = r.browser.Version()
	}
	return v
}

// sharedVars are the placeholders' values in what an editor shared by
// every session holds (its files and keybindings): the parts of the
// capture URL that every session's share (validation keeps the
// per-session ones out).
func (r *Runner) sharedVars() adapter.Vars {
	return adapter.Vars{CaptureURL: r.capture.BaseURL(""), Secret: r.secret()}
}

// sessionVars are the placeholders' values for session id.
func (r *Runner) sessionVars(id string) adapter.Vars {
	return adapter.Vars{CaptureURL: r.capture.BaseURL(id), Session: id, Secret: r.secret()}
}

// secret is the run's capture secret: the configured one, else the one
// the capture endpoint says it checks.
func (r *Runner) secret() string {
	if r.cfg.Secret != "" {
		return r.cfg.Secret
	}
	if s, ok := r.capture.(interface{ Secret() string }); ok {
		return s.Secret()
	}
	return ""
}

func safeName(id string) string {
	b := []byte(id)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			b[i] = '_'
		}
	}
	return string(b)
}

// PIDs returns the process groups of the run's editors (the leader of
// each is code-server) and Chromium's main process id, for resource
// accounting.
func (r *Runner) PIDs() (editors []int, browser int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.browser != nil {
		browser = r.browser.PID()
	}
	return r.editorPIDs(), browser
}

// startEditorAndBrowser starts code-server and Chromium side by side. On
// an error neither is left running. Not errgroup.WithContext: both
// outlive this call, and that context ends when Wait returns.
func startEditorAndBrowser(ctx context.Context, ecfg editor.Config, bcfg browser.Config, log *zap.Logger) (*editor.Editor, *browser.Chromium, error) {
	var (
		g  errgroup.Group
		ed *editor.Editor
		br *browser.Chromium
	)
	g.Go(func() (err error) { ed, err = editor.Start(ctx, ecfg, log); return err })
	g.Go(func() (err error) { br, err = browser.Launch(ctx, bcfg, log); return err })
	if err := g.Wait(); err != nil {
		if ed != nil {
			ed.Stop()
		}
		if br != nil {
			br.Close()
		}
		return nil, nil, err
	}
	return ed, br, nil
}

// waitStartup waits for the start-up of the browser the windows are in
// now (see browser.Chromium.WaitStartup): a relaunched one has its own.
func (r *Runner) waitStartup(ctx context.Context) error {
	r.mu.Lock()
	br := r.browser
	r.mu.Unlock()
	return br.WaitStartup(ctx)
}
