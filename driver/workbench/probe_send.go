package workbench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"dialogfarm/adapter"
	"dialogfarm/dialog"
)

// ProbeInput is a text input of the chat document as the probe ranked it.
type ProbeInput struct {
	Selector string `json:"selector"`
	Kind     string `json:"kind"`
	// Method is how a query goes in: fill (a textarea or input) or type
	// (a rich editor), as in an adapter's input.method.
	Method  string `json:"method"`
	Label   string `json:"label"`
	Visible bool   `json:"visible"`
	Enabled bool   `json:"enabled"`
	Score   int    `json:"score"`
	Why     string `json:"why"`
}

// ProbeButton is a button that may send, as the probe ranked it.
type ProbeButton struct {
	Selector string `json:"selector"`
	Label    string `json:"label"`
	Score    int    `json:"score"`
	Why      string `json:"why"`
}

// ProbeAttempt is one try at sending the test message.
type ProbeAttempt struct {
	Input string `json:"input"`
	// Method is "key enter", "key ctrl+enter", "button SELECTOR", after a
	// pick "select SELECTOR=VALUE, then ...".
	Method  string  `json:"method"`
	Outcome string  `json:"outcome"`
	Seconds float64 `json:"seconds"`
}

// Attempt outcomes.
const (
	outcomeRequest = "a request came"
	outcomeTook    = "the input was cleared, but no request came"
	outcomeNothing = "no request"
)

// DefaultProbeAttempt bounds each of the probe's tries: typing the test
// message, then the wait for its request after it was sent. A view that
// clears its input (it took the message) gets one more.
const DefaultProbeAttempt = 4 * time.Second

// chatProber tries the chat document's inputs and ways to send until a
// request arrives, each try bounded.
type chatProber struct {
	w     *window
	u     ui
	msg   string
	limit time.Duration
	// next returns the next request the plugin sent, until ctx ends.
	next func(ctx context.Context) (dialog.Exchange, error)
	rep  *ProbeReport

	// The first request, and the input and way that sent it.
	ex    dialog.Exchange
	input ProbeInput
	send  adapter.Send
	setup []adapter.Action
}

// errNoButton: no send-like button to try.
var errNoButton = errors.New("no send-like button")

// find ranks the inputs and tries the best visible ones (at most three)
// with Enter, Ctrl+Enter and the two most send-like buttons; if nothing
// went out, it picks each option of the view's drop-downs in turn (a
// provider or model picker may hold a query back) and sends again.
func (p *chatProber) find(ctx context.Context) error {
	inputs, err := p.rank(ctx)
	if err != nil {
		return err
	}
	p.rep.Inputs = inputs
	type way struct {
		in     ProbeInput
		method string
	}
	var took []way
	tried := 0
	for _, in := range inputs {
		if !in.Visible || !in.Enabled || tried == 3 {
			continue
		}
		tried++
		for _, m := range []string{"key enter", "key ctrl+enter", "button 1", "button 2"} {
			out, err := p.attempt(ctx, in, m, "")
			if err != nil {
				return err
			}
			if out == outcomeRequest {
				return nil
			}
			if out == outcomeTook {
				took = append(took, way{in, m})
			}
			if out != outcomeNothing && out != outcomeTook {
				break // the text did not go in, or no button: the next input
			}
		}
	}
	if tried == 0 {
		return errors.New("the view shows no visible, enabled text input")
	}
	if len(took) == 0 {
		for _, in := range inputs {
			if in.Visible && in.Enabled {
				took = append(took, way{in, "key enter"}, way{in, "button 1"})
				break
			}
		}
	}
	pickers, err := p.w.elements(ctx, p.u)
	if err != nil {
		return err
	}
	n := 0
	for _, e := range pickers {
		for _, opt := range e.Options {
			if opt == "" || opt == e.Value || n == 6 {
				continue
			}
			n++
			act := adapter.Action{Select: &adapter.Value{Selector: e.Selector, Value: opt}}
			pick := "select " + e.Selector + "=" + opt
			if err := p.pick(ctx, act); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				p.rep.Attempts = append(p.rep.Attempts, ProbeAttempt{Method: pick, Outcome: err.Error()})
				continue
			}
			for _, t := range took[:min(len(took), 2)] {
				out, err := p.attempt(ctx, t.in, t.method, pick+", then ")
				if err != nil {
					return err
				}
				if out == outcomeRequest {
					p.setup = append(p.setup, act)
					return nil
				}
			}
		}
	}
	return errors.New("no request reached the capture endpoint in any attempt (is the plugin pointed at the capture endpoint? see --setting and --file)")
}

// pick runs a select step, bounded by the attempt limit.
func (p *chatProber) pick(ctx context.Context, a adapter.Action) error {
	ctx, cancel := context.WithTimeout(ctx, p.limit)
	defer cancel()
	what, body, arg := setupScript(a)
	return p.w.waitFor(ctx, what, js("ui, arg", `const c = chatDoc(ui); if (!c) return false; const d = c.d; `+body, jsChatDoc), p.u, arg)
}

// attempt types the message into in and sends it by method, then waits
// for a request; it reports the outcome (and records it). An error is
// returned only when ctx ended.
func (p *chatProber) attempt(ctx context.Context, in ProbeInput, method, prefix string) (string, error) {
	start := time.Now()
	a := ProbeAttempt{Input: in.Selector, Method: prefix + method}
	defer func() {
		a.Seconds = time.Since(start).Round(10 * time.Millisecond).Seconds()
		p.rep.Attempts = append(p.rep.Attempts, a)
	}()
	tctx, cancel := context.WithTimeout(ctx, p.limit)
	err := p.typeInto(tctx, in)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		a.Outcome = "the message did not go into the input: " + err.Error()
		return a.Outcome, nil
	}
	var send adapter.Send
	switch {
	case method == "key enter" || method == "key ctrl+enter":
		send.Key = method[len("key "):]
	default:
		i := 0
		if method == "button 2" {
			i = 1
		}
		bs, err := p.sendButtons(ctx, in.Selector)
		if err != nil {
			return "", err
		}
		if len(bs) <= i || bs[i].Score <= 0 {
			a.Outcome = errNoButton.Error()
			return a.Outcome, nil
		}
		send.Button = bs[i].Selector
		a.Method = prefix + "button " + send.Button
	}
	if err := p.record(ctx); err != nil {
		return "", err
	}
	sctx, cancel := context.WithTimeout(ctx, p.limit)
	defer cancel()
	if send.Key != "" {
		keys, _ := parseKeys(send.Key)
		err = p.w.keys(sctx, keys...)
	} else {
		err = p.w.clickInChat(sctx, p.u, send.Button)
	}
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		a.Outcome = "could not send: " + err.Error()
		return a.Outcome, nil
	}
	ex, err := p.next(sctx)
	if err != nil && cleared(ctx, p.w, p.u, in.Selector) {
		// The view took the message: its request may be slow.
		xctx, cancel := context.WithTimeout(ctx, p.limit)
		ex, err = p.next(xctx)
		cancel()
		if err != nil {
			a.Outcome = outcomeTook
			return a.Outcome, ctx.Err()
		}
	}
	if err != nil {
		a.Outcome = outcomeNothing
		return a.Outcome, ctx.Err()
	}
	a.Outcome = outcomeRequest
	p.ex, p.input, p.send = ex, in, send
	return a.Outcome, nil
}

// typeInto focuses the input (clicking it, twice at most), empties it and
// inserts the message, and waits until the input holds it.
func (p *chatProber) typeInto(ctx context.Context, in ProbeInput) error {
	iu := p.u
	iu.Input = in.Selector
	var err error
	for range 2 {
		if err = p.w.clickInChat(ctx, p.u, in.Selector); err != nil {
			return err
		}
		fctx, cancel := context.WithTimeout(ctx, p.limit/3)
		err = p.w.waitChatInputFocused(fctx, iu)
		cancel()
		if err == nil || ctx.Err() != nil {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("it took no keyboard focus (the focus is on %s)", p.w.focusPath(ctx))
	}
	if !cleared(ctx, p.w, p.u, in.Selector) {
		// Select what it holds, and delete it with a key as a person would.
		if _, err := p.w.eval(ctx, js("ui, sel", `const c = chatDoc(ui); const el = c && qs(c.d, sel); if (!el) return false;
			const a = deepActive(c.d);
			if (a && typeof a.select === 'function') { a.select(); return true; }
			const r = c.d.createRange(); r.selectNodeContents(el);
			const s = c.d.getSelection(); s.removeAllRanges(); s.addRange(r); return true;`, jsChatDoc), p.u, in.Selector); err != nil {
			return err
		}
		if err := p.w.keys(ctx, "Backspace"); err != nil {
			return err
		}
	}
	if err := p.w.insert(ctx, p.msg); err != nil {
		return err
	}
	return p.w.waitChatInput(ctx, iu, p.msg)
}

// rank evaluates rankInputs in the chat document.
func (p *chatProber) rank(ctx context.Context) ([]ProbeInput, error) {
	res, err := p.w.eval(ctx, js("ui", `const c = chatDoc(ui); return c ? JSON.stringify(rankInputs(c)) : '[]';`, jsChatDoc, jsStable, jsWalk, jsRank), p.u)
	if err != nil {
		return nil, fmt.Errorf("rank the view's inputs: %w", err)
	}
	var out []ProbeInput
	if err := json.Unmarshal([]byte(res.Str()), &out); err != nil {
		return nil, fmt.Errorf("rank the view's inputs: %w", err)
	}
	return out, nil
}

// sendButtons evaluates sendButtons in the chat document.
func (p *chatProber) sendButtons(ctx context.Context, input string) ([]ProbeButton, error) {
	res, err := p.w.eval(ctx, js("ui, sel", `const c = chatDoc(ui); return c ? JSON.stringify(sendButtons(c, sel)) : '[]';`, jsChatDoc, jsStable, jsWalk, jsRank), p.u, input)
	if err != nil {
		return nil, fmt.Errorf("rank the view's buttons: %w", err)
	}
	var out []ProbeButton
	if err := json.Unmarshal([]byte(res.Str()), &out); err != nil {
		return nil, fmt.Errorf("rank the view's buttons: %w", err)
	}
	return out, nil
}

// elements lists the chat document's interactive and custom elements.
func (w *window) elements(ctx context.Context, u ui) ([]ProbeElement, error) {
	res, err := w.eval(ctx, js("ui", `const c = chatDoc(ui); return c ? JSON.stringify(listElements(c)) : '[]';`, jsChatDoc, jsStable, jsWalk, jsElements), u)
	if err != nil {
		return nil, fmt.Errorf("list the view's elements: %w", err)
	}
	var els []ProbeElement
	if err := json.Unmarshal([]byte(res.Str()), &els); err != nil {
		return nil, fmt.Errorf("list the view's elements: %w", err)
	}
	return els, nil
}

// cleared reports whether the input is empty now.
func cleared(ctx context.Context, w *window, u ui, sel string) bool {
	res, err := w.eval(ctx, js("ui, sel", `const c = chatDoc(ui); const el = c && qs(c.d, sel);
		return !!el && ((el.value !== undefined && !el.isContentEditable) ? el.value === '' : (el.textContent || '').trim() === '');`, jsChatDoc), u, sel)
	return err == nil && res.Bool()
}
