package driver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/go-rod/rod/lib/input"
	"go.uber.org/zap"

	"dialogfarm/dialog"
)

// Exchanges is what the driver needs from the capture endpoint: the base
// URL a session's plugin must use, and each request it sent with its answer.
type Exchanges interface {
	BaseURL(session string) string
	Next(ctx context.Context, session string) (dialog.Exchange, error)
	// Forget drops the session's completed exchanges (between configs),
	// so memory does not grow with the number of configs driven.
	Forget(session string)
}

// FollowUps writes a follow-up query at run time from the dialogue so far.
// A config whose later turns are already written does not need one.
type FollowUps interface {
	Next(ctx context.Context, cfg dialog.ChatConfig, history []dialog.Turn) (string, error)
}

// Timeouts bound each kind of wait.
type Timeouts struct {
	Load   time.Duration // navigate to a workspace until the workbench is ready
	Step   time.Duration // one UI step
	Answer time.Duration // from sending a query to the answer marked done
}

// DefaultTimeouts suit a loaded 2-core machine and a remote model.
func DefaultTimeouts() Timeouts {
	return Timeouts{Load: 2 * time.Minute, Step: time.Minute, Answer: 5 * time.Minute}
}

// Session is one simulated developer: a browser window on the editor, tied
// to one capture session.
type Session struct {
	ID        string
	win       *window
	ui        PluginUI
	capture   Exchanges
	followUps FollowUps
	dir       string // where this session writes its workspace files
	editorURL string
	workspace string // the workspace file the window shows, "" before load
	timeouts  Timeouts
	loads     chan struct{} // held while the window loads a workspace
	log       *zap.Logger
}

// workspaceFile writes (once) a .code-workspace that opens repo with the
// plugin pointed at this session's capture URL. The per-session file is
// what lets several windows on one code-server talk to separate sessions.
func (s *Session) workspaceFile(repo string) (string, error) {
	abs, err := filepath.Abs(repo)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(abs))
	path := filepath.Join(s.dir, "workspaces", s.ID, filepath.Base(abs)+"-"+hex.EncodeToString(sum[:4])+".code-workspace")
	ws := map[string]any{
		"folders": []map[string]string{{"path": abs}},
		"settings": map[string]any{
			"askplugin.baseUrl": s.capture.BaseURL(s.ID),
		},
	}
	data, err := json.MarshalIndent(ws, "", "  ")
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	return path, os.WriteFile(path, data, 0o644)
}

// open shows repo in the window, unless it already does.
func (s *Session) open(ctx context.Context, repo string) error {
	ws, err := s.workspaceFile(repo)
	if err != nil {
		return fmt.Errorf("write workspace for %s: %w", repo, err)
	}
	if ws == s.workspace {
		return nil
	}
	s.workspace = ""
	select {
	case s.loads <- struct{}{}:
		defer func() { <-s.loads }()
	case <-ctx.Done():
		return fmt.Errorf("wait for another window to load: %w", ctx.Err())
	}
	u := s.editorURL + "/?workspace=" + url.QueryEscape(ws)
	if err := s.win.page.Context(ctx).Navigate(u); err != nil {
		return fmt.Errorf("navigate to %s: %w", u, err)
	}
	if err := s.win.waitReady(ctx, s.ui.StatusItem); err != nil {
		return err
	}
	s.workspace = ws
	return nil
}

// reload forgets the loaded workspace so the next config navigates afresh:
// after a failure the window's state is unknown.
func (s *Session) reload() { s.workspace = "" }

