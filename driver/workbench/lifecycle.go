package workbench

import (
	"context"

	"go.uber.org/zap"

	"dialogfarm/adapter"
	"dialogfarm/driver/browser"
	"dialogfarm/driver/editor"
)

// Config is what a Session gets from the run and the simulator slot that
// owns it: everything it needs to drive dialogues in one window.
type Config struct {
	// ID names the session's capture session.
	ID string
	// Adapters are the run's plugins; the first one drives the configs
	// that name no plugin.
	Adapters []*adapter.Adapter
	// Secret is the run's capture secret ({{secret}}).
	Secret    string
	Capture   Exchanges
	FollowUps FollowUps
	// Dir is where the session writes its workspace files.
	Dir string
	// UserData and Home are the user-data folder and HOME of the editor
	// the window shows ({{user_data}}, {{home}}).
	UserData, Home string
	Timeouts       Timeouts
	// Loads is held while a window loads a workspace: one window of the
	// run loads at a time (loads saturate the CPU).
	Loads chan struct{}
	// Turns are the run's turns at the shared renderer; nil: none.
	Turns *UITurns
	// Startup waits for the browser's start-up to end, before the
	// window's first steps (see browser.Chromium.WaitStartup); nil:
	// nothing to wait for.
	Startup func(context.Context) error
	Log     *zap.Logger
}

// Editor is the editor a window shows, as the steps need it: where to
// log in, and its plugin's activation failure, which ends every wait.
type Editor interface {
	URL() string
	Password() string
	Failed() <-chan struct{}
	Err() error
}

var _ Editor = (*editor.Editor)(nil)

// NewSession returns the session of a simulator whose window is page,
// showing the editor ed.
func NewSession(cfg Config, page browser.Page, ed Editor) *Session {
	return &Session{
		ID: cfg.ID, win: &window{page: page, fail: ed}, adapters: cfg.Adapters, secret: cfg.Secret,
		capture: cfg.Capture, followUps: cfg.FollowUps, dir: cfg.Dir, userData: cfg.UserData, home: cfg.Home,
		editorURL: ed.URL(), password: ed.Password(), timeouts: cfg.Timeouts, loads: cfg.Loads, turns: cfg.Turns,
		startup: cfg.Startup, log: cfg.Log,
	}
}

// SetEditor points the window at ed, the editor it shows now (the same,
// or one started again after a crash); a new address means the next
// config loads its workspace afresh.
func (s *Session) SetEditor(ed Editor) {
	s.win.fail = ed
	if s.editorURL != ed.URL() {
		s.editorURL, s.password = ed.URL(), ed.Password()
		s.Reload()
	}
}

// Alive reports whether the window still evaluates script.
func (s *Session) Alive(ctx context.Context) bool { return s.win.alive(ctx) }

// ReplaceWindow closes the window and goes on in the one open returns
// (a fresh window, or one in a relaunched browser); the next config loads
// its workspace in it.
func (s *Session) ReplaceWindow(ctx context.Context, open func(context.Context) (browser.Page, error)) error {
	_ = s.win.close()
	page, err := open(ctx)
	if err != nil {
		return err
	}
	s.win = &window{page: page, fail: s.win.fail}
	s.Reload()
	return nil
}

// Page is the session's window as it is now (ReplaceWindow replaces
// it), for the slot to read its heap (browser.Page.HeapUsed).
func (s *Session) Page() browser.Page { return s.win.page }
