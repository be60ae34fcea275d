package workbench

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"go.uber.org/zap"

	"dialogfarm/adapter"
	"dialogfarm/dialog"
)

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
	adapters  []*adapter.Adapter // the first one drives configs that name no plugin
	last      *adapter.Adapter   // the plugin the previous config used, for reset
	secret    string             // the run's capture secret, for {{secret}}
	capture   Exchanges
	followUps FollowUps
	dir       string // where this session writes its workspace files
	userData  string // the user-data folder of the editor the window shows
	home      string // its HOME
	editorURL string
	password  string // code-server's login password
	workspace string // the workspace file the window shows, "" before load
	repo      string // the repository it shows, "" before load
	timeouts  Timeouts
	loads     chan struct{} // held while the window loads a workspace
	turns     *UITurns      // taken for the steps up to the first query
	turnEnd   func()        // ends the turn this window holds, nil if none
	// startup waits for the browser's start-up to end, before the
	// window's first steps (see endStartup); nil: nothing to wait for.
	startup func(context.Context) error
	// selfFocus says, per plugin, whether its chat view put the keyboard
	// focus in its input on its own after the last reveal (absent: not
	// seen yet); see awaitSelfFocus.
	selfFocus map[string]bool
	log       *zap.Logger
}

// adapterFor returns the adapter that drives cfg: the one its plugin field
// names (by name or file), else the run's default.
func (s *Session) adapterFor(cfg dialog.ChatConfig) (*adapter.Adapter, error) {
	if len(s.adapters) == 0 {
		return nil, errors.New("the run has no plugin adapter")
	}
	if a := adapter.Set(s.adapters).Find(cfg.Plugin); a != nil {
		return a, nil
	}
	names := make([]string, len(s.adapters))
	for i, a := range s.adapters {
		names[i] = a.Name
	}
	return nil, fmt.Errorf("%w: plugin %q has no adapter in this run (adapters: %v)", ErrConfig, cfg.Plugin, names)
}

// explorerGrace is how long a workbench that is otherwise ready may show
// no folder in its explorer before the window loads it again (waitReady):
// a whole window load takes 5-7 s on a 2-core machine with other windows
// busy. emptyExplorerGrace is how long once the explorer shows the welcome
// of a workspace with no folder.
const (
	explorerGrace      = 20 * time.Second
	emptyExplorerGrace = 3 * time.Second
)

// open shows repo in the window, unless it already does. It waits for
// the window's turn to load (other windows' loads are each bounded by
// timeouts.Load) and then bounds its own load by timeouts.Load: with the
// wait inside that bound, at 8 windows the last ones to load failed
// open_workspace after waiting most of the 2 minutes for the others
// (editorbench 8 sims x 2 configs, 10 s model: 2-3 of 16 attempts failed
// in each of 4 runs, at login, navigation or readiness; none since).
func (s *Session) open(ctx context.Context, repo string, a *adapter.Adapter) error {
	ws, err := s.workspaceFile(repo)
	if err != nil {
		return fmt.Errorf("write workspace for %s: %w", repo, err)
	}
	if ws == s.workspace {
		return nil
	}
	// A window's load costs as much as its start-up: the log says
	// which repository each one was for, and which it left.
	s.log.Info(LoadingMessage, zap.String("repo", repo), zap.String("was", s.repo))
	s.workspace, s.repo = "", ""
	if err := s.load(ctx, ws, a); err != nil {
		return err
	}
	// Its chat view's webviews wait for the browser's start-up to end;
	// the window loaded meanwhile (see endStartup).
	if s.startup != nil {
		if err := s.startup(ctx); err != nil {
			return err
		}
	}
	s.workspace, s.repo = ws, repo
	return nil
}

