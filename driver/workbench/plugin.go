package workbench

import (
	"context"
	"fmt"
	"strings"
	"time"

	"dialogfarm/adapter"
	"dialogfarm/driver/browser"
)

// The plugin's chat view, found and read only through its adapter: every
// selector, key and command title below comes from an adapter file.

// ui is what the page scripts need from an adapter, passed to them as one
// JSON argument.
type ui struct {
	Frames     []string `json:"frames"`
	Ready      string   `json:"ready"`
	Activity   string   `json:"activity"`
	Input      string   `json:"input"`
	User       string   `json:"user"`
	Answer     string   `json:"answer"`
	Text       string   `json:"text"`
	DoneAttr   string   `json:"doneAttr"`
	DoneValues []string `json:"doneValues"`
	Appears    string   `json:"appears"`
	Disappears string   `json:"disappears"`
	Enabled    string   `json:"enabled"`
	StableMS   int      `json:"stableMS"`
	Error      string   `json:"error"`
	Whitespace bool     `json:"whitespace"`
}

func uiOf(a *adapter.Adapter) ui {
	u := ui{
		Frames: a.Frames(), Ready: a.Webview.Ready, Activity: a.Open.ActivityBar, Input: a.Input.Selector,
		User: a.Answer.User, Answer: a.Answer.Selector, Text: a.Answer.Text, Appears: a.Answer.Done.Appears,
		Disappears: a.Answer.Done.Disappears, Enabled: a.Answer.Done.Enabled, StableMS: a.Answer.Done.StableMS,
		Error: a.Answer.Error, Whitespace: a.Input.Method == adapter.MethodType,
	}
	if at := a.Answer.Done.Attribute; at != nil {
		u.DoneAttr, u.DoneValues = at.Name, at.Values
	}
	return u
}

// jsChatDoc is a JS expression that defines chatDoc(ui): the plugin's
// chat document, reached through ui.frames from the top page, once it has
// loaded and ui.ready matches in it; {d, frames} with the iframe elements
// outermost first, or null. Webview frames are same-origin in code-server,
// so the top page can read them. Loaded means its scripts have run: the
// input of a view whose script comes last is there and takes the focus
// before its key handlers are; in CI (load 6-9) the probe's Enter then
// typed a new line into the reference plugin's input instead of sending.
const jsChatDoc = jsDeep + `
const chatDoc = (ui) => {
	const walk = (doc, level, chain) => {
		if (level === ui.frames.length) {
			return doc && doc.body && doc.readyState === 'complete' && qs(doc, ui.ready) ? {d: doc, frames: chain} : null;
		}
		for (const f of doc.querySelectorAll(ui.frames[level])) {
			let inner = null;
			try { inner = f.contentDocument; } catch (e) { inner = null; }
			if (!inner) continue;
			const r = walk(inner, level + 1, chain.concat([f]));
			if (r) return r;
		}
		return null;
	};
	return walk(document, 0, []);
};
const framePoint = (c, el) => {
	let x = 0, y = 0;
	for (const f of c.frames) { const r = f.getBoundingClientRect(); x += r.left; y += r.top; }
	const r = el.getBoundingClientRect();
	if (r.width === 0 || r.height === 0) return null;
	return {x: x + r.left + Math.min(r.width / 2, 40), y: y + r.top + r.height / 2};
};`

// jsChatShown is a JS expression that defines chatShown(ui, c): whether
// the plugin's view is the side bar's active one (its activity bar item is
// checked). A hidden webview keeps its iframe and size, so the frame alone
// cannot tell; without an activity-bar item, the outer frame's visibility.
const jsChatShown = `const chatShown = (ui, c) => {
	if (!ui.activity) return !!c && c.frames[0].checkVisibility({visibilityProperty: true, opacityProperty: true});
	return [...document.querySelectorAll('.activitybar .action-item .action-label')]
		.some(a => (a.getAttribute('aria-label') || '').startsWith(ui.activity) && a.closest('.action-item').classList.contains('checked'));
};`

// jsInputFocused defines inputFocused(ui, c): the keyboard focus is in the
// chat input, through every frame (and open shadow root).
const jsInputFocused = `const inputFocused = (ui, c) => {
	let doc = document;
	for (const f of c.frames) { if (doc.activeElement !== f) return false; doc = f.contentDocument; }
	const a = deepActive(c.d);
	return !!a && qsa(c.d, ui.input).some((el) => composedContains(el, a));
};`

// jsCounts defines counts(ui, c): how many user and assistant messages the
// chat shows.
const jsCounts = `const counts = (ui, c) => ({
	user: ui.user ? qsa(c.d, ui.user).length : 0,
	answers: qsa(c.d, ui.answer).length,
});`

// js joins the helper definitions a script needs before its body.
func js(args, body string, helpers ...string) string {
	return "(" + args + ") => { " + strings.Join(helpers, "\n") + "\n" + body + " }"
}

// chatShownCond holds when the chat view is shown and ready.
func chatShownCond(u ui) cond {
	return cond{what: "the chat view is shown and ready", js: js("ui", `const c = chatDoc(ui); return !!c && chatShown(ui, c);`,
		jsChatDoc, jsChatShown), args: []any{u}}
}

