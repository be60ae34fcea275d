package workbench

import (
	"context"
	"time"

	"dialogfarm/adapter"
)

// OpenChat loads the workspace ws (see ProbeWorkspace) with a's plugin
// ready and shows its chat view within step, which activates a plugin
// that waits for its view: the doctor's activation check.
func (s *Session) OpenChat(ctx context.Context, a *adapter.Adapter, ws string, step time.Duration) error {
	if err := s.open(ctx, ws, a); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, step)
	defer cancel()
	return openChat(ctx, s.win, a)
}

// openChat shows a plugin's chat view the way a person first would: its
// activity-bar item, else its keybinding, else its command.
func openChat(ctx context.Context, w *window, a *adapter.Adapter) error {
	u := uiOf(a)
	if err := w.waitFor(ctx, "the plugin is ready ("+a.Extension.Ready+")", `(sel) => !sel || !!document.querySelector(sel)`, a.Extension.Ready); err != nil {
		return err
	}
	var err error
	switch {
	case a.Open.ActivityBar != "":
		err = w.clickActivity(ctx, a.Open.ActivityBar)
	case a.Open.Command.Keybinding != "":
		var keys []key
		if keys, err = parseKeys(a.Open.Command.Keybinding); err == nil {
			err = w.keys(ctx, keys...)
		}
	default:
		err = w.runCommand(ctx, a.Open.Command.Title)
	}
	if err != nil {
		return err
	}
	return w.waitChat(ctx, u)
}
