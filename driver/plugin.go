package driver

import (
	"context"
	"fmt"

	"github.com/go-rod/rod/lib/input"
	"github.com/go-rod/rod/lib/proto"
)

// PluginUI names what the driver needs to find in a Q&A plugin's UI. The
// reference plugin's values come from DefaultPluginUI; an adapter for
// another plugin supplies its own.
type PluginUI struct {
	// ExtensionID is publisher.name; the webview iframe's src carries it.
	ExtensionID string
	// StatusItem is the suffix of the status-bar item id the plugin shows
	// once activated.
	StatusItem string
	// ActivityLabel is the start of the activity-bar item's aria-label.
	ActivityLabel string
	// OpenChat is the palette / context-menu title that opens the chat
	// with the input focused; OpenChatKeys its keybinding.
	OpenChat     string
	OpenChatKeys []input.Key
	// NewChat is the palette title that starts a new conversation.
	NewChat string
	// CommandKeys maps a command's slash form ("/explain") to its keybinding.
	CommandKeys map[string][]input.Key
}

// DefaultPluginUI describes the reference plugin in plugin/.
func DefaultPluginUI() PluginUI {
	ctrlAlt := func(k input.Key) []input.Key { return []input.Key{input.ControlLeft, input.AltLeft, k} }
	return PluginUI{
		ExtensionID:   "dialogfarm.askplugin",
		StatusItem:    "askplugin.status",
		ActivityLabel: "Ask",
		OpenChat:      "Ask: Open Chat",
		OpenChatKeys:  ctrlAlt(input.KeyA),
		NewChat:       "Ask: New Chat",
		CommandKeys: map[string][]input.Key{
			"/explain": ctrlAlt(input.KeyE),
			"/fix":     ctrlAlt(input.KeyF),
			"/tests":   ctrlAlt(input.KeyT),
			"/doc":     ctrlAlt(input.KeyD),
		},
	}
}

// jsChatDoc is a JS expression that defines chatDoc(ext): the plugin's
// inner webview document once it marked itself ready, else null. Webview
// frames are same-origin in code-server, so the top page can read them.
const jsChatDoc = `const chatDoc = (ext) => {
	for (const outer of document.querySelectorAll('iframe.webview.ready')) {
		if (!outer.src.includes('extensionId=' + ext)) continue;
		const inner = outer.contentDocument && outer.contentDocument.querySelector('iframe#active-frame');
		const d = inner && inner.contentDocument;
		if (d && d.body && d.body.dataset.ready === 'true') return {d, outer, inner};
	}
	return null;
};`

// jsChatShown is a JS expression that defines chatShown(label): whether
// the plugin's container is the side bar's active one (its activity bar item
// is checked). A hidden webview keeps its iframe and size, so the frame
// alone cannot tell.
const jsChatShown = `const chatShown = (label) => [...document.querySelectorAll('.activitybar .action-item .action-label')]
	.some(a => (a.getAttribute('aria-label') || '').startsWith(label) && a.closest('.action-item').classList.contains('checked'));`

// waitChat waits for the chat view to be shown and ready.
func (w *window) waitChat(ctx context.Context, ui PluginUI) error {
	return w.waitFor(ctx, "the chat view is shown and ready", `(ext, label) => { `+jsChatDoc+jsChatShown+`
		return !!chatDoc(ext) && chatShown(label); }`, ui.ExtensionID, ui.ActivityLabel)
}

// waitChatInputFocused waits until the chat input has keyboard focus.
func (w *window) waitChatInputFocused(ctx context.Context, ui PluginUI) error {
	return w.waitFor(ctx, "the chat input has focus", `(ext) => { `+jsChatDoc+` const c = chatDoc(ext);
		return !!c && document.activeElement === c.outer && c.outer.contentDocument.activeElement === c.inner &&
			c.d.activeElement && c.d.activeElement.dataset.testid === 'ask-input'; }`, ui.ExtensionID)
}

// waitChatInput waits until the chat input holds exactly text.
func (w *window) waitChatInput(ctx context.Context, ui PluginUI, text string) error {
	return w.waitFor(ctx, fmt.Sprintf("the chat input holds %q", clip(text, 40)), `(ext, text) => { `+jsChatDoc+` const c = chatDoc(ext);
		const el = c && c.d.querySelector('[data-testid="ask-input"]');
		return !!el && el.value === text; }`, ui.ExtensionID, text)
}