// load loads the workspace file ws in the window once it is the window's
// turn (see open), and waits for the workbench and the plugin a.
func (s *Session) load(ctx context.Context, ws string, a *adapter.Adapter) error {
	select {
	case s.loads <- struct{}{}:
		defer func() { <-s.loads }()
	case <-ctx.Done():
		return fmt.Errorf("wait for another window to load: %w", ctx.Err())
	}
	if s.timeouts.Load > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.timeouts.Load)
		defer cancel()
	}
	u := s.editorURL + "/?workspace=" + url.QueryEscape(ws)
	if err := s.win.navigate(ctx, u); err != nil {
		return fmt.Errorf("navigate to %s: %w", u, err)
	}
	if err := s.win.login(ctx, s.password, s.log); err != nil {
		return fmt.Errorf("log in to code-server: %w", err)
	}
	return s.win.waitReady(ctx, a.Extension.Ready, explorerGrace, emptyExplorerGrace, s.log)
}

// LoadingMessage is what a session logs (at info) as its window loads a
// workspace.
const LoadingMessage = "loading the workspace"

// Reload forgets the loaded workspace so the next config navigates afresh:
// after a failure the window's state is unknown.
func (s *Session) Reload() { s.workspace = "" }

// reset brings the window to a neutral state between configs: no editors
// open, a new conversation in the plugin used last, its chat view hidden
// unless keepChat says the next trigger reveals that view anyway (the
// trigger then waits for the reveal to take the focus, so that the query
// is not typed while the focus moves). Each action is taken only when the
// state calls for it, as a person would.
func (s *Session) reset(ctx context.Context, keepChat bool) error {
	s.drain(ctx)
	var u ui
	var newChat adapter.NewChat
	if s.last != nil {
		u, newChat = uiOf(s.last), s.last.NewChat
	}
	st, err := s.win.eval(ctx, js("ui", `const c = ui.answer ? chatDoc(ui) : null;
		const n = c ? counts(ui, c) : {user: 0, answers: 0};
		return {
			tabs: document.querySelectorAll('.editor-group-container .tab').length,
			messages: n.user + n.answers,
			chatVisible: !!c && chatShown(ui, c),
		};`, jsChatDoc, jsChatShown, jsCounts), u)
	if err != nil {
		return fmt.Errorf("read window state: %w", err)
	}
	// Keyboard shortcuts and the view's own button, as a practised user
	// would: the command palette costs a list filter each time. The
	// actions go out one after the other and the step waits once for the
	// state they all promise: the workbench handles input in order.
	var want []cond
	if st.Get("tabs").Int() > 0 {
		if err := s.win.keys(ctx, keyControl, keyK); err != nil {
			return err
		}
		if err := s.win.keys(ctx, keyControl, keyW); err != nil {
			return err
		}
		want = append(want, cond{what: "no editor is open (Ctrl+K Ctrl+W)", js: `() => document.querySelectorAll('.editor-group-container .tab').length === 0`})
	}
	if st.Get("messages").Int() > 0 {
		if st.Get("chatVisible").Bool() && newChat.Button != "" {
			if err := s.win.clickInChat(ctx, u, newChat.Button); err != nil {
				return err
			}
		} else {
			// The palette must not open while the editors close: the
			// focus they hand back would close it.
			if err := s.win.waitAll(ctx, want...); err != nil {
				return err
			}
			want = nil
			if err := s.win.runCommand(ctx, newChat.Command); err != nil {
				return err
			}
		}
		want = append(want, cond{what: "the conversation is empty", js: js("ui", `const c = chatDoc(ui);
			if (!c) return true;
			const n = counts(ui, c);
			return n.user + n.answers === 0;`, jsChatDoc, jsCounts), args: []any{u}})
	}
	if st.Get("chatVisible").Bool() && !keepChat {
		if err := s.win.keys(ctx, keyControl, keyShift, keyE); err != nil {
			return err
		}
		want = append(want, cond{what: "the explorer replaces the chat view (Ctrl+Shift+E)", js: js("ui", `const c = chatDoc(ui);
			return !(c && chatShown(ui, c)) && [...document.querySelectorAll('.activitybar .action-item.checked .action-label')]
				.some(a => (a.getAttribute('aria-label') || '').startsWith('Explorer'));`, jsChatDoc, jsChatShown), args: []any{u}})
	}
	if len(want) == 0 {
		return nil
	}
	return s.win.waitAll(ctx, want...)
}