// reset brings the window to a neutral state between configs: no editors
// open, a new conversation, the chat view hidden. Each action is taken only
// when the state calls for it, as a person would.
func (s *Session) reset(ctx context.Context) error {
	s.drain(ctx)
	st, err := s.win.eval(ctx, `(ext, label) => { `+jsChatDoc+jsChatShown+` const c = chatDoc(ext);
		return {
			tabs: document.querySelectorAll('.editor-group-container .tab').length,
			messages: c ? c.d.querySelectorAll('[data-testid="message"]').length : 0,
			chatVisible: !!c && chatShown(label),
		}; }`, s.ui.ExtensionID, s.ui.ActivityLabel)
	if err != nil {
		return fmt.Errorf("read window state: %w", err)
	}
	// Keyboard shortcuts and the view's own button, as a practised user
	// would: the command palette costs a list filter each time.
	if st.Value.Get("tabs").Int() > 0 {
		if err := s.win.keys(input.ControlLeft, input.KeyK); err != nil {
			return err
		}
		if err := s.win.keys(input.ControlLeft, input.KeyW); err != nil {
			return err
		}
		if err := s.win.waitFor(ctx, "no editor is open (Ctrl+K Ctrl+W)", `() => document.querySelectorAll('.editor-group-container .tab').length === 0`); err != nil {
			return err
		}
	}
	if st.Value.Get("messages").Int() > 0 {
		var err error
		if st.Value.Get("chatVisible").Bool() {
			err = s.win.clickChatButton(ctx, s.ui, "ask-new")
		} else {
			err = s.win.runCommand(ctx, s.ui.NewChat)
		}
		if err != nil {
			return err
		}
		if err := s.win.waitFor(ctx, "the conversation is empty", `(ext) => { `+jsChatDoc+` const c = chatDoc(ext);
			return !c || c.d.querySelectorAll('[data-testid="message"]').length === 0; }`, s.ui.ExtensionID); err != nil {
			return err
		}
	}
	if st.Value.Get("chatVisible").Bool() {
		if err := s.win.keys(input.ControlLeft, input.ShiftLeft, input.KeyE); err != nil {
			return err
		}
		if err := s.win.waitFor(ctx, "the explorer replaces the chat view (Ctrl+Shift+E)", `(label) => { `+jsChatShown+`
			return !chatShown(label) && [...document.querySelectorAll('.activitybar .action-item.checked .action-label')]
				.some(a => (a.getAttribute('aria-label') || '').startsWith('Explorer')); }`, s.ui.ActivityLabel); err != nil {
			return err
		}
	}
	return nil
}

// drain discards exchanges of this session that no turn took, e.g. from a
// config that failed after its request went out, so they cannot be
// mistaken for the next config's, and lets the capture endpoint forget
// the session's exchanges: they are in the record and exchanges.jsonl.
func (s *Session) drain(ctx context.Context) {
	done, cancel := context.WithCancel(ctx)
	cancel()
	defer s.capture.Forget(s.ID)
	for {
		ex, err := s.capture.Next(done, s.ID)
		if err != nil && ex.Seq == 0 {
			return
		}
		s.log.Debug("discarded an exchange no turn took", zap.Int("seq", ex.Seq))
	}
}

// Drive executes one config and returns its record. A failure is recorded
// in the Dialogue (status failed, the step, the error) and also returned
// as a *StepError so the caller can recover the window.
func (s *Session) Drive(ctx context.Context, cfg dialog.ChatConfig) (d dialog.Dialogue, err error) {
	d = dialog.Dialogue{ConfigID: cfg.ID, Config: cfg, Session: s.ID, StartedAt: time.Now().UTC()}
	defer func() { d.Seconds = time.Since(d.StartedAt).Seconds() }()
	fail := func(err error) (dialog.Dialogue, error) {
		var se *StepError
		if !errors.As(err, &se) {
			se = &StepError{Step: "prepare", Err: err}
		}
		d.Status, d.FailedStep, d.Error = dialog.StatusFailed, se.Step, se.Err.Error()
		return d, se
	}
	src, err := readSource(cfg.Repo, cfg.File, 4)
	if err != nil {
		return fail(fmt.Errorf("%w: read %s: %v", ErrConfig, cfg.File, err))
	}
	for name, p := range positions(cfg) {
		if err := src.check(p); err != nil {
			return fail(fmt.Errorf("%w: %s: %v", ErrConfig, name, err))
		}
	}
	if err := s.setupSteps(cfg, src).run(ctx, &d.Setup); err != nil {
		return fail(err)
	}
	if cfg.TotalTurns() > len(cfg.Turns) && s.followUps == nil {
		return fail(fmt.Errorf("%w: %d follow-up turns need a follow-up writer (a user-simulator model or templates)", ErrConfig, cfg.TotalTurns()-len(cfg.Turns)))
	}
	for i := range cfg.TotalTurns() {
		turn, err := s.driveTurn(ctx, cfg, i, d.Turns)
		d.Turns = append(d.Turns, turn)
		if turn.Offline {
			d.Offline = true
		}
		if err != nil {
			return fail(err)
		}
	}
	d.Status = dialog.StatusOK
	return d, nil
}

