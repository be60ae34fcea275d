package workbench

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"dialogfarm/adapter"
	"dialogfarm/dialog"
	"dialogfarm/driver/browser"
)

// Check is one thing a live validation checked, named by the adapter field
// it exercised (e.g. "commands./explain.title").
type Check struct {
	Field  string
	OK     bool
	Detail string
}

// probeFile is the file a validation or probe opens in its workspace.
const probeFile = "probe.py"

const probeSource = "def add(a, b):\n    return a + b\n\n\nprint(add(1, 2))\n"

// ProbeWorkspace writes a one-file workspace under dir (a live
// validation, a probe and an activation check open it) and returns its
// folder.
func ProbeWorkspace(dir string) (string, error) {
	ws := filepath.Join(dir, "workspace")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return "", err
	}
	return ws, os.WriteFile(filepath.Join(ws, probeFile), []byte(probeSource), 0o644)
}

// Validate checks, in the session's window, that every selector, title
// and condition of the adapter a resolves in the workspace ws (see
// ProbeWorkspace): the plugin's readiness sign, its activity-bar item,
// each command title in the palette and each context-menu label, the
// open keybinding, the webview frames and readiness, the setup steps, the
// input and send control, and a test message through the capture
// endpoint: sent, answered, done by the adapter's condition, shown as
// sent; then new chat. Each check is reported by field; a check that
// cannot run because an earlier one failed is reported as skipped.
func (s *Session) Validate(ctx context.Context, a *adapter.Adapter, ws string) []Check {
	v := &liveValidation{s: s, a: a, u: uiOf(a)}
	return v.run(ctx, ws)
}

type liveValidation struct {
	s      *Session
	a      *adapter.Adapter
	u      ui
	checks []Check
}

// check runs one check with a bound on its time and records the outcome.
func (v *liveValidation) check(ctx context.Context, field, what string, d time.Duration, f func(ctx context.Context) error) bool {
	cctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	err := f(cctx)
	c := Check{Field: field, OK: err == nil, Detail: what}
	if err != nil {
		c.Detail = what + ": " + err.Error()
	}
	v.checks = append(v.checks, c)
	return err == nil
}

func (v *liveValidation) skip(field, why string) {
	v.checks = append(v.checks, Check{Field: field, Detail: "skipped: " + why})
}

func (v *liveValidation) run(ctx context.Context, ws string) []Check {
	s, a, w := v.s, v.a, v.s.win
	step := 30 * time.Second
	if !v.check(ctx, "extension", "the workbench loads with the plugin ready ("+a.Extension.Ready+")", 3*time.Minute, func(ctx context.Context) error {
		return s.open(ctx, ws, a)
	}) {
		return v.checks
	}
	if a.Open.ActivityBar != "" {
		v.check(ctx, "open.activity_bar", fmt.Sprintf("activity bar item %q", a.Open.ActivityBar), step, func(ctx context.Context) error {
			_, err := w.point(ctx, "the activity bar shows "+a.Open.ActivityBar, `(label) => {
				const a = [...document.querySelectorAll('.activitybar .action-item .action-label')]
					.find(a => (a.getAttribute('aria-label') || '').startsWith(label));
				return a ? {x: 1, y: 1} : null; }`, a.Open.ActivityBar)
			return err
		})
	}
	titles := map[string]string{"open.command.title": a.Open.Command.Title, "new_chat.command": a.NewChat.Command}
	menus := map[string]string{"open.command.context_menu": a.Open.Command.Menu}
	for name, c := range a.Commands {
		titles["commands."+name+".title"] = c.Title
		menus["commands."+name+".context_menu"] = c.Menu
	}
	for _, field := range sortedKeys(titles) {
		if t := titles[field]; t != "" {
			v.check(ctx, field, fmt.Sprintf("command palette lists %q", t), step, func(ctx context.Context) error { return w.paletteHas(ctx, t) })
		}
	}
	if v.check(ctx, "editor", "open "+probeFile, step, func(ctx context.Context) error { return w.openFile(ctx, ws, probeFile, "") }) {
		var labels []string
		for _, field := range sortedKeys(menus) {
			if menus[field] != "" {
				labels = append(labels, menus[field])
			}
		}
		if len(labels) > 0 {
			found, err := w.contextMenuLabels(ctx)
			for _, field := range sortedKeys(menus) {
				if l := menus[field]; l != "" {
					v.check(ctx, field, fmt.Sprintf("editor context menu has %q", l), step, func(context.Context) error {
						if err != nil {
							return err
						}
						for _, f := range found {
							if f == l {
								return nil
							}
						}
						return fmt.Errorf("not among %q", found)
					})
				}
			}
		}
	}
	// Open the chat: by keybinding if the adapter has one (that checks
	// it too), else by the activity bar.
	opened := false
	if k := a.Open.Command.Keybinding; k != "" {
		opened = v.check(ctx, "open.command.keybinding", "pressing "+k+" shows the chat (webview.frames, webview.ready)", step, func(ctx context.Context) error {
			keys, err := parseKeys(k)
			if err == nil {
				err = w.keys(ctx, keys...)
			}
			if err == nil {
				err = w.waitChat(ctx, v.u)
			}
			return err
		})
	}
	if !opened && a.Open.ActivityBar != "" {
		opened = v.check(ctx, "webview", "clicking the activity bar item shows the chat (webview.frames, webview.ready)", step, func(ctx context.Context) error {
			if err := w.clickActivity(ctx, a.Open.ActivityBar); err != nil {
				return err
			}
			return w.waitChat(ctx, v.u)
		})
	}
	if !opened {
		for _, f := range []string{"setup", "input.selector", "input.send", "answer", "new_chat.button"} {
			v.skip(f, "the chat view did not open")
		}
		return v.checks
	}
	s.last = a
	if len(a.Setup) > 0 && !v.check(ctx, "setup", fmt.Sprintf("%d setup steps run in the chat view", len(a.Setup)), step, func(ctx context.Context) error {
		return w.runSetup(ctx, v.u, a.Setup, s.expander(a))
	}) {
		return v.checks
	}
	// The chat document is ready: its elements are there or not at all.
	const element = 10 * time.Second
	inputOK := v.check(ctx, "input.selector", "the chat view has "+a.Input.Selector, element, func(ctx context.Context) error {
		return w.waitFor(ctx, "the input exists", js("ui", `const c = chatDoc(ui); return !!c && !!qs(c.d, ui.input);`, jsChatDoc), v.u)
	})
	if b := a.Input.Send.Button; b != "" {
		v.check(ctx, "input.send.button", "the chat view has "+b, element, func(ctx context.Context) error {
			return w.waitFor(ctx, "the send button exists", js("ui, sel", `const c = chatDoc(ui); return !!c && !!qs(c.d, sel);`, jsChatDoc), v.u, b)
		})
	}
	if !inputOK {
		v.skip("answer", "no input to type the test message into")
	} else {
		v.testMessage(ctx, ws)
	}
	if a.NewChat.Button != "" {
		v.check(ctx, "new_chat.button", "clicking "+a.NewChat.Button+" empties the conversation", step, func(ctx context.Context) error {
			if err := w.clickInChat(ctx, v.u, a.NewChat.Button); err != nil {
				return err
			}
			return w.waitFor(ctx, "the conversation is empty", js("ui", `const c = chatDoc(ui);
				if (!c) return false;
				const n = counts(ui, c);
				return n.user + n.answers === 0;`, jsChatDoc, jsCounts), v.u)
		})
	}
	return v.checks
}