// Drive executes one config and returns its record. A failure is recorded
// in the Dialogue (status failed, the step, the error) and also returned
// as a *StepError so the caller can recover the window.
func (s *Session) Drive(ctx context.Context, cfg dialog.ChatConfig) (d dialog.Dialogue, err error) {
	d = dialog.Dialogue{ConfigID: cfg.ID, Config: cfg, Session: s.ID, StartedAt: time.Now().UTC()}
	defer func() {
		d.Auxiliary = append(d.Auxiliary, s.takeAuxiliary()...)
		d.Seconds = time.Since(d.StartedAt).Seconds()
	}()
	defer s.endUITurn()
	fail := func(err error) (dialog.Dialogue, error) {
		var se *StepError
		if !errors.As(err, &se) {
			se = &StepError{Step: "prepare", Err: err}
		}
		d.Status, d.FailedStep, d.Error = dialog.StatusFailed, se.Step, se.Err.Error()
		return d, se
	}
	a, err := s.adapterFor(cfg)
	if err != nil {
		return fail(err)
	}
	if err := a.CheckConfig(cfg); err != nil {
		return fail(fmt.Errorf("%w: %v", ErrConfig, err))
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
	var base counts
	// Requests from now on belong to this config's first turn (a command
	// instruction sends it from the trigger step already).
	s.capture.Expect(s.ID, cfg.ID, 1)
	if err := s.setupSteps(cfg, a, src, &base).run(ctx, &d.Setup); err != nil {
		return fail(err)
	}
	if cfg.TotalTurns() > len(cfg.Turns) && s.followUps == nil {
		return fail(fmt.Errorf("%w: %d follow-up turns need a follow-up writer (a user-simulator model or templates)", ErrConfig, cfg.TotalTurns()-len(cfg.Turns)))
	}
	for i := range cfg.TotalTurns() {
		turn, err := s.driveTurn(ctx, cfg, a, i, d.Turns, &base)
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

// endUITurn ends the window's turn at the shared renderer (UITurns), if
// it holds one.
func (s *Session) endUITurn() {
	if s.turnEnd != nil {
		s.turnEnd()
		s.turnEnd = nil
	}
}

// counts are how many user and assistant messages the chat showed before
// a turn; the turn's own messages come after them.
type counts struct{ user, answers int }

// auxiliaryTaker is implemented by a capture endpoint that keeps auxiliary
// requests (per the adapter's traffic rules) apart from chat turns.
type auxiliaryTaker interface {
	TakeAuxiliary(session string) []dialog.Exchange
}

// takeAuxiliary returns the session's auxiliary exchanges that arrived so
// far; one arriving after the dialogue ended is in the exchange log only.
func (s *Session) takeAuxiliary() []dialog.Exchange {
	if t, ok := s.capture.(auxiliaryTaker); ok {
		return t.TakeAuxiliary(s.ID)
	}
	return nil
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

// driveTurn sends turn i (unless a command already sent it), waits for the
// answer in the view and takes the matching capture exchange.
func (s *Session) driveTurn(ctx context.Context, cfg dialog.ChatConfig, a *adapter.Adapter, i int, history []dialog.Turn, base *counts) (dialog.Turn, error) {
	t := s.timeouts
	u := uiOf(a)
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
			// One read once the chat is shown: the messages before this
			// turn's and whether the input has the keyboard focus.
			v, err := s.win.poll(ctx, "the chat view is shown and ready", js("ui", `const c = chatDoc(ui);
				if (!c || !chatShown(ui, c)) return null;
				return {...counts(ui, c), focused: inputFocused(ui, c)};`, jsChatDoc, jsChatShown, jsCounts, jsInputFocused), u)
			if err != nil {
				return err
			}
			base.user, base.answers = v.Get("user").Int(), v.Get("answers").Int()
			s.capture.Expect(s.ID, cfg.ID, n)
			// Right after a reveal (the panel trigger clicks the input
			// itself) a textarea may be about to take the focus; a rich
			// editor is clicked into whatever the focus.
			focused := v.Get("focused").Bool()
			if !focused && i == 0 && cfg.Trigger != dialog.TriggerPanel && a.Input.Method != adapter.MethodType {
				focused = s.awaitSelfFocus(ctx, a, u)
			}
			return s.send(ctx, a, q, focused)
		}})
	} else {
		turn.Query = cfg.Turns[0].Query
	}
	steps = append(steps,
		Step{Name: fmt.Sprintf("turn%d_answer", n), Timeout: t.Answer, Do: func(ctx context.Context) error {
			s.endUITurn() // the steps are done; the model's time is the other windows'
			m, err := s.win.waitAnswer(ctx, u, base.user, base.answers, n)
			if err != nil {
				return err
			}
			turn.Shown = m.Text
			if m.Failed {
				return fmt.Errorf("the plugin shows an error: %s", clip(m.Text, 300))
			}
			return nil
		}},
		Step{Name: fmt.Sprintf("turn%d_capture", n), Timeout: t.Step, Do: func(ctx context.Context) error {
			ex, err := takeExchange(ctx, s.capture, s.ID, cfg.ID, n, s.log)
			if err != nil {
				return err
			}
			turn.Exchange = ex
			if ex.Error != "" {
				return fmt.Errorf("the responder failed: %s", ex.Error)
			}
			// Fidelity: the dialogue goes on with the answer the view shows,
			// which must be the one sent (compared the adapter's way).
			if !a.ShowsAnswer(turn.Shown, ex.Answer) {
				return fmt.Errorf("the view shows %q but the endpoint sent %q (answer.compare: %s)", clip(turn.Shown, 200), clip(ex.Answer, 200), a.Answer.Compare)
			}
			return nil
		}},
	)
	err := steps.run(ctx, &turn.Steps)
	return turn, err
}

