package driver

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"dialogfarm/adapter"
	"dialogfarm/dialog"
	"dialogfarm/internal/runfiles"
)

// RunConfig says how to drive a batch of configs.
type RunConfig struct {
	// Out is the run folder: dialogues.jsonl, failures/, the editor's and
	// browser's own folders.
	Out string
	// Sessions is how many simulators (browser windows) run at once on one
	// code-server.
	Sessions int
	Editor   EditorConfig
	Browser  BrowserConfig
	// Adapters are the plugins the run drives; the first one drives the
	// configs that name no plugin. Each is installed into the run's own
	// extensions folder.
	Adapters []*adapter.Adapter
	// Secret is the run's capture secret, the {{secret}} of adapter files.
	Secret   string
	Timeouts Timeouts
	// PluginVersion is recorded in every dialogue.
	PluginVersion string
	// Progress, when set, is called after each config is recorded.
	Progress func(Progress)
	// Assignments, when set, is told which config each session is
	// driving, so that a responder can look up a request's config.
	Assignments *Assignments
	// Recycle says when a window is replaced by a fresh one.
	Recycle Recycle
}

// Progress says how far a Drive call has got.
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
		Editor:   DefaultEditorConfig(root),
		Browser:  DefaultBrowserConfig(),
		Timeouts: DefaultTimeouts(),
		Recycle:  DefaultRecycle(),
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

// Runner owns the editor and browser of a run and the simulators on them.
type Runner struct {
	cfg       RunConfig
	capture   Exchanges
	followUps FollowUps
	log       *zap.Logger

	mu       sync.Mutex // guards editor and browser restarts
	editor   *Editor
	browser  *chromium
	loads    chan struct{} // one window loads at a time: loads saturate the CPU
	turns    *uiTurns      // windows sharing a renderer take turns at their steps
	sessions []*Session    // the simulators' windows, opened by Drive
	lock     *FolderLock   // the run folder's lock, when Start took it
	recycled atomic.Int64  // windows replaced under cfg.Recycle
}

// NewRunner prepares a run; Start launches the editor and browser.
func NewRunner(cfg RunConfig, capture Exchanges, followUps FollowUps, log *zap.Logger) *Runner {
	if cfg.Sessions < 1 {
		cfg.Sessions = 1
	}
	if s, ok := capture.(interface{ Secret() string }); ok && cfg.Secret == "" {
		cfg.Secret = s.Secret() // the capture endpoint's run secret
	}
	return &Runner{cfg: cfg, capture: capture, followUps: followUps, log: log, loads: make(chan struct{}, 1)}
}

// Start launches code-server and Chromium.
func (r *Runner) Start(ctx context.Context) error {
	for _, a := range r.cfg.Adapters {
		if a.Isolated() {
			return fmt.Errorf("start the run: adapter %s (%s) asks for isolation: editor, which this version does not run yet", a.Name, a.Source)
		}
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
	if err := killStale(out, r.log); err != nil {
		r.unlock()
		return err
	}
	r.cfg.Editor.Dir = filepath.Join(r.cfg.Out, "editor")
	if r.cfg.Editor.Password == "" {
		// One password (and hash) per run: a restarted code-server
		// accepts the browser's session cookie, so windows need not log
		// in again.
		r.cfg.Editor.Password = rand.Text()
	}
	if r.cfg.Editor.passwordHash, err = hashPassword(r.cfg.Editor.Password); err != nil {
		return err
	}
	r.cfg.Browser.Dir = filepath.Join(r.cfg.Out, "browser")
	r.sizeRendererHeap()
	r.turns = newUITurns(r.cfg.Sessions, r.cfg.Browser.RendererProcesses)
	if len(r.cfg.Adapters) == 0 {
		return errors.New("start the run: no plugin adapter (give --adapter, or keep plugin/ for the bundled adapter ask)")
	}
	r.cfg.Editor.ExtensionsDir = filepath.Join(r.cfg.Out, "extensions")
	r.cfg.Editor.SkipBuiltin = slices.DeleteFunc(slices.Clone(r.cfg.Editor.SkipBuiltin), func(id string) bool {
		return slices.ContainsFunc(r.cfg.Adapters, func(a *adapter.Adapter) bool { return a.NeedsBuiltin(id) })
	})
	if err := installExtensions(ctx, r.cfg.Editor.Bin, r.cfg.Editor.ExtensionsDir, filepath.Join(r.cfg.Out, "install"), r.cfg.Adapters); err != nil {
		return err
	}
	if err := writeEditorFiles(r.cfg.Editor.Dir, r.sharedVars(), r.cfg.Adapters); err != nil {
		return err
	}
	ed, br, err := startEditorAndBrowser(ctx, r.cfg.Editor, r.cfg.Browser, r.log)
	if err != nil {
		r.unlock()
		return err
	}
	r.editor, r.browser = ed, br
	return r.saveProcessGroups()
}

// saveProcessGroups records the editor's and browser's process groups in
// the run folder, for killStale.
func (r *Runner) saveProcessGroups() error {
	return writeProcessGroups(r.cfg.Out, processGroups{Editor: r.editor.PID(), Browser: r.browser.PID(), Run: os.Getpid()})
}

// unlock releases the run folder's lock if Start took it.
func (r *Runner) unlock() {
	_ = r.lock.Unlock()
	r.lock = nil
}

// Stop ends the browser and the editor's process group.
func (r *Runner) Stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.browser != nil {
		r.browser.Close()
	}
	if r.editor != nil {
		r.editor.Stop()
	}
	_ = os.Remove(filepath.Join(r.cfg.Out, processesFile))
	r.unlock()
}