// positions lists the config's positions by field name.
func positions(cfg dialog.ChatConfig) map[string]dialog.Position {
	m := map[string]dialog.Position{}
	if cfg.Cursor != nil {
		m["cursor"] = *cfg.Cursor
	}
	if cfg.Selection != nil {
		m["selection.start"], m["selection.end"] = cfg.Selection.Start, cfg.Selection.End
	}
	return m
}

// setupSteps opens the workspace and file, places the cursor, selects, and
// opens the assistant by the config's trigger.
func (s *Session) setupSteps(cfg dialog.ChatConfig, src *sourceFile) Steps {
	t := s.timeouts
	steps := Steps{
		{Name: "open_workspace", Timeout: t.Load, Do: func(ctx context.Context) error { return s.open(ctx, cfg.Repo) }},
		{Name: "reset", Timeout: t.Step, Do: s.reset},
	}
	// Other files the question refers to are opened first, as tabs behind
	// the file the developer works in.
	for _, f := range cfg.OpenFiles {
		steps = append(steps, Step{Name: "open_other_file", Timeout: t.Step, Do: func(ctx context.Context) error { return s.win.openFile(ctx, f) }})
	}
	steps = append(steps, Step{Name: "open_file", Timeout: t.Step, Do: func(ctx context.Context) error { return s.win.openFile(ctx, cfg.File) }})
	if cfg.Cursor == nil && cfg.Selection == nil {
		// No position asked for: the cursor goes to the top of the file
		// (Ctrl+Home), not wherever Quick Open's history put it.
		steps = append(steps, Step{Name: "cursor", Timeout: t.Step, Do: func(ctx context.Context) error {
			if err := s.win.keys(input.ControlLeft, input.Home); err != nil {
				return err
			}
			return s.win.waitStatus(ctx, "Ln 1, Col 1")
		}})
	}
	if c := cfg.Cursor; c != nil {
		steps = append(steps, Step{Name: "cursor", Timeout: t.Step, Do: func(ctx context.Context) error {
			return s.win.goTo(ctx, c.Line, c.Col, src.visualCol(*c))
		}})
	}
	if sel := cfg.Selection; sel != nil {
		steps = append(steps, Step{Name: "select", Timeout: t.Step, Do: func(ctx context.Context) error {
			return s.selectRange(ctx, src, *sel)
		}})
	}
	return append(steps, Step{Name: "trigger_" + cfg.Trigger, Timeout: t.Step, Do: func(ctx context.Context) error {
		return s.trigger(ctx, cfg)
	}})
}

// selectRange selects from start to end with the keyboard: go to start,
// Shift+Down to the end line, then Shift+End and Shift+Left to the end
// column. It waits for the status bar to count the selected characters.
func (s *Session) selectRange(ctx context.Context, src *sourceFile, sel dialog.Selection) error {
	if err := s.win.goTo(ctx, sel.Start.Line, sel.Start.Col, src.visualCol(sel.Start)); err != nil {
		return err
	}
	shift := input.ShiftLeft
	if err := s.win.repeat(sel.End.Line-sel.Start.Line, input.ArrowDown, shift); err != nil {
		return err
	}
	if !(sel.Start.Col == 1 && sel.End.Col == 1) {
		if err := s.win.keys(shift, input.End); err != nil {
			return err
		}
		if err := s.win.repeat(src.lineLen(sel.End.Line)-(sel.End.Col-1), input.ArrowLeft, shift); err != nil {
			return err
		}
	}
	n := src.selectedCount(sel)
	want := fmt.Sprintf("Ln %d, Col %d (%d selected)", sel.End.Line, src.visualCol(sel.End), n)
	return s.win.waitStatus(ctx, want)
}

