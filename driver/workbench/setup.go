package workbench

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"

	"dialogfarm/adapter"
	"dialogfarm/dialog"
	"dialogfarm/driver/browser"
)

// setupSteps opens the workspace and file, places the cursor, selects, and
// opens the assistant by the config's trigger.
func (s *Session) setupSteps(cfg dialog.ChatConfig, a *adapter.Adapter, src *sourceFile, base *counts) Steps {
	t := s.timeouts
	steps := Steps{
		// No step timeout: open bounds the load itself by t.Load, not
		// the wait for another window's load before it.
		{Name: "open_workspace", Do: func(ctx context.Context) error { return s.open(ctx, cfg.Repo, a) }},
	}
	if s.turns != nil {
		steps = append(steps, Step{Name: "ui_turn", Do: func(ctx context.Context) error {
			s.turnEnd = s.turns.take(ctx, browser.Renderer(s.win.page))
			return nil
		}})
	}
	steps = append(steps, Steps{
		{Name: "reset", Timeout: t.Step, Do: func(ctx context.Context) error {
			// The activity bar icon of a shown view hides it; after a
			// context menu the focus reached a kept view only 0.8-1.9 s
			// later in 3 of 6 tries (editorbench), slower than hiding and
			// showing it. The palette and keybinding find it shown.
			return s.reset(ctx, s.last == a && (cfg.Trigger == dialog.TriggerPalette || cfg.Trigger == dialog.TriggerKeybinding))
		}},
	}...)
	// Other files the question refers to are opened first, as tabs behind
	// the file the developer works in.
	for _, f := range cfg.OpenFiles {
		steps = append(steps, Step{Name: "open_other_file", Timeout: t.Step, Do: func(ctx context.Context) error { return s.win.openFile(ctx, cfg.Repo, f, "") }})
	}
	// The file opens with the cursor where the developer starts: the
	// selection's start (selecting then moves it to the selection's end,
	// where a config's cursor usually is), else the config's cursor, else
	// the top of the file (not wherever Quick Open's history would put it).
	// Quick Open takes the character column; the status bar shows the
	// visual one.
	start := dialog.Position{Line: 1, Col: 1}
	switch {
	case cfg.Selection != nil:
		start = cfg.Selection.Start
	case cfg.Cursor != nil:
		start = *cfg.Cursor
	}
	steps = append(steps, Step{Name: "open_file", Timeout: t.Step, Do: func(ctx context.Context) error {
		return s.win.openFile(ctx, cfg.Repo, cfg.File, fmt.Sprintf("%d:%d", start.Line, start.Col))
	}})
	if cfg.Selection == nil {
		steps = append(steps, Step{Name: "cursor", Timeout: t.Step, Do: func(ctx context.Context) error {
			return s.win.waitStatus(ctx, fmt.Sprintf("Ln %d, Col %d", start.Line, src.visualCol(start)))
		}})
	}
	if sel := cfg.Selection; sel != nil {
		steps = append(steps, Step{Name: "select", Timeout: t.Step, Do: func(ctx context.Context) error {
			return s.selectRange(ctx, src, *sel)
		}})
	}
	steps = append(steps, Step{Name: "trigger_" + cfg.Trigger, Timeout: t.Step, Do: func(ctx context.Context) error {
		return s.trigger(ctx, cfg, a, base)
	}})
	if len(a.Setup) > 0 {
		steps = append(steps, Step{Name: "plugin_setup", Timeout: t.Step, Do: func(ctx context.Context) error {
			u := uiOf(a)
			if err := s.win.waitFor(ctx, "the chat view is ready", js("ui", `return !!chatDoc(ui);`, jsChatDoc), u); err != nil {
				return err
			}
			return s.win.runSetup(ctx, u, a.Setup, s.expander(a))
		}})
	}
	return steps
}

// msgSelectByKeyboard is logged when a selection's end could not be
// clicked: the keyboard selects, a key press (and a redraw) per line.
const msgSelectByKeyboard = "the editor does not show the selection's end; extending with the keyboard"