// testMessage sends a message the adapter's way and checks it is answered,
// done and shown as sent.
func (v *liveValidation) testMessage(ctx context.Context, ws string) {
	s, a := v.s, v.a
	cfg := dialog.ChatConfig{ID: "validate", Repo: ws, File: probeFile, Trigger: dialog.TriggerPanel,
		Instruction: dialog.InstructionFreeText, Turns: []dialog.TurnSpec{{Query: "dialogfarm validate: say hello"}}}
	var base counts
	turn, err := func() (dialog.Turn, error) {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		return s.driveTurn(cctx, cfg, a, 0, nil, &base)
	}()
	c := Check{Field: "answer", OK: err == nil, Detail: "a test message is sent (input.method, input.send), answered and done (answer.user, answer.selector, answer.text, answer.done)"}
	if err != nil {
		c.Detail += ": " + err.Error()
	} else {
		c.Detail += fmt.Sprintf("; the view shows %q", clip(turn.Shown, 60))
	}
	v.checks = append(v.checks, c)
}

// paletteHas opens the command palette, types title and waits for a row
// with exactly that title, then closes the palette.
func (w *window) paletteHas(ctx context.Context, title string) error {
	if err := w.keys(ctx, keyF1); err != nil {
		return err
	}
	if err := w.waitFor(ctx, "the command palette has focus", jsQuickInputFocused); err != nil {
		return err
	}
	if err := w.insert(ctx, title); err != nil {
		return err
	}
	// Rows come within moments of typing; a title missing from the
	// palette should not use up the whole check's time.
	lctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	found := w.waitFor(lctx, fmt.Sprintf("the palette lists %q", title), `(title) => (`+jsRowLabels+`)()
		.some(l => l === title || l.startsWith(title + ',') || l.startsWith(title + ' '))`, title)
	if found != nil {
		if rows, err := w.eval(ctx, jsRowLabels); err == nil {
			found = fmt.Errorf("%w (rows: %s)", found, rows.JSON("", ""))
		}
	}
	if err := w.keys(ctx, keyEscape); err != nil {
		return err
	}
	if err := w.waitFor(ctx, "the quick input closes", jsQuickInputClosed); err != nil {
		return err
	}
	return found
}

// contextMenuLabels right-clicks at the editor cursor and returns the
// labels of the context menu, then closes it.
func (w *window) contextMenuLabels(ctx context.Context) ([]string, error) {
	p, err := w.point(ctx, "the cursor is visible in the editor", `() => {
		const ed = document.querySelector('.editor-group-container.active .monaco-editor');
		const c = ed && ed.querySelector('.cursors-layer .cursor');
		if (!c) return null;
		const r = c.getBoundingClientRect();
		return r.height < 2 ? null : {x: r.left + 1, y: r.top + r.height / 2};
	}`)
	if err != nil {
		return nil, err
	}
	if err := w.click(ctx, p, browser.MouseRight); err != nil {
		return nil, err
	}
	v, err := w.poll(ctx, "the editor context menu opens", `() => {
		for (const host of document.querySelectorAll('.shadow-root-host')) {
			const root = host.shadowRoot;
			const items = root ? [...root.querySelectorAll('.monaco-menu .action-menu-item .action-label')] : [];
			if (items.length) return items.map(l => l.textContent.trim());
		}
		return null;
	}`)
	if err != nil {
		return nil, err
	}
	var labels []string
	for _, l := range v.Arr() {
		labels = append(labels, l.Str())
	}
	if err := w.keys(ctx, keyEscape); err != nil {
		return labels, err
	}
	return labels, nil
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }
