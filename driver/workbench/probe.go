package workbench

import (
	"context"
	"strings"
	"time"

	"dialogfarm/adapter"
	"dialogfarm/dialog"
)

// ProbeReport is what the probe found: the starting point of an adapter.
type ProbeReport struct {
	ExtensionID string
	// Extension is the plugin as given to the probe.
	Extension string
	// Manifest is what the plugin's package.json contributes.
	ActivityBar []string
	Commands    []ProbeCommand
	// Frames are the iframe selectors from the workbench to the chat
	// document, and FrameSources the src (query cut) of each frame found.
	Frames       []string
	FrameSources []string
	// Elements are the view's interactive and custom elements (also
	// inside open shadow roots).
	Elements []ProbeElement
	// Inputs are the view's text inputs, best first, and Attempts every
	// try at sending the test message with them.
	Inputs   []ProbeInput
	Attempts []ProbeAttempt
	// Input, Method and Send are what sent the test message, after the
	// setup steps in Setup, if any.
	Input  *ProbeInput      `json:",omitempty"`
	Method string           `json:",omitempty"`
	Send   adapter.Send     `json:",omitempty"`
	Setup  []adapter.Action `json:",omitempty"`
	// Sent says how the test message went out, in words.
	Sent string
	// Requests are all the requests the plugin sent, the chat request
	// (Chat, its index) and those that followed its answer (titles,
	// summaries).
	Requests []dialog.Exchange
	Chat     int
	// Observed is what the view did with the answer.
	Observed *ProbeObserved `json:",omitempty"`
	// Settings and Files are what the probe was told; Message the test
	// message.
	Settings map[string]any
	Files    []adapter.File
	Message  string
	// Isolation is editor when a file holds a per-session placeholder.
	Isolation string `json:",omitempty"`
	// DOM is the chat document's body after the test message (clipped).
	DOM   string
	Notes []string
}

// ProbeCommand is one command the plugin contributes.
type ProbeCommand struct {
	ID, Title, Keybinding string
	ContextMenu           bool
}

// ProbeElement is an interactive or custom element of the chat document
// with its best stable selector (id, test ids, name, ARIA label, a custom
// element's tag, classes, path; through open shadow roots with >>>).
type ProbeElement struct {
	// Kind is the tag, or contenteditable.
	Kind     string `json:"kind"`
	Selector string `json:"selector"`
	Label    string `json:"label"`
	Disabled bool   `json:"disabled"`
	Hidden   bool   `json:"hidden"`
	// Shadow is a custom element's shadow root: open or none (closed
	// roots cannot be seen).
	Shadow string `json:"shadow,omitempty"`
	// Options and Value of a drop-down (native or custom).
	Options []string `json:"options,omitempty"`
	Value   string   `json:"value,omitempty"`
}