// selectRange selects from start, where open_file put the cursor, to end,
// and waits for the status bar to count the selected characters. A
// Shift+click at the end selects in one action, after the keyboard
// scrolled the end into view if it was not (scrollToLine); a click that
// changed nothing is made once more; where the editor cannot show the end
// (or the click lands elsewhere) the keyboard extends the selection from
// where its end is.
func (s *Session) selectRange(ctx context.Context, src *sourceFile, sel dialog.Selection) error {
	startStatus := fmt.Sprintf("Ln %d, Col %d", sel.Start.Line, src.visualCol(sel.Start))
	if err := s.win.waitStatus(ctx, startStatus); err != nil {
		return err
	}
	want := fmt.Sprintf("Ln %d, Col %d (%d selected)", sel.End.Line, src.visualCol(sel.End), src.selectedCount(sel))
	from := sel.Start.Line
	why, got, err := s.clickSelectionEnd(ctx, src, sel, startStatus)
	if err == nil && why == "" && got == startStatus {
		// A click that did nothing: a hand clicks once more, then the
		// keyboard takes over.
		s.log.Debug("shift+click changed nothing; clicking again", zap.String("status", got), zap.String("want", want))
		why, got, err = s.clickSelectionEnd(ctx, src, sel, startStatus)
	}
	if err != nil {
		return err
	}
	clicked := why == ""
	if clicked {
		if got == want {
			return nil
		}
		s.log.Debug("shift+click selected elsewhere; extending with the keyboard", zap.String("status", got), zap.String("want", want))
		if _, err := fmt.Sscanf(got, "Ln %d,", &from); err != nil {
			return fmt.Errorf("read the status bar %q: %w", got, err)
		}
	} else {
		s.log.Debug(msgSelectByKeyboard, zap.Int("line", sel.End.Line), zap.String("why", why))
	}
	shift := keyShift
	if !clicked && sel.Start.Col == 1 && sel.End.Col == 1 {
		// Shift+Down from column 1 stays in column 1.
		if err := s.win.repeat(ctx, sel.End.Line-from, keyArrowDown, shift); err != nil {
			return err
		}
		return s.win.waitStatus(ctx, want)
	}
	if d := sel.End.Line - from; d >= 0 {
		err = s.win.repeat(ctx, d, keyArrowDown, shift)
	} else {
		err = s.win.repeat(ctx, -d, keyArrowUp, shift)
	}
	if err != nil {
		return err
	}
	if err := s.win.keys(ctx, shift, keyEnd); err != nil {
		return err
	}
	if err := s.win.repeat(ctx, src.lineLen(sel.End.Line)-(sel.End.Col-1), keyArrowLeft, shift); err != nil {
		return err
	}
	return s.win.waitStatus(ctx, want)
}

// clickSelectionEnd Shift+clicks at sel's end and returns what the status
// bar reads then: it changes at the next frame, and only a click that did
// nothing leaves it at startStatus. why says why nothing was clicked.
func (s *Session) clickSelectionEnd(ctx context.Context, src *sourceFile, sel dialog.Selection, startStatus string) (why, got string, err error) {
	if why, err = s.win.shiftClickText(ctx, sel.End.Line, src.visualCol(sel.End), src.shown(sel.End.Line)); err != nil || why != "" {
		return why, "", err
	}
	got, err = s.win.statusChange(ctx, startStatus, 5*time.Second)
	return "", got, err
}

// trigger opens the assistant the way the config says. For a command
// instruction the command sends its template at once; otherwise the chat
// view ends up shown, ready for typing.
func (s *Session) trigger(ctx context.Context, cfg dialog.ChatConfig, a *adapter.Adapter, base *counts) error {
	u := uiOf(a)
	s.last = a
	// One read once the plugin is ready: how many messages the chat shows.
	n, err := s.win.poll(ctx, "the plugin is ready ("+a.Extension.Ready+")", js("ui, sel", `if (sel && !document.querySelector(sel)) return null;
		const c = chatDoc(ui);
		return c ? {...counts(ui, c), shown: chatShown(ui, c)} : {user: 0, answers: 0, shown: false};`, jsChatDoc, jsChatShown, jsCounts), u, a.Extension.Ready)
	if err != nil {
		return err
	}
	base.user, base.answers = n.Get("user").Int(), n.Get("answers").Int()
	// A chat view shown already (reset kept it) is revealed again: the
	// reveal is over once the keyboard focus is in it.
	revealed := chatShownCond(u)
	if n.Get("shown").Bool() {
		revealed = cond{what: "the chat view is shown and has the keyboard focus", js: js("ui", `const c = chatDoc(ui);
			return !!c && chatShown(ui, c) && document.activeElement === c.frames[0];`, jsChatDoc, jsChatShown), args: []any{u}}
	}
	var c adapter.Command
	if cfg.Instruction == dialog.InstructionCommand {
		c, _ = a.CommandFor(cfg.Turns[0].Query)
	} else {
		c = a.Open.Command
	}
	command := cfg.Instruction == dialog.InstructionCommand
	switch cfg.Trigger {
	case dialog.TriggerPanel:
		if err = s.win.clickActivity(ctx, a.Open.ActivityBar); err == nil {
			err = s.win.clickInChat(ctx, u, a.Input.Selector)
		}
	case dialog.TriggerPalette:
		if command {
			return s.win.runCommand(ctx, c.Title) // it sent its query; the turn waits for it
		}
		return s.win.runCommand(ctx, c.Title, revealed)
	case dialog.TriggerKeybinding:
		var keys []key
		if keys, err = parseKeys(c.Keybinding); err == nil {
			err = s.win.keys(ctx, keys...)
		}
	case dialog.TriggerContextMenu:
		if command {
			return s.win.contextMenu(ctx, c.Menu) // it sent its query; the turn waits for it
		}
		return s.win.contextMenu(ctx, c.Menu, revealed)
	default:
		err = fmt.Errorf("%w: unknown trigger %q", ErrConfig, cfg.Trigger)
	}
	if err != nil {
		return err
	}
	if command {
		return nil // the command sent its query; the turn waits for it
	}
	return s.win.waitAll(ctx, revealed)
}
