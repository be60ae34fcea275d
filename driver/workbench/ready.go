package workbench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.uber.org/zap"
)

// jsReadyButExplorer holds when the workbench has loaded, extensions are
// running and the plugin's readiness sign (a selector from its adapter,
// e.g. its status item) is up.
const jsReadyButExplorer = `(sel) => !!document.querySelector('.monaco-workbench') &&
	performance.getEntriesByName('code/didLoadExtensions').length > 0 &&
	(!sel || !!document.querySelector(sel))`

// jsReady holds when, besides, the explorer shows the folder.
const jsReady = `(sel) => (` + jsReadyButExplorer + `)(sel) &&
	!!document.querySelector('.explorer-folders-view .monaco-list-row')`

// jsReadyOrEmpty is 'ready' when jsReady holds and 'empty' while the
// explorer shows, instead of the folder, the welcome of a workspace with no
// folder in it, which a workbench that has finished loading does not leave
// on its own.
const jsReadyOrEmpty = `(sel) => {
	if ((` + jsReady + `)(sel)) return 'ready';
	const welcome = document.querySelector('.explorer-viewlet .welcome-view-content');
	return welcome && welcome.offsetParent !== null ? 'empty' : null;
}`

// jsReadyMissing names the parts of jsReady that do not hold yet, with the
// page's address, what the side bar and the explorer show, and the
// workbench's notifications (an extension host that crashed says so
// there).
const jsReadyMissing = `(sel) => {
	const view = document.querySelector('.explorer-folders-view');
	const rows = view ? view.querySelectorAll('.monaco-list-row').length : 0;
	const missing = [
		!document.querySelector('.monaco-workbench') && 'the workbench',
		performance.getEntriesByName('code/didLoadExtensions').length === 0 && 'extensions loaded',
		rows === 0 && 'the explorer\'s folder',
		sel && !document.querySelector(sel) && 'the plugin\'s sign ' + sel,
	].filter(Boolean);
	const notes = [...document.querySelectorAll('.notification-list-item-message')]
		.map(n => n.textContent.trim()).filter(Boolean);
	const shown = document.querySelector('.activitybar .action-item.checked .action-label');
	const side = shown ? shown.getAttribute('aria-label') || '?' : 'no view';
	const welcome = document.querySelector('.explorer-viewlet .welcome-view-content');
	const pane = view && view.closest('.pane');
	const explorer = view
		? 'folders view ' + view.clientHeight + ' px high, ' + rows + ' rows' +
			(pane && !pane.classList.contains('expanded') ? ', collapsed' : '')
		: welcome ? 'welcome: ' + welcome.textContent.trim().slice(0, 100) : 'no folders view';
	return {missing, page: location.pathname, href: location.href, side, explorer, notes: [...new Set(notes)].slice(0, 3)};
}`

// readyState is what jsReadyMissing reports.
type readyState struct {
	Missing  []string `json:"missing"`
	Page     string   `json:"page"`
	Href     string   `json:"href"`     // the whole address, to load it again
	Side     string   `json:"side"`     // what the side bar shows
	Explorer string   `json:"explorer"` // what the explorer shows
	Notes    []string `json:"notes"`
}

func (st readyState) String() string {
	msg := "missing: " + strings.Join(st.Missing, ", ") + "; page " + st.Page + "; side bar: " + st.Side + "; explorer: " + st.Explorer
	if len(st.Notes) > 0 {
		msg += "; notifications: " + strings.Join(st.Notes, " | ")
	}
	return msg
}

// waitReady waits for the workbench and the plugin to be usable. Now and
// then (three times in about 45 editorbench runs of four or more windows
// on 2 cores) one window's explorer never shows its folder: the workbench is otherwise ready and the
// explorer shows the welcome of a workspace with no folder ("You have not
// yet added a folder to the workspace"), although the workspace file names
// one; the same address loaded again shows it. So a workbench that is ready
// but for the explorer's folder is loaded again, once: after emptyGrace
// showing that welcome, or after grace showing nothing (grace 0: never).
// The warning carries the last lines (info and above) this window's
// workbench logged (see jsWindowLog), where its reading of the workspace
// file would show.
// When the wait fails, the error names what was missing.
func (w *window) waitReady(ctx context.Context, pluginReady string, grace, emptyGrace time.Duration, log *zap.Logger) error {
	what := "the workbench is ready (extensions loaded, explorer shown, plugin ready: " + pluginReady + ")"
	if grace > 0 {
		if err := w.waitFor(ctx, what, jsReadyButExplorer, pluginReady); err != nil {
			return w.notReady(ctx, err, pluginReady)
		}
		start := time.Now()
		gctx, cancel := context.WithTimeout(ctx, grace)
		v, err := w.poll(gctx, what, jsReadyOrEmpty, pluginReady)
		cancel()
		if err == nil && v.Str() == "empty" {
			ectx, cancel := context.WithTimeout(ctx, emptyGrace)
			err = w.waitFor(ectx, what, jsReady, pluginReady)
			cancel()
		}
		if err == nil || ctx.Err() != nil || !errIsTimeout(err) {
			return w.notReady(ctx, err, pluginReady)
		}
		st, err := w.readyState(ctx, pluginReady)
		if err != nil {
			return fmt.Errorf("read the window's state to load it again: %w", err)
		}
		fields := []zap.Field{zap.Duration("after", time.Since(start).Round(time.Millisecond)),
			zap.String("explorer", st.Explorer), zap.String("side_bar", st.Side)}
		if lines, err := w.logProblems(ctx, 20); err != nil {
			fields = append(fields, zap.NamedError("window_log_error", err))
		} else {
			fields = append(fields, zap.Strings("window_log", lines))
		}
		log.Warn("the workbench is ready but its explorer shows no folder; loading the window again", fields...)
		if err := w.navigate(ctx, st.Href); err != nil {
			return err
		}
	}
	return w.notReady(ctx, w.waitFor(ctx, what, jsReady, pluginReady), pluginReady)
}

// notReady adds to a timed-out readiness wait what was missing; other
// errors (and nil) pass as they are.
func (w *window) notReady(ctx context.Context, err error, pluginReady string) error {
	if err == nil || !errIsTimeout(err) || errors.Is(ctx.Err(), context.Canceled) {
		return err // a cancelled run does not wait for the diagnosis
	}
	// The wait's own context has ended; look once more, briefly.
	st, lerr := w.readyState(context.WithoutCancel(ctx), pluginReady)
	if lerr != nil {
		return err
	}
	return fmt.Errorf("%w (%s)", err, st)
}

// readyState reads what jsReadyMissing reports, within 5 s.
func (w *window) readyState(ctx context.Context, pluginReady string) (readyState, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var st readyState
	raw, err := w.page.Eval(ctx, jsReadyMissing, pluginReady)
	if err == nil {
		err = json.Unmarshal(raw, &st)
	}
	return st, err
}
