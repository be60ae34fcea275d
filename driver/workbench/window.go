package workbench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ysmood/gson"

	"dialogfarm/driver/browser"
)

// window wraps one browser window showing the workbench. Its methods act
// like a person (keys, text, mouse) and observe the page by reading the DOM;
// they never call into the editor's API.
type window struct {
	page browser.Page
	// fail, when set, ends every wait at once once it failed: the
	// editor the window shows, whose plugin failed to activate.
	fail failure
}

// eval runs a JS function expression on the page and returns its value.
func (w *window) eval(ctx context.Context, js string, args ...any) (gson.JSON, error) {
	raw, err := w.page.Eval(ctx, js, args...)
	if err != nil {
		return gson.JSON{}, err
	}
	var v gson.JSON
	if err := v.UnmarshalJSON(raw); err != nil {
		return gson.JSON{}, fmt.Errorf("decode the page's answer: %w", err)
	}
	return v, nil
}

// navigate starts loading url in the window.
func (w *window) navigate(ctx context.Context, url string) error {
	if err := w.page.Navigate(ctx, url); err != nil {
		return fmt.Errorf("open %s: %w", url, err)
	}
	return nil
}

// close closes the window.
func (w *window) close() error { return w.page.Close() }

// jsPoll wraps a predicate so that one evaluation waits in the page: it
// checks the predicate when the DOM changes (a MutationObserver on the page
// and on every same-origin frame inside it, such as a plugin's webview),
// when focus or the selection moves, and at the latest every tick milliseconds (for
// states no DOM change shows, e.g. a performance mark or a frame that
// navigated); it resolves with the predicate's first truthy value, or with
// null after slice milliseconds (the Go side then checks its context and
// waits again). One DevTools round trip per slice; an idle window costs
// almost nothing while it waits, unlike checking every 15 ms.
const jsPoll = `(pred, slice, tick, ...a) => new Promise((resolve) => {
	let done = false, timer = 0;
	const observers = [], docs = new Set();
	const events = ['focusin', 'focusout', 'selectionchange', 'input', 'keyup'];
	const finish = (v) => {
		done = true;
		clearTimeout(timer);
		observers.forEach((o) => o.disconnect());
		docs.forEach((d) => events.forEach((e) => d.removeEventListener(e, check, true)));
		resolve(v);
	};
	const watch = (doc) => {
		if (!doc || docs.has(doc)) return;
		docs.add(doc);
		const o = new MutationObserver(check);
		o.observe(doc, {subtree: true, childList: true, attributes: true, characterData: true});
		observers.push(o);
		events.forEach((e) => doc.addEventListener(e, check, true));
	};
	const scan = (doc) => {
		if (!doc) return;
		watch(doc);
		for (const f of doc.querySelectorAll('iframe')) {
			try { scan(f.contentDocument); } catch (e) {}
		}
	};
	const t0 = performance.now();
	// A predicate that acts (a setup step's click moves the focus) fires
	// the events check listens to while it runs: it is not run again
	// from inside itself.
	let running = false;
	function check() {
		if (done || running) return;
		let v = null;
		running = true;
		try { v = pred(...a); } catch (e) { v = null; } finally { running = false; }
		if (v) return finish(v);
		if (performance.now() - t0 > slice) return finish(null);
	}
	const next = () => {
		if (done) return;
		scan(document);
		check();
		// The slice ends on time even when it is shorter than a tick.
		if (!done) timer = setTimeout(next, Math.min(tick, Math.max(slice - (performance.now() - t0), 0) + 1));
	};
	next();
})`

// pace is how a poll waits in the page: its check when no DOM change
// shows and the longest one evaluation waits before the Go side looks at
// its context.
type pace struct{ tick, slice time.Duration }

var (
	// brisk is for the UI's own reactions: a state no DOM change shows
	// is seen within 50 ms.
	brisk = pace{tick: 50 * time.Millisecond, slice: 2 * time.Second}
	// patient is for waiting on the model: what it shows changes the
	// DOM, which the observers see at once, so the tick only covers
	// what no DOM change shows, such as a chat view whose frame was
	// replaced meanwhile (seen at most 5 s late). 20 checks a second
	// were most of what a window waiting for a 10 s answer cost its
	// renderer; one a second still was 0.7 ms/s of the renderer main
	// thread's 5.6 ms/s in a Chromium trace of a window waiting for
	// the model (the scan of every frame and the check), its third
	// largest cost after the webview's own 250 ms focus poll and
	// VS Code's websocket messages. Every 5 s leaves a fifth of that.
	patient = pace{tick: 5 * time.Second, slice: 10 * time.Second}
)

// poll evaluates the JS function until it returns a truthy value, which it
// returns. what names the awaited state in the error, e.g.
// `the status bar shows "Ln 9, Col 5"`; a deadline gives an error that
// wraps context.DeadlineExceeded.
func (w *window) poll(ctx context.Context, what, js string, args ...any) (gson.JSON, error) {
	return w.pollPaced(ctx, brisk, what, js, args...)
}

