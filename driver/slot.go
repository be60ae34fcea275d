package driver

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"go.uber.org/zap"

	"dialogfarm/adapter"
	"dialogfarm/dialog"
	"dialogfarm/driver/browser"
	"dialogfarm/driver/editor"
	"dialogfarm/driver/workbench"
)

// slot is one simulator of the run, the one place that knows what a
// simulator is: a browser window on the editor every slot shares
// (isolation window), or a browser window on an editor of its own
// (isolation editor: its own user-data, HOME, XDG folders and extension
// state, the run's installed extensions shared, in OUT/editors/<id>),
// for a plugin that keeps its endpoint in global state or a global file.
// The farm's workers drive each config on a slot (DriveSlot); a slot
// recovers its editor and window between configs: a crashed editor is
// started again (the shared one once for all slots, an own one for its
// slot alone), a dead window reopened, a used one replaced (Recycle).
type slot struct {
	sess *workbench.Session
	use  windowUse // what its window did since it was opened, for Recycle
	log  *zap.Logger
	// editor is the slot's own editor, nil on the shared one; cfg is
	// its config (its own folder, the run's password and extensions).
	editor *editor.Editor
	cfg    editor.Config
}

// OpenSessions opens simulator slots until n are open; they are kept for
// later calls.
func (r *Runner) OpenSessions(ctx context.Context, n int) error {
	for {
		r.mu.Lock()
		open := len(r.slots)
		r.mu.Unlock()
		if open >= n {
			return nil
		}
		if _, err := r.NewSession(ctx, fmt.Sprintf("s%d", open+1)); err != nil {
			return err
		}
	}
}

// NewSession opens a simulator slot (its window and, with isolation
// editor, its own editor) and returns its session; id names its capture
// session. The slot is the Runner's until Stop.
func (r *Runner) NewSession(ctx context.Context, id string) (*workbench.Session, error) {
	sl := &slot{}
	ed, edCfg := r.sharedEditor(), r.cfg.Editor
	if r.isolation == adapter.IsolationEditor {
		sl.cfg = r.cfg.Editor
		sl.cfg.Dir = filepath.Join(r.cfg.Out, "editors", safeName(id))
		var err error
		if ed, err = r.startSlotEditor(ctx, sl.cfg, id); err != nil {
			return nil, err
		}
		sl.editor, edCfg = ed, sl.cfg
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	page, err := r.browser.NewWindow(ctx)
	if err != nil {
		if sl.editor != nil {
			sl.editor.Stop()
		}
		return nil, err
	}
	sl.log = r.log.With(zap.String("session", id))
	sl.sess = workbench.NewSession(workbench.Config{
		ID: id, Adapters: r.cfg.Adapters, Secret: r.secret(), Capture: r.capture, FollowUps: r.followUps,
		Dir: r.cfg.Out, UserData: edCfg.UserData(), Home: edCfg.Home(), Timeouts: r.cfg.Timeouts,
		Loads: r.loads, Turns: r.turns, Startup: r.waitStartup, Log: sl.log,
	}, page, ed)
	r.slots = append(r.slots, sl)
	if sl.editor != nil {
		if err := r.saveProcessGroups(); err != nil {
			return nil, err
		}
	}
	return sl.sess, nil
}

// sharedEditor is the editor the slots share, nil with isolation editor.
func (r *Runner) sharedEditor() *editor.Editor {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.editor
}

// slotEditors are the slots' own editors. The caller holds r.mu.
func (r *Runner) slotEditors() []*editor.Editor {
	var out []*editor.Editor
	for _, sl := range r.slots {
		if sl.editor != nil {
			out = append(out, sl.editor)
		}
	}
	return out
}

// startSlotEditor writes what the adapters put into the editor of session
// id (their files and keybindings, with that session's placeholders) and
// starts it.
func (r *Runner) startSlotEditor(ctx context.Context, cfg editor.Config, id string) (*editor.Editor, error) {
	if err := cfg.WriteFiles(r.sessionVars(id), r.cfg.Adapters); err != nil {
		return nil, err
	}
	ed, err := editor.Start(ctx, cfg, r.log.With(zap.String("session", id)))
	if err != nil {
		return nil, fmt.Errorf("start the editor of simulator %s: %w", id, err)
	}
	r.mu.Lock()
	r.version = ed.Version()
	r.mu.Unlock()
	return ed, nil
}

// DriveSlot drives one config on the i-th simulator opened by
// OpenSessions, for a caller that schedules configs (the farm's
// workers). It returns an error when the config was not driven to an
// outcome: ctx ended while it was in flight, or the plugin failed to
// activate (an *editor.ActivationError, which no other attempt on this editor
// gets past). retry says a failed dialogue may pass on another attempt.
func (r *Runner) DriveSlot(ctx context.Context, i int, c dialog.ChatConfig) (d dialog.Dialogue, retry bool, err error) {
	r.mu.Lock()
	n := len(r.slots)
	var sl *slot
	if i >= 0 && i < n {
		sl = r.slots[i]
	}
	r.mu.Unlock()
	if sl == nil {
		return d, false, fmt.Errorf("simulator slot %d: only %d are open", i, n)
	}
	return r.driveOne(ctx, sl, c)
}

// driveOne drives one config on a slot and recovers the slot after a
// failure. retry says a failure may pass on another attempt (anything but
// a config that does not fit its repository). err is set when the config
// was not driven to an outcome: the run was cancelled while it was in
// flight, or the plugin failed to activate (an *editor.ActivationError: no
// dialogue on this editor can pass, and the run should stop and say why).
func (r *Runner) driveOne(ctx context.Context, sl *slot, c dialog.ChatConfig) (d dialog.Dialogue, retry bool, err error) {
	sess := sl.sess
	err = r.recycle(ctx, sl)
	var ed *editor.Editor
	if err == nil {
		ed, err = r.refresh(ctx, sl)
	}
	if err != nil {
		if ctx.Err() != nil {
			return d, false, fmt.Errorf("config %s not finished: %w", c.ID, context.Cause(ctx))
		}
		d := dialog.Dialogue{ConfigID: c.ID, Config: c, Session: sess.ID, StartedAt: time.Now().UTC(),
			Status: dialog.StatusFailed, FailedStep: "editor", Error: err.Error()}
		return d, true, nil
	}
	if ferr := ed.Err(); ferr != nil {
		return d, false, fmt.Errorf("config %s: %w", c.ID, ferr)
	}
	// A code-server that dies mid-dialogue ends the dialogue at once: the
	// workbench would otherwise wait for its reconnection until the step's
	// timeout (minutes for an answer).
	dctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		select {
		case <-ed.Exited():
			cancel(editor.ErrExited)
		case <-dctx.Done():
		}
	}()
	if r.starts != nil {
		if err := r.starts.Wait(ctx); err != nil {
			return d, false, fmt.Errorf("config %s not started: %w", c.ID, context.Cause(ctx))
		}
	}
	r.cfg.Assignments.set(sess.ID, &c)
	d, err = sess.Drive(dctx, c)
	r.cfg.Assignments.set(sess.ID, nil)
	d.Versions = r.Versions()
	if ctx.Err() != nil {
		return d, false, fmt.Errorf("config %s not finished: %w", c.ID, context.Cause(ctx))
	}
	var ae *editor.ActivationError
	if errors.As(err, &ae) {
		sl.log.Error("the plugin failed to activate", zap.String("extension", ae.Extension), zap.Strings("log", ae.Lines))
		return d, false, fmt.Errorf("config %s: %w", c.ID, ae)
	}
	r.used(ctx, sl, err == nil)
	if err != nil && errors.Is(context.Cause(dctx), editor.ErrExited) {
		d.Error = fmt.Sprintf("%v mid-dialogue (the step was cut short: %s)", editor.ErrExited, d.Error)
	}
	if err == nil {
		sl.log.Info("dialogue recorded", zap.String("config", c.ID), zap.Int("turns", len(d.Turns)), zap.Float64("seconds", d.Seconds))
		return d, false, nil
	}
	sl.log.Warn("config failed", zap.String("config", c.ID), zap.String("step", d.FailedStep), zap.String("error", d.Error))
	if !errors.Is(err, workbench.ErrConfig) {
		dir := filepath.Join(r.cfg.Out, "failures", safeName(c.ID))
		if aerr := sess.SaveArtifacts(ctx, dir, d); aerr != nil {
			sl.log.Warn("save failure artifacts", zap.Error(aerr))
		}
		d.Artifacts = dir
		sess.Reload()
	}
	return d, !errors.Is(err, workbench.ErrConfig), nil
}