// trigger opens the assistant the way the config says. For a command
// instruction the command sends its template at once; otherwise the chat
// input ends up focused, ready for typing.
func (s *Session) trigger(ctx context.Context, cfg dialog.ChatConfig) error {
	ui := s.ui
	if cfg.Instruction == dialog.InstructionCommand {
		cmd := cfg.Turns[0].Query
		title := dialog.CommandTitles[cmd]
		var err error
		switch cfg.Trigger {
		case dialog.TriggerPalette:
			err = s.win.runCommand(ctx, title)
		case dialog.TriggerKeybinding:
			err = s.win.keys(ui.CommandKeys[cmd]...)
		case dialog.TriggerContextMenu:
			err = s.win.contextMenu(ctx, title)
		default:
			err = fmt.Errorf("%w: trigger %q cannot run a command", ErrConfig, cfg.Trigger)
		}
		if err != nil {
			return err
		}
		return s.win.waitTurnSent(ctx, ui, 1)
	}
	var err error
	switch cfg.Trigger {
	case dialog.TriggerPanel:
		if err = s.win.clickActivity(ctx, ui); err == nil {
			if err = s.win.waitChat(ctx, ui); err == nil {
				err = s.win.clickChatInput(ctx, ui)
			}
		}
	case dialog.TriggerPalette:
		err = s.win.runCommand(ctx, ui.OpenChat)
	case dialog.TriggerKeybinding:
		err = s.win.keys(ui.OpenChatKeys...)
	case dialog.TriggerContextMenu:
		err = s.win.contextMenu(ctx, ui.OpenChat)
	default:
		err = fmt.Errorf("%w: unknown trigger %q", ErrConfig, cfg.Trigger)
	}
	if err != nil {
		return err
	}
	return s.win.waitChatInputFocused(ctx, ui)
}

// driveTurn sends turn i (unless a command already sent it), waits for the
// answer in the view and takes the matching capture exchange.
func (s *Session) driveTurn(ctx context.Context, cfg dialog.ChatConfig, i int, history []dialog.Turn) (dialog.Turn, error) {
	t := s.timeouts
	turn := dialog.Turn{}
	n := i + 1
	steps := Steps{}
	if i > 0 || cfg.Instruction != dialog.InstructionCommand {
		steps = append(steps, Step{Name: fmt.Sprintf("turn%d_query", n), Timeout: t.Step, Do: func(ctx context.Context) error {
			q, err := s.query(ctx, cfg, i, history)
			if err != nil {
				return err
			}
			turn.Query = q
			return s.send(ctx, q, n)
		}})
	} else {
		turn.Query = cfg.Turns[0].Query
	}
	steps = append(steps,
		Step{Name: fmt.Sprintf("turn%d_answer", n), Timeout: t.Answer, Do: func(ctx context.Context) error {
			if err := s.win.waitTurnSent(ctx, s.ui, n); err != nil {
				return err
			}
			m, err := s.win.waitAnswer(ctx, s.ui, n)
			if err != nil {
				return err
			}
			turn.Shown = m.Text
			if m.State == "error" {
				return fmt.Errorf("the plugin shows an error: %s", clip(m.Text, 300))
			}
			return nil
		}},
		Step{Name: fmt.Sprintf("turn%d_capture", n), Timeout: t.Step, Do: func(ctx context.Context) error {
			ex, err := s.capture.Next(ctx, s.ID)
			if err != nil {
				return fmt.Errorf("take the captured request: %w", err)
			}
			turn.Exchange = ex
			if ex.Error != "" {
				return fmt.Errorf("the responder failed: %s", ex.Error)
			}
			return nil
		}},
	)
	err := steps.run(ctx, &turn.Steps)
	return turn, err
}

// query returns the text to type for turn i: the config's, or one the
// follow-up writer makes from the dialogue so far.
func (s *Session) query(ctx context.Context, cfg dialog.ChatConfig, i int, history []dialog.Turn) (string, error) {
	if i < len(cfg.Turns) {
		return cfg.Turns[i].Query, nil
	}
	q, err := s.followUps.Next(ctx, cfg, history)
	if err != nil {
		return "", fmt.Errorf("write follow-up %d: %w", i+1, err)
	}
	return q, nil
}

// send types the query into the chat input and presses Enter.
func (s *Session) send(ctx context.Context, q string, turn int) error {
	quick, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := s.win.waitChatInputFocused(quick, s.ui); err != nil {
		// Focus can move away after an answer; click back into the input.
		if err := s.win.clickChatInput(ctx, s.ui); err != nil {
			return err
		}
		if err := s.win.waitChatInputFocused(ctx, s.ui); err != nil {
			return err
		}
	}
	if err := s.win.insert(q); err != nil {
		return err
	}
	// Enter only once the input holds the whole query: text that went
	// elsewhere must fail here, not be sent half-typed.
	if err := s.win.waitChatInput(ctx, s.ui, q); err != nil {
		return err
	}
	return s.win.keys(input.Enter)
}