// pollPaced is poll at pace p.
func (w *window) pollPaced(ctx context.Context, p pace, what, js string, args ...any) (gson.JSON, error) {
	call := `(...a) => (` + jsPoll + `)((` + js + `), ...a)`
	ctx, stop := guard(ctx, w.fail)
	defer stop()
	for {
		slice := float64(p.slice.Milliseconds())
		if dl, ok := ctx.Deadline(); ok {
			slice = max(min(slice, float64(time.Until(dl).Milliseconds())), 1)
		}
		res, err := w.eval(ctx, call, append([]any{slice, p.tick.Milliseconds()}, args...)...)
		switch {
		case activationCause(ctx) != nil:
			return gson.JSON{}, fmt.Errorf("wait until %s: %w", what, activationCause(ctx))
		case ctx.Err() != nil:
			return gson.JSON{}, fmt.Errorf("wait until %s: %w", what, context.DeadlineExceeded)
		case err != nil && !browser.NavigatedAway(err):
			return gson.JSON{}, fmt.Errorf("wait until %s: %w", what, err)
		case err == nil && !res.Nil():
			return res, nil
		}
	}
}

// waitFor polls the JS predicate until it holds.
func (w *window) waitFor(ctx context.Context, what, js string, args ...any) error {
	_, err := w.poll(ctx, what, js, args...)
	return err
}

// cond is one state a wait expects: a JS predicate with its arguments,
// named for the error when it never holds.
type cond struct {
	what string
	js   string
	args []any
}

// waitAll waits in one poll until every condition holds: a step that
// acted several times waits once for the state all its actions promise,
// instead of a round trip per action.
func (w *window) waitAll(ctx context.Context, conds ...cond) error {
	if len(conds) == 0 {
		return nil
	}
	var src, what strings.Builder
	args := make([]any, len(conds))
	src.WriteString("(...a) => ")
	for i, c := range conds {
		if i > 0 {
			src.WriteString(" && ")
			what.WriteString(" and ")
		}
		fmt.Fprintf(&src, "!!(%s)(...a[%d])", c.js, i)
		what.WriteString(c.what)
		args[i] = append([]any{}, c.args...)
	}
	return w.waitFor(ctx, what.String(), src.String(), args...)
}

// value polls the JS function until it returns a non-empty string.
func (w *window) value(ctx context.Context, what, js string, args ...any) (string, error) {
	v, err := w.poll(ctx, what, js, args...)
	if err != nil {
		return "", err
	}
	return v.Str(), nil
}

// keys presses a key combination: every key but the last is held while
// the last is typed.
func (w *window) keys(ctx context.Context, keys ...key) error {
	if len(keys) == 0 {
		return nil
	}
	events, err := chordEvents(keys)
	if err == nil {
		err = w.sendKeys(ctx, events)
	}
	if err != nil {
		return fmt.Errorf("press %s: %w", keyNames(keys), err)
	}
	return nil
}

// repeat types one key n times while holding mods.
func (w *window) repeat(ctx context.Context, n int, k key, mods ...key) error {
	if n <= 0 {
		return nil
	}
	events, err := repeatEvents(n, k, mods)
	if err == nil {
		err = w.sendKeys(ctx, events)
	}
	if err != nil {
		return fmt.Errorf("press %s ×%d: %w", keyNames(append(mods, k)), n, err)
	}
	return nil
}

func (w *window) sendKeys(ctx context.Context, events []browser.KeyEvent) error {
	for _, e := range events {
		if err := w.page.Key(ctx, e); err != nil {
			return err
		}
	}
	return nil
}

// insert types text into whatever has focus, as a paste or an IME would.
func (w *window) insert(ctx context.Context, text string) error {
	if err := w.page.InsertText(ctx, text); err != nil {
		return fmt.Errorf("type %q: %w", clip(text, 40), err)
	}
	return nil
}

// move moves the mouse to the point with no button held.
func (w *window) move(ctx context.Context, p point) error {
	if err := w.page.Mouse(ctx, browser.MouseEvent{Type: "mouseMoved", X: p.X, Y: p.Y, Button: "none"}); err != nil {
		return fmt.Errorf("move mouse to %.0f,%.0f: %w", p.X, p.Y, err)
	}
	return nil
}

// click moves the mouse to the point and clicks.
func (w *window) click(ctx context.Context, p point, button browser.MouseButton) error {
	if err := w.move(ctx, p); err != nil {
		return err
	}
	mask := 1
	if button == browser.MouseRight {
		mask = 2
	}
	err := w.page.Mouse(ctx, browser.MouseEvent{Type: "mousePressed", X: p.X, Y: p.Y, Button: button, Buttons: mask, ClickCount: 1})
	if err == nil {
		err = w.page.Mouse(ctx, browser.MouseEvent{Type: "mouseReleased", X: p.X, Y: p.Y, Button: button, ClickCount: 1})
	}
	if err != nil {
		return fmt.Errorf("%s click at %.0f,%.0f: %w", button, p.X, p.Y, err)
	}
	return nil
}

// point waits for the JS function to return the centre of something
// visible, as {x, y} in page coordinates.
func (w *window) point(ctx context.Context, what, js string, args ...any) (point, error) {
	v, err := w.poll(ctx, what, js, args...)
	if err != nil {
		return point{}, err
	}
	return point{X: v.Get("x").Num(), Y: v.Get("y").Num()}, nil
}

// screenshot returns a PNG of the window.
func (w *window) screenshot(ctx context.Context) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return w.page.Screenshot(ctx)
}

// point is a position in page coordinates (CSS pixels).
type point struct{ X, Y float64 }

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// errIsTimeout reports whether a wait ended by its deadline.
func errIsTimeout(err error) bool { return errors.Is(err, context.DeadlineExceeded) }

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