// waitChat waits for the chat view to be shown and ready.
func (w *window) waitChat(ctx context.Context, u ui) error {
	return w.waitAll(ctx, chatShownCond(u))
}

// waitChatInputFocused waits until the chat input has keyboard focus.
func (w *window) waitChatInputFocused(ctx context.Context, u ui) error {
	return w.waitFor(ctx, "the chat input has focus", js("ui", `const c = chatDoc(ui); return !!c && inputFocused(ui, c);`,
		jsChatDoc, jsInputFocused), u)
}

// waitChatInput waits until the chat input holds exactly text (value for
// a textarea; for a rich editor its text with white space runs collapsed).
func (w *window) waitChatInput(ctx context.Context, u ui, text string) error {
	return w.waitFor(ctx, fmt.Sprintf("the chat input holds %q", clip(text, 40)), js("ui, text", `const c = chatDoc(ui);
		const el = c && qs(c.d, ui.input);
		if (!el) return false;
		if ('value' in el && !el.isContentEditable) return el.value === text;
		const norm = (s) => s.replace(/\s+/g, ' ').trim();
		return norm(el.innerText || el.textContent) === norm(text);`, jsChatDoc), u, text)
}

// waitInputEmpty waits until the chat input was cleared, which plugins do
// when they take a query.
func (w *window) waitInputEmpty(ctx context.Context, u ui) error {
	return w.waitFor(ctx, "the chat input is cleared", js("ui", `const c = chatDoc(ui);
		const el = c && qs(c.d, ui.input);
		if (!el) return false;
		if ('value' in el && !el.isContentEditable) return el.value === '';
		return (el.textContent || '').trim() === '';`, jsChatDoc), u)
}

// clickActivity clicks the plugin's icon in the activity bar.
func (w *window) clickActivity(ctx context.Context, label string) error {
	p, err := w.point(ctx, "the plugin's activity bar icon is visible", `(label) => {
		for (const a of document.querySelectorAll('.activitybar .action-item .action-label')) {
			const l = a.getAttribute('aria-label') || '';
			if (l === label || l.startsWith(label + ' ') || l.startsWith(label + ',') || l.startsWith(label + ' (')) {
				const r = a.getBoundingClientRect();
				if (r.width > 0) return {x: r.left + r.width / 2, y: r.top + r.height / 2};
			}
		}
		return null;
	}`, label)
	if err != nil {
		return err
	}
	return w.click(ctx, p, browser.MouseLeft)
}

// clickInChat clicks the chat document's element matching selector once
// the chat view is shown (a hidden view keeps its size: a point taken
// before it shows would hit whatever covers it).
func (w *window) clickInChat(ctx context.Context, u ui, selector string) error {
	p, err := w.point(ctx, "the chat view is shown with "+selector, js("ui, sel", `const c = chatDoc(ui);
		if (!c || !chatShown(ui, c)) return null;
		const el = qs(c.d, sel);
		return el ? framePoint(c, el) : null;`, jsChatDoc, jsChatShown), u, selector)
	if err != nil {
		return err
	}
	return w.click(ctx, p, browser.MouseLeft)
}

// chatMessage is what the view shows for a turn's answer.
type chatMessage struct {
	Failed bool
	Text   string
}

// waitAnswer waits until the view shows the turn's question (more user
// messages than userBefore) and the assistant message after the first
// `before` ones is done by the adapter's condition, and returns what it
// shows.
func (w *window) waitAnswer(ctx context.Context, u ui, userBefore, before, turn int) (chatMessage, error) {
	finder := js("ui, ub, before, key", `const c = chatDoc(ui);
		if (!c) return null;
		if (ui.user && qsa(c.d, ui.user).length <= ub) return null;
		const all = qsa(c.d, ui.answer);
		if (all.length <= before) return null;
		const m = all[before];
		const t = ui.text ? qs(m, ui.text) : m;
		const text = t ? t.textContent : '';
		const failed = !!ui.error && (m.matches(ui.error) || !!m.querySelector(ui.error));
		const out = JSON.stringify({Failed: failed, Text: text});
		if (failed) return out;
		if (ui.doneAttr) return ui.doneValues.includes(m.getAttribute(ui.doneAttr)) ? out : null;
		if (ui.appears) return (qs(m, ui.appears) || qs(c.d, ui.appears) || (!ui.appears.includes('>>>') && m.matches(ui.appears))) ? out : null;
		if (ui.disappears) return qs(c.d, ui.disappears) ? null : out;
		if (ui.enabled) { const b = qs(c.d, ui.enabled); return b && !isDisabled(b) ? out : null; }
		// Text stable for ui.stableMS: the last change is remembered on the top window.
		const st = (window.__dialogfarmStable = window.__dialogfarmStable || {});
		const now = performance.now();
		if (!st[key] || st[key].text !== text) { st[key] = {text, since: now}; return null; }
		return text !== '' && now - st[key].since >= ui.stableMS ? out : null;`, jsChatDoc)
	key := fmt.Sprintf("%d-%d", before, turn)
	// What the model's answer does shows in the DOM, except for the end
	// of a stable text, which only time shows.
	p := patient
	if u.StableMS > 0 {
		p = brisk
	}
	res, err := w.pollPaced(ctx, p, fmt.Sprintf("the answer to turn %d is done", turn), finder, u, userBefore, before, key)
	if err != nil {
		if errIsTimeout(err) && !w.turnShown(ctx, u, userBefore, before) {
			return chatMessage{}, fmt.Errorf("wait until the view shows question %d: %w", turn, err)
		}
		return chatMessage{}, err
	}
	var m chatMessage
	if err := jsonUnmarshal(res.Str(), &m); err != nil {
		return m, fmt.Errorf("read answer to turn %d: %w", turn, err)
	}
	return m, nil
}