// refresh makes sure the slot's editor and window are alive, starting a
// crashed code-server again (the shared one once for all slots, an own
// one for its slot) or opening a dead window again, and returns the
// editor the window shows.
func (r *Runner) refresh(ctx context.Context, sl *slot) (*editor.Editor, error) {
	sess := sl.sess
	ed, err := r.liveEditor(ctx, sl)
	if err != nil {
		return nil, err
	}
	sess.SetEditor(ed)
	if !sess.Alive(ctx) {
		sl.log.Warn("browser window stopped answering; opening a new one")
		if err := sess.ReplaceWindow(ctx, r.reopenWindow); err != nil {
			return nil, err
		}
		sl.use = windowUse{}
	}
	return ed, nil
}

// liveEditor returns the slot's editor once it answers, starting it again
// when it died or stopped answering.
func (r *Runner) liveEditor(ctx context.Context, sl *slot) (*editor.Editor, error) {
	if sl.editor == nil {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.editor.Healthy(ctx) {
			return r.editor, nil
		}
		r.log.Warn("code-server died or stopped answering; restarting it", zap.String("url", r.editor.URL()))
		r.editor.Stop()
		ed, err := editor.Start(ctx, r.cfg.Editor, r.log)
		if err != nil {
			return nil, fmt.Errorf("restart code-server: %w", err)
		}
		r.editor = ed
		return ed, r.saveProcessGroups()
	}
	// Only this slot's worker uses its editor: the others go on.
	if sl.editor.Healthy(ctx) {
		return sl.editor, nil
	}
	sl.log.Warn("the simulator's code-server died or stopped answering; restarting it", zap.String("url", sl.editor.URL()))
	sl.editor.Stop()
	ed, err := r.startSlotEditor(ctx, sl.cfg, sl.sess.ID)
	if err != nil {
		return nil, fmt.Errorf("restart code-server: %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	sl.editor = ed
	return ed, r.saveProcessGroups()
}

// reopenWindow opens a window for a session whose window died. When the
// browser cannot open one (Chromium died, taking every window with it) it
// is relaunched first, once for all sessions: the others find their windows
// dead too and open theirs in the new browser.
func (r *Runner) reopenWindow(ctx context.Context) (browser.Page, error) {
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
	br, lerr := browser.Launch(ctx, r.cfg.Browser, r.log)
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