// selfFocusWait bounds how long the first query waits for a revealed chat
// view to put the focus in its input on its own. The reference plugin's
// view did so 6-57 ms after the reveal (median 21 ms, 9 dialogues), where
// clicking its input took ~50 ms of CDP round trips (editorbench traces).
const selfFocusWait = 300 * time.Millisecond

// awaitSelfFocus waits up to selfFocusWait for the chat input to take the
// keyboard focus on its own, as many plugins' views do when revealed, and
// reports whether it did. What it saw is remembered per plugin: once a
// plugin's view did not, the query clicks its input at once from then on.
func (s *Session) awaitSelfFocus(ctx context.Context, a *adapter.Adapter, u ui) bool {
	if self, seen := s.selfFocus[a.Name]; seen && !self {
		return false
	}
	wctx, cancel := context.WithTimeout(ctx, selfFocusWait)
	defer cancel()
	self := s.win.waitChatInputFocused(wctx, u) == nil
	if ctx.Err() != nil {
		return false // the step ended, not the wait
	}
	if s.selfFocus == nil {
		s.selfFocus = map[string]bool{}
	}
	s.selfFocus[a.Name] = self
	return self
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

// send types the query into the shown chat view's input and sends it the
// adapter's way (a key or a button); focused says whether the input has
// the keyboard focus already.
func (s *Session) send(ctx context.Context, a *adapter.Adapter, q string, focused bool) error {
	u := uiOf(a)
	if a.Input.Method == adapter.MethodType || !focused {
		// A rich editor takes text where it was clicked; a textarea whose
		// focus moved away after an answer is clicked back into.
		if err := s.win.clickInChat(ctx, u, a.Input.Selector); err != nil {
			return err
		}
		if err := s.win.waitChatInputFocused(ctx, u); err != nil {
			return err
		}
	}
	if err := s.win.insert(ctx, q); err != nil {
		return err
	}
	// Send only once the input holds the whole query: text that went
	// elsewhere must fail here, not be sent half-typed.
	if err := s.win.waitChatInput(ctx, u, q); err != nil {
		return err
	}
	if a.Input.Send.Button != "" {
		return s.win.clickInChat(ctx, u, a.Input.Send.Button)
	}
	keys, err := parseKeys(a.Input.Send.Key)
	if err != nil {
		return err
	}
	return s.win.keys(ctx, keys...)
}