// turnShown reports whether the view shows that a query went out: more
// user messages than before (or, without a user selector, more answers);
// for an error message, so also after ctx ended.
func (w *window) turnShown(ctx context.Context, u ui, userBefore, answersBefore int) bool {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	v, err := w.eval(ctx, js("ui, ub, ab", `const c = chatDoc(ui);
		if (!c) return false;
		const n = counts(ui, c);
		return ui.user ? n.user > ub : n.answers > ab;`, jsChatDoc, jsCounts), u, userBefore, answersBefore)
	return err == nil && v.Bool()
}

// runSetup runs the adapter's setup steps in the chat document, once per
// document: a reloaded webview gets them again. expand replaces the
// placeholders in the values the steps write (fill, select, js); what a
// failing step reports names the value as the adapter wrote it, so that
// no secret a placeholder stands for reaches a record or a log.
func (w *window) runSetup(ctx context.Context, u ui, steps []adapter.Action, expand func(string) string) error {
	if len(steps) == 0 {
		return nil
	}
	done, err := w.eval(ctx, js("ui", `const c = chatDoc(ui); return !!c && c.d.documentElement.dataset.dialogfarmSetup === 'done';`, jsChatDoc), u)
	if err != nil {
		return fmt.Errorf("read setup state: %w", err)
	}
	if done.Bool() {
		return nil
	}
	for i, st := range steps {
		what, _, _ := setupScript(st)
		_, body, arg := setupScript(expandAction(st, expand))
		if err := w.waitFor(ctx, fmt.Sprintf("setup step %d (%s)", i+1, what), js("ui, arg", `const c = chatDoc(ui);
			if (!c) return false;
			const d = c.d;
			`+body, jsChatDoc), u, arg); err != nil {
			return err
		}
	}
	return w.waitFor(ctx, "the setup is marked done", js("ui", `const c = chatDoc(ui);
		if (!c) return false;
		c.d.documentElement.dataset.dialogfarmSetup = 'done';
		return true;`, jsChatDoc), u)
}

// expandAction returns the step with expand applied to the values it
// writes.
func expandAction(a adapter.Action, expand func(string) string) adapter.Action {
	if expand == nil {
		return a
	}
	for _, v := range []**adapter.Value{&a.Fill, &a.Select} {
		if *v != nil {
			c := **v
			c.Value = expand(c.Value)
			*v = &c
		}
	}
	a.JS = expand(a.JS)
	return a
}

// setupScript is the page script body of one setup step; it returns a
// truthy value once the step is done. Selectors may cross shadow roots
// (>>>); clicks and picks on custom elements cause the events a person's
// would (userClick, jsSelectOption).
func setupScript(a adapter.Action) (what, body string, arg any) {
	switch {
	case a.Click != "":
		return "click " + a.Click, `const el = qs(d, arg); if (!el || isDisabled(el)) return false; userClick(el); return true;`, a.Click
	case a.Fill != nil:
		// A custom text field's own input, inside its shadow root, is
		// where a person types.
		return "fill " + a.Fill.Selector, `const host = qs(d, arg.selector); if (!host) return false;
			const el = (host.shadowRoot && host.shadowRoot.querySelector('input, textarea')) || host;
			el.focus(); el.value = arg.value;
			for (const e of ['input', 'change']) el.dispatchEvent(new Event(e, {bubbles: true, composed: true}));
			return true;`, map[string]string{"selector": a.Fill.Selector, "value": a.Fill.Value}
	case a.Select != nil:
		return "select " + a.Select.Value + " in " + a.Select.Selector, jsSelectOption, map[string]string{"selector": a.Select.Selector, "value": a.Select.Value}
	case a.WaitFor != "":
		return "wait for " + a.WaitFor, `return !!qs(d, arg);`, a.WaitFor
	default:
		return "js", `const r = (new Function('document', 'window', arg))(d, d.defaultView); return r === undefined ? true : r;`, a.JS
	}
}

// chatDOM returns the chat view's HTML for failure reports.
func (w *window) chatDOM(ctx context.Context, u ui) string {
	res, err := w.eval(ctx, js("ui", `const c = chatDoc(ui); return c ? c.d.body.outerHTML : '';`, jsChatDoc), u)
	if err != nil {
		return ""
	}
	return res.Str()
}
