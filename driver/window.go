package driver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/input"
	"github.com/go-rod/rod/lib/proto"
	"github.com/ysmood/gson"
)

// window wraps one browser window showing the workbench. Its methods act
// like a person (keys, text, mouse) and observe the page by reading the DOM;
// they never call into the editor's API.
type window struct {
	page *rod.Page
}

// eval runs a JS function expression on the page and returns its value.
func (w *window) eval(ctx context.Context, js string, args ...any) (*proto.RuntimeRemoteObject, error) {
	return w.page.Context(ctx).Eval(js, args...)
}

// jsPoll wraps a predicate so that one evaluation waits in the page: it
// checks the predicate when the DOM changes (a MutationObserver on the page
// and on every same-origin frame inside it, such as a plugin's webview),
// when focus or the selection moves, and at the latest every 50 ms (for
// states no DOM change shows, e.g. a performance mark or a frame that
// navigated); it resolves with the predicate's first truthy value, or with
// null after slice milliseconds (the Go side then checks its context and
// waits again). One DevTools round trip per slice; an idle window costs
// almost nothing while it waits, unlike checking every 15 ms.
const jsPoll = `(pred, slice, ...a) => new Promise((resolve) => {
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
	function check() {
		if (done) return;
		let v = null;
		try { v = pred(...a); } catch (e) { v = null; }
		if (v) return finish(v);
		if (performance.now() - t0 > slice) return finish(null);
	}
	const tick = () => {
		if (done) return;
		scan(document);
		check();
		if (!done) timer = setTimeout(tick, 50);
	};
	tick();
})`

// poll evaluates the JS function until it returns a truthy value, which it
// returns. what names the awaited state in the error, e.g.
// `the status bar shows "Ln 9, Col 5"`; a deadline gives an error that
// wraps context.DeadlineExceeded.
func (w *window) poll(ctx context.Context, what, js string, args ...any) (gson.JSON, error) {
	call := `(...a) => (` + jsPoll + `)((` + js + `), ...a)`
	for {
		slice := 2000.0
		if dl, ok := ctx.Deadline(); ok {
			slice = max(min(slice, float64(time.Until(dl).Milliseconds())), 1)
		}
		res, err := w.page.Context(ctx).Eval(call, append([]any{slice}, args...)...)
		switch {
		case ctx.Err() != nil:
			return gson.JSON{}, fmt.Errorf("wait until %s: %w", what, context.DeadlineExceeded)
		case err != nil && !transientEvalError(err):
			return gson.JSON{}, fmt.Errorf("wait until %s: %w", what, err)
		case err == nil && !res.Value.Nil():
			return res.Value, nil
		}
	}
}

// transientEvalError reports errors that a page navigation causes while a
// script is running; polling goes on in the new document.
func transientEvalError(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "Execution context was destroyed") ||
		strings.Contains(msg, "Cannot find context with specified id") ||
		strings.Contains(msg, "Inspected target navigated or closed")
}

// waitFor polls the JS predicate until it holds.
func (w *window) waitFor(ctx context.Context, what, js string, args ...any) error {
	_, err := w.poll(ctx, what, js, args...)
	return err
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
func (w *window) keys(keys ...input.Key) error {
	if len(keys) == 0 {
		return nil
	}
	ka := w.page.KeyActions()
	if len(keys) > 1 {
		ka = ka.Press(keys[:len(keys)-1]...)
	}
	if err := ka.Type(keys[len(keys)-1]).Do(); err != nil {
		return fmt.Errorf("press %s: %w", keyNames(keys), err)
	}
	return nil
}

// repeat types one key n times while holding mods.
func (w *window) repeat(n int, key input.Key, mods ...input.Key) error {
	if n <= 0 {
		return nil
	}
	ka := w.page.KeyActions().Press(mods...)
	for range n {
		ka = ka.Type(key)
	}
	if err := ka.Do(); err != nil {
		return fmt.Errorf("press %s ×%d: %w", keyNames(append(mods, key)), n, err)
	}
	return nil
}

// insert types text into whatever has focus, as a paste or an IME would.
func (w *window) insert(text string) error {
	if err := w.page.InsertText(text); err != nil {
		return fmt.Errorf("type %q: %w", clip(text, 40), err)
	}
	return nil
}

// click moves the mouse to the point and clicks.
func (w *window) click(p proto.Point, button proto.InputMouseButton) error {
	if err := w.page.Mouse.MoveTo(p); err != nil {
		return fmt.Errorf("move mouse to %.0f,%.0f: %w", p.X, p.Y, err)
	}
	if err := w.page.Mouse.Click(button, 1); err != nil {
		return fmt.Errorf("%s click at %.0f,%.0f: %w", button, p.X, p.Y, err)
	}
	return nil
}

// point waits for the JS function to return the centre of something
// visible, as {x, y} in page coordinates.
func (w *window) point(ctx context.Context, what, js string, args ...any) (proto.Point, error) {
	v, err := w.poll(ctx, what, js, args...)
	if err != nil {
		return proto.Point{}, err
	}
	return proto.Point{X: v.Get("x").Num(), Y: v.Get("y").Num()}, nil
}

// screenshot returns a PNG of the window.
func (w *window) screenshot(ctx context.Context) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return w.page.Context(ctx).Screenshot(false, nil)
}

func keyNames(keys []input.Key) string {
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.Info().Code
	}
	return strings.Join(names, "+")
}

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