// Probe loads the workspace ws (see ProbeWorkspace), opens the view of
// a (a probe's adapter: what the plugin's manifest tells) and adds to rep
// the frame chain, the interactive and custom elements with stable
// selectors, the text inputs ranked, and, with a test message, every try
// at sending it (each input from the best, with Enter, Ctrl+Enter and
// send-like buttons, then after picking each option of the view's
// drop-downs), each bounded by attempt (DefaultProbeAttempt if 0), until
// a request arrives; then what the view shows of the answer and when it
// is done, and the requests that follow it.
func (s *Session) Probe(ctx context.Context, a *adapter.Adapter, ws, message string, attempt time.Duration, rep *ProbeReport) error {
	if err := s.open(ctx, ws, a); err != nil {
		return err
	}
	w, u := s.win, uiOf(a)
	if err := w.clickActivity(ctx, a.Open.ActivityBar); err != nil {
		return err
	}
	if err := w.waitChat(ctx, u); err != nil {
		return err
	}
	if err := w.waitFor(ctx, "the view shows an input or button", js("ui", `const c = chatDoc(ui);
		return !!c && allElements(c.d).some((el) => el.matches('input, textarea, button, select, [contenteditable]'));`, jsChatDoc, jsWalk), u); err != nil {
		return err
	}
	src, err := w.eval(ctx, js("ui", `const c = chatDoc(ui); return c ? c.frames.map(f => (f.getAttribute('src') || '').split('?')[0] + (f.id ? ' #' + f.id : '')) : [];`, jsChatDoc), u)
	if err == nil {
		for _, v := range src.Arr() {
			rep.FrameSources = append(rep.FrameSources, v.Str())
		}
	}
	if rep.Elements, err = w.elements(ctx, u); err != nil {
		return err
	}
	if message == "" {
		return nil
	}
	limit := attempt
	if limit <= 0 {
		limit = DefaultProbeAttempt
	}
	p := &chatProber{w: w, u: u, msg: message, limit: limit, rep: rep,
		next: func(ctx context.Context) (dialog.Exchange, error) { return s.capture.Next(ctx, s.ID) }}
	err = probeChat(ctx, p)
	// The view as it is after a dialogue: its pickers filled, its controls
	// for a conversation shown.
	if els, lerr := w.elements(ctx, u); lerr == nil && len(els) > 0 {
		rep.Elements = els
	}
	rep.DOM = clip(w.chatDOM(ctx, u), 4000)
	return err
}

// probeChat finds how the view sends, then watches the answer and takes
// the requests that follow it.
func probeChat(ctx context.Context, p *chatProber) error {
	rep := p.rep
	if err := p.find(ctx); err != nil {
		return err
	}
	in := p.input
	rep.Input, rep.Send, rep.Setup = &in, p.send, p.setup
	rep.Method = in.Method
	rep.Sent = "key " + p.send.Key
	if p.send.Button != "" {
		rep.Sent = "button " + p.send.Button
	}
	rep.Requests = append(rep.Requests, p.ex)
	octx, cancel := context.WithTimeout(ctx, 3*p.limit+5*time.Second)
	o, err := p.observe(octx)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		rep.Notes = append(rep.Notes, "the answer: "+err.Error())
	} else {
		rep.Observed = &o
	}
	// Later requests (titles, summaries) follow the answer.
	for {
		wctx, cancel := context.WithTimeout(ctx, p.limit)
		ex, err := p.next(wctx)
		cancel()
		if err != nil {
			break
		}
		rep.Requests = append(rep.Requests, ex)
	}
	rep.Chat = chatRequest(rep.Requests, p.msg)
	return ctx.Err()
}

// chatRequest is the index of the request that carries the test message
// as its last user message's words (a streamed one first), or 0.
func chatRequest(reqs []dialog.Exchange, msg string) int {
	best, bestStream := 0, false
	found := false
	for i, ex := range reqs {
		body, err := dialog.ParseChatRequest(ex.Request)
		if err != nil {
			continue
		}
		if !strings.Contains(body.LastUser(), msg) {
			continue
		}
		if !found || (body.Stream && !bestStream) {
			best, bestStream, found = i, body.Stream, true
		}
	}
	return best
}

// focusPath describes where the keyboard focus is, frame by frame, for an
// error message (also after ctx ended).
func (w *window) focusPath(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	res, err := w.eval(ctx, `() => {
		const out = [];
		let doc = document;
		for (let i = 0; doc && i < 4; i++) {
			const a = doc.activeElement;
			if (!a) { out.push('nothing'); break; }
			out.push(a.tagName.toLowerCase() + (a.id ? '#' + a.id : '') + (a.className && typeof a.className === 'string' ? '.' + a.className.trim().split(/\s+/).slice(0, 3).join('.') : ''));
			if (a.tagName !== 'IFRAME') break;
			try { doc = a.contentDocument; } catch (e) { out.push('(cross-origin frame)'); break; }
		}
		return out.join(' > ') + (document.hasFocus() ? '' : ' (the page has no focus)');
	}`)
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	return res.Str()
}