// Versions names the editor, plugin and browser of this run.
func (r *Runner) Versions() dialog.Versions {
	r.mu.Lock()
	defer r.mu.Unlock()
	v := dialog.Versions{Plugin: r.cfg.PluginVersion}
	if r.editor != nil {
		v.CodeServer = r.editor.Version()
		if _, code, ok := strings.Cut(v.CodeServer, "with Code "); ok {
			v.VSCode = code
		}
	}
	if r.browser != nil {
		v.Chromium = r.browser.Version()
	}
	return v
}

// NewSession opens a simulator window; id names its capture session.
func (r *Runner) NewSession(ctx context.Context, id string) (*Session, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	page, err := r.browser.NewWindow(ctx)
	if err != nil {
		return nil, err
	}
	return &Session{
		ID: id, win: &window{page: page}, adapters: r.cfg.Adapters, secret: r.secret(), capture: r.capture, followUps: r.followUps,
		dir: r.cfg.Out, editorDir: r.cfg.Editor.Dir, editorURL: r.editor.URL(), password: r.editor.Password(), timeouts: r.cfg.Timeouts, loads: r.loads, turns: r.turns,
		startup: r.waitStartup, log: r.log.With(zap.String("session", id)),
	}, nil
}

// sharedVars are the placeholders' values in what an editor shared by
// every session holds (its files and keybindings): the parts of the
// capture URL that every session's share (validation keeps the
// per-session ones out).
func (r *Runner) sharedVars() adapter.Vars {
	return adapter.Vars{CaptureURL: r.capture.BaseURL(""), Secret: r.secret()}
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

// Drive runs every config not yet recorded ok in the run folder, on
// cfg.Sessions windows, appending one record per config. A config that
// fails is recorded failed (with a screenshot, step log and DOM snippet in
// failures/<id>/) and the run goes on. Cancelling ctx stops after the
// configs in flight; they are not recorded and run again on resume.
func (r *Runner) Drive(ctx context.Context, configs []dialog.ChatConfig) (Summary, error) {
	records, err := OpenRecordLog(r.cfg.Out)
	if err != nil {
		return Summary{}, err
	}
	defer records.Close()
	sum := Summary{Records: records.Path()}
	var todo []dialog.ChatConfig
	for _, c := range configs {
		if records.Done(c.ID) {
			sum.Skipped++
			continue
		}
		todo = append(todo, c)
	}
	if len(todo) == 0 {
		return sum, nil
	}
	// Windows are opened before any work starts and kept for later Drive
	// calls on this Runner.
	for len(r.sessions) < min(r.cfg.Sessions, len(todo)) {
		sess, err := r.NewSession(ctx, fmt.Sprintf("s%d", len(r.sessions)+1))
		if err != nil {
			return sum, err
		}
		r.sessions = append(r.sessions, sess)
	}
	jobs := make(chan dialog.ChatConfig)
	var mu sync.Mutex
	start := time.Now()
	prog := Progress{Total: len(todo)}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		defer close(jobs)
		for _, c := range todo {
			select {
			case jobs <- c:
			case <-gctx.Done():
				return nil
			}
		}
		return nil
	})
	for _, sess := range r.sessions[:min(r.cfg.Sessions, len(todo))] {
		g.Go(func() error {
			for c := range jobs {
				d, ok, _ := r.driveOne(gctx, sess, c)
				if !ok {
					return nil // cancelled: not recorded, runs again on resume
				}
				if err := records.Append(d); err != nil {
					return err
				}
				mu.Lock()
				if d.Status == dialog.StatusOK {
					sum.OK++
				} else {
					sum.Failed++
				}
				prog.Done, prog.OK, prog.Failed, prog.Elapsed, prog.Last = prog.Done+1, sum.OK, sum.Failed, time.Since(start), d
				if r.cfg.Progress != nil {
					r.cfg.Progress(prog)
				}
				mu.Unlock()
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return sum, err
	}
	return sum, ctx.Err()
}

// driveOne drives one config and recovers the session after a failure.
// ok is false when the run was cancelled while the config was in flight;
// retry says a failure may pass on another attempt (anything but a config
// that does not fit its repository).
func (r *Runner) driveOne(ctx context.Context, sess *Session, c dialog.ChatConfig) (d dialog.Dialogue, ok, retry bool) {
	err := r.recycle(ctx, sess)
	if err == nil {
		err = r.refresh(ctx, sess)
	}
	if err != nil {
		d := dialog.Dialogue{ConfigID: c.ID, Config: c, Session: sess.ID, StartedAt: time.Now().UTC(),
			Status: dialog.StatusFailed, FailedStep: "editor", Error: err.Error()}
		return d, ctx.Err() == nil, true
	}
	// A code-server that dies mid-dialogue ends the dialogue at once: the
	// workbench would otherwise wait for its reconnection until the step's
	// timeout (minutes for an answer).
	r.mu.Lock()
	exited := r.editor.Exited()
	r.mu.Unlock()
	dctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		select {
		case <-exited:
			cancel(ErrEditorExited)
		case <-dctx.Done():
		}
	}()
	r.cfg.Assignments.set(sess.ID, &c)
	d, err = sess.Drive(dctx, c)
	r.cfg.Assignments.set(sess.ID, nil)
	d.Versions = r.Versions()
	if ctx.Err() != nil {
		return d, false, false
	}
	r.used(ctx, sess, err == nil)
	if err != nil && errors.Is(context.Cause(dctx), ErrEditorExited) {
		d.Error = fmt.Sprintf("%v mid-dialogue (the step was cut short: %s)", ErrEditorExited, d.Error)
	}
	if err == nil {
		sess.log.Info("dialogue recorded", zap.String("config", c.ID), zap.Int("turns", len(d.Turns)), zap.Float64("seconds", d.Seconds))
		return d, true, false
	}
	sess.log.Warn("config failed", zap.String("config", c.ID), zap.String("step", d.FailedStep), zap.String("error", d.Error))
	if !errors.Is(err, ErrConfig) {
		dir := filepath.Join(r.cfg.Out, "failures", safeName(c.ID))
		if aerr := saveArtifacts(ctx, dir, sess, d); aerr != nil {
			sess.log.Warn("save failure artifacts", zap.Error(aerr))
		}
		d.Artifacts = dir
		sess.reload()
	}
	return d, true, !errors.Is(err, ErrConfig)
}

// refresh makes sure the session's editor and window are alive, restarting
// a crashed code-server (once for all sessions) or a dead window.
func (r *Runner) refresh(ctx context.Context, sess *Session) error {
	r.mu.Lock()
	if !r.editor.Healthy(ctx) {
		r.log.Warn("code-server died or stopped answering; restarting it", zap.String("url", r.editor.URL()))
		r.editor.Stop()
		ed, err := StartEditor(ctx, r.cfg.Editor, r.log)
		if err != nil {
			r.mu.Unlock()
			return fmt.Errorf("restart code-server: %w", err)
		}
		r.editor = ed
		if err := r.saveProcessGroups(); err != nil {
			r.mu.Unlock()
			return err
		}
	}
	url, password := r.editor.URL(), r.editor.Password()
	r.mu.Unlock()
	if sess.editorURL != url {
		sess.editorURL, sess.password = url, password
		sess.reload()
	}
	if !sess.win.alive(ctx) {
		sess.log.Warn("browser window stopped answering; opening a new one")
		_ = sess.win.close()
		page, err := r.reopenWindow(ctx)
		if err != nil {
			return err
		}
		sess.win, sess.use = &window{page: page}, windowUse{}
		sess.reload()
	}
	return nil
}

// reopenWindow opens a window for a session whose window died. When the
// browser cannot open one (Chromium died, taking every window with it) it
// is relaunched first, once for all sessions: the others find their windows
// dead too and open theirs in the new browser.
func (r *Runner) reopenWindow(ctx context.Context) (page, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	wctx, cancel := context.WithTimeout(ctx, r.cfg.Timeouts.Step)
	p, err := r.browser.NewWindow(wctx)
	cancel()
	if err == nil {
		return p, nil
	}
	r.log.Warn("chromium cannot open a window (it died or stopped answering); relaunching it", zap.Error(err))
	r.browser.Close()
	br, lerr := launchBrowser(ctx, r.cfg.Browser, r.log)
	if lerr != nil {
		return nil, fmt.Errorf("reopen browser window: %v; relaunch chromium: %w", err, lerr)
	}
	r.browser = br
	if err := r.saveProcessGroups(); err != nil {
		return nil, err
	}
	if p, err = r.browser.NewWindow(ctx); err != nil {
		return nil, fmt.Errorf("open a window in the relaunched chromium: %w", err)
	}
	return p, nil
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

// PIDs returns code-server's process id (the leader of its process group)
// and Chromium's main process id, for resource accounting.
func (r *Runner) PIDs() (editor, browser int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.editor != nil {
		editor = r.editor.PID()
	}
	if r.browser != nil {
		browser = r.browser.PID()
	}
	return editor, browser
}