// clickActivity clicks the plugin's icon in the activity bar.
func (w *window) clickActivity(ctx context.Context, ui PluginUI) error {
	p, err := w.point(ctx, "the plugin's activity bar icon is visible", `(label) => {
		for (const a of document.querySelectorAll('.activitybar .action-item .action-label')) {
			const l = a.getAttribute('aria-label') || '';
			if (l === label || l.startsWith(label + ' ') || l.startsWith(label + ',') || l.startsWith(label + ' (')) {
				const r = a.getBoundingClientRect();
				if (r.width > 0) return {x: r.left + r.width / 2, y: r.top + r.height / 2};
			}
		}
		return null;
	}`, ui.ActivityLabel)
	if err != nil {
		return err
	}
	return w.click(p, proto.InputMouseButtonLeft)
}

// clickChatInput clicks into the chat input box.
func (w *window) clickChatInput(ctx context.Context, ui PluginUI) error {
	return w.clickChatButton(ctx, ui, "ask-input")
}

// clickChatButton clicks the chat view's element with the given data-testid.
func (w *window) clickChatButton(ctx context.Context, ui PluginUI, testid string) error {
	p, err := w.point(ctx, "the chat view shows "+testid, `(ext, testid) => { `+jsChatDoc+` const c = chatDoc(ext);
		if (!c) return null;
		const el = c.d.querySelector('[data-testid="' + testid + '"]');
		if (!el) return null;
		const o = c.outer.getBoundingClientRect(), i = c.inner.getBoundingClientRect(), r = el.getBoundingClientRect();
		if (r.width === 0) return null;
		return {x: o.left + i.left + r.left + Math.min(r.width / 2, 40), y: o.top + i.top + r.top + r.height / 2};
	}`, ui.ExtensionID, testid)
	if err != nil {
		return err
	}
	return w.click(p, proto.InputMouseButtonLeft)
}

// chatState returns what the view shows for a turn: state is "" until
// the turn's assistant message exists.
type chatMessage struct {
	State string
	Text  string
}

// waitAnswer waits until the assistant message of the given turn is done
// or failed, and returns what it shows.
func (w *window) waitAnswer(ctx context.Context, ui PluginUI, turn int) (chatMessage, error) {
	finder := `(ext, turn) => { ` + jsChatDoc + ` const c = chatDoc(ext);
		if (!c) return null;
		const m = c.d.querySelector('[data-testid="message"][data-role="assistant"][data-turn="' + turn + '"]');
		if (!m || (m.dataset.state !== 'done' && m.dataset.state !== 'error')) return null;
		const t = m.querySelector('[data-testid="message-content"]');
		return JSON.stringify({State: m.dataset.state, Text: t ? t.textContent : ''});
	}`
	v, err := w.value(ctx, fmt.Sprintf("the answer to turn %d is done", turn), finder, ui.ExtensionID, turn)
	if err != nil {
		return chatMessage{}, err
	}
	var m chatMessage
	if err := jsonUnmarshal(v, &m); err != nil {
		return m, fmt.Errorf("read answer to turn %d: %w", turn, err)
	}
	return m, nil
}

// waitTurnSent waits until the view shows the user message of a turn, which
// the plugin adds when it sends the request.
func (w *window) waitTurnSent(ctx context.Context, ui PluginUI, turn int) error {
	return w.waitFor(ctx, fmt.Sprintf("the view shows question %d", turn), `(ext, turn) => { `+jsChatDoc+` const c = chatDoc(ext);
		return !!c && !!c.d.querySelector('[data-testid="message"][data-role="user"][data-turn="' + turn + '"]'); }`,
		ui.ExtensionID, turn)
}

// chatDOM returns the chat view's HTML for failure reports.
func (w *window) chatDOM(ctx context.Context, ui PluginUI) string {
	res, err := w.eval(ctx, `(ext) => { `+jsChatDoc+` const c = chatDoc(ext); return c ? c.d.body.outerHTML : ''; }`, ui.ExtensionID)
	if err != nil {
		return ""
	}
	return res.Value.Str()
}
