package driver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"go.uber.org/zap"

	"dialogfarm/adapter"
	"dialogfarm/dialog"
	"dialogfarm/driver/editor"
)

// ProbeConfig says what `adapters probe` looks at.
type ProbeConfig struct {
	// Extension is the plugin: an unpacked folder or a .vsix.
	Extension string
	// Settings point the plugin at the capture endpoint, with the
	// placeholders of adapter files ({{capture_url}}, {{secret}}, ...).
	Settings map[string]any
	// Message is the test message typed into the first input; empty: none.
	Message string
}

// ProbeReport is what the probe found: the starting point of an adapter.
type ProbeReport struct {
	ExtensionID string
	// Manifest is what the plugin's package.json contributes.
	ActivityBar []string
	Commands    []ProbeCommand
	// Frames are the iframe selectors from the workbench to the chat
	// document, and FrameSources the src (query cut) of each frame found.
	Frames       []string
	FrameSources []string
	Elements     []ProbeElement
	// Sent says how the test message went out ("key enter", "key
	// ctrl+enter", "button <selector>"), after which Setup, if any.
	Sent     string
	Setup    []string
	Requests []dialog.Exchange
	// DOM is the chat document's body after the test message (clipped),
	// where the user and assistant messages are to be found.
	DOM   string
	Notes []string
}

// ProbeCommand is one command the plugin contributes.
type ProbeCommand struct {
	ID, Title, Keybinding string
	ContextMenu           bool
}

// ProbeElement is an interactive element of the chat document with its
// best stable selector (id, data-testid, name, aria-label, classes, path).
type ProbeElement struct {
	Kind     string   `json:"kind"`
	Selector string   `json:"selector"`
	Label    string   `json:"label"`
	Disabled bool     `json:"disabled"`
	Options  []string `json:"options,omitempty"`
	Value    string   `json:"value,omitempty"`
}

type contributes struct {
	Publisher   string `json:"publisher"`
	Name        string `json:"name"`
	Contributes struct {
		ViewsContainers struct {
			Activitybar []struct {
				Title string `json:"title"`
			} `json:"activitybar"`
		} `json:"viewsContainers"`
		Commands []struct {
			Command string `json:"command"`
			Title   string `json:"title"`
		} `json:"commands"`
		Keybindings []struct {
			Command string `json:"command"`
			Key     string `json:"key"`
		} `json:"keybindings"`
		Menus map[string][]struct {
			Command string `json:"command"`
		} `json:"menus"`
	} `json:"contributes"`
}

// probeAdapter is the adapter a probe drives with: only what the manifest
// tells, default webview frames, any document counts as ready.
func probeAdapter(pc ProbeConfig) (*adapter.Adapter, contributes, error) {
	var m contributes
	abs, err := filepath.Abs(pc.Extension)
	if err != nil {
		return nil, m, err
	}
	a := &adapter.Adapter{Name: "probe", Source: "probe", Settings: pc.Settings}
	if strings.HasSuffix(abs, ".vsix") {
		a.Extension.VSIX = abs
	} else {
		a.Extension.Folder = abs
	}
	if err := editor.DecodeManifest(a, &m); err != nil {
		return nil, m, fmt.Errorf("probe: %w", err)
	}
	a.Extension.ID = m.Publisher + "." + m.Name
	if len(m.Contributes.ViewsContainers.Activitybar) > 0 {
		a.Open.ActivityBar = m.Contributes.ViewsContainers.Activitybar[0].Title
	}
	a.Webview = adapter.Webview{Frames: []string{`iframe.webview.ready[src*="extensionId={{extension_id}}"]`, `iframe#active-frame`}, Ready: "body"}
	return a, m, nil
}

// Probe starts the editor with a plugin no adapter describes yet, opens
// its view and reports the frame chain, the interactive elements with
// stable selectors, and the requests a test message makes it send (trying
// Enter, Ctrl+Enter, then a send-like button; if nothing goes out, each
// option of each <select> in turn, as a provider picker may hold it back).
func Probe(ctx context.Context, rc RunConfig, pc ProbeConfig, capture Exchanges, log *zap.Logger) (ProbeReport, error) {
	a, m, err := probeAdapter(pc)
	if err != nil {
		return ProbeReport{}, err
	}
	rep := ProbeReport{ExtensionID: a.Extension.ID, Frames: a.Frames()}
	for _, c := range m.Contributes.ViewsContainers.Activitybar {
		rep.ActivityBar = append(rep.ActivityBar, c.Title)
	}
	keys, menu := map[string]string{}, map[string]bool{}
	for _, k := range m.Contributes.Keybindings {
		keys[k.Command] = k.Key
	}
	for _, it := range m.Contributes.Menus["editor/context"] {
		menu[it.Command] = true
	}
	for _, c := range m.Contributes.Commands {
		rep.Commands = append(rep.Commands, ProbeCommand{ID: c.Command, Title: c.Title, Keybinding: keys[c.Command], ContextMenu: menu[c.Command]})
	}
	if a.Open.ActivityBar == "" {
		return rep, errors.New("probe: the plugin contributes no activity bar container; its view cannot be opened by the probe")
	}
	rc.Adapters = []*adapter.Adapter{a}
	r := NewRunner(rc, capture, nil, log)
	if err := r.Start(ctx); err != nil {
		return rep, err
	}
	defer r.Stop()
	ws, err := probeWorkspace(r.cfg.Out)
	if err != nil {
		return rep, err
	}
	s, err := r.NewSession(ctx, "probe")
	if err != nil {
		return rep, err
	}
	w, u := s.win, uiOf(a)
	if err := s.open(ctx, ws, a); err != nil {
		return rep, err
	}
	if err := w.clickActivity(ctx, a.Open.ActivityBar); err != nil {
		return rep, err
	}
	if err := w.waitChat(ctx, u); err != nil {
		return rep, err
	}
	if err := w.waitFor(ctx, "the view shows an input or button", js("ui", `const c = chatDoc(ui);
		return !!c && !!c.d.querySelector('input, textarea, button, select, [contenteditable]');`, jsChatDoc), u); err != nil {
		return rep, err
	}
	src, err := w.eval(ctx, js("ui", `const c = chatDoc(ui); return c ? c.frames.map(f => (f.getAttribute('src') || '').split('?')[0] + (f.id ? ' #' + f.id : '')) : [];`, jsChatDoc), u)
	if err == nil {
		for _, v := range src.Arr() {
			rep.FrameSources = append(rep.FrameSources, v.Str())
		}
	}
	if rep.Elements, err = w.elements(ctx, u); err != nil {
		return rep, err
	}
	if pc.Message != "" {
		if err := probeSend(ctx, s, u, pc.Message, &rep); err != nil {
			rep.Notes = append(rep.Notes, "test message: "+err.Error())
		}
		rep.DOM = clip(w.chatDOM(ctx, u), 4000)
	}
	return rep, nil
}

// elements lists the chat document's interactive elements.
func (w *window) elements(ctx context.Context, u ui) ([]ProbeElement, error) {
	res, err := w.eval(ctx, js("ui", `const c = chatDoc(ui);
		if (!c) return '[]';
		const d = c.d;
		const unique = (sel) => { try { return d.querySelectorAll(sel).length === 1; } catch (e) { return false; } };
		const q = (s) => JSON.stringify(s);
		const best = (el) => {
			const tag = el.tagName.toLowerCase();
			if (el.id && unique('#' + CSS.escape(el.id))) return '#' + CSS.escape(el.id);
			for (const a of ['data-testid', 'data-test', 'name', 'aria-label', 'placeholder', 'title']) {
				const v = el.getAttribute(a);
				if (v && unique(tag + '[' + a + '=' + q(v) + ']')) return tag + '[' + a + '=' + q(v) + ']';
			}
			const cls = [...el.classList].map(x => '.' + CSS.escape(x)).join('');
			if (cls && unique(tag + cls)) return tag + cls;
			const path = [];
			for (let e = el; e && e !== d.body; e = e.parentElement) {
				const t = e.tagName.toLowerCase();
				const same = e.parentElement ? [...e.parentElement.children].filter(x => x.tagName === e.tagName) : [e];
				path.unshift(same.length > 1 ? t + ':nth-of-type(' + (same.indexOf(e) + 1) + ')' : t);
			}
			return 'body > ' + path.join(' > ');
		};
		const out = [];
		for (const el of d.querySelectorAll('input, textarea, select, button, [contenteditable="true"], [contenteditable=""], [role="textbox"]')) {
			const kind = el.isContentEditable ? 'contenteditable' : el.tagName.toLowerCase();
			const label = (el.getAttribute('aria-label') || el.getAttribute('placeholder') || el.dataset.placeholder || el.textContent || '').trim().slice(0, 60);
			const e = {kind, selector: best(el), label, disabled: !!el.disabled};
			if (kind === 'select') { e.options = [...el.options].map(o => o.value); e.value = el.value; }
			out.push(e);
		}
		return JSON.stringify(out);`, jsChatDoc), u)
	if err != nil {
		return nil, fmt.Errorf("list the view's elements: %w", err)
	}
	var els []ProbeElement
	if err := json.Unmarshal([]byte(res.Str()), &els); err != nil {
		return nil, fmt.Errorf("list the view's elements: %w", err)
	}
	return els, nil
}

// probeSend types the message into the first text input and tries ways to
// send it until the capture endpoint gets a request.
func probeSend(ctx context.Context, s *Session, u ui, msg string, rep *ProbeReport) error {
	var in *ProbeElement
	for i, e := range rep.Elements {
		if e.Kind == "contenteditable" || e.Kind == "textarea" || (e.Kind == "input" && !e.Disabled) {
			in = &rep.Elements[i]
			break
		}
	}
	if in == nil {
		return errors.New("the view has no text input")
	}
	w := s.win
	got := func(d time.Duration) bool {
		cctx, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		ex, err := s.capture.Next(cctx, s.ID)
		if err != nil {
			return false
		}
		rep.Requests = append(rep.Requests, ex)
		return true
	}
	// typeAndSend types the message afresh (unless it is still there) and
	// sends it by key, or by clicking button when key is empty.
	// Keys go where the focus is: each waits until the input has it and
	// holds the message (on a loaded machine a key pressed right after
	// the click reached the workbench, and the probe reported the wrong
	// way to send).
	iu := u
	iu.Input = in.Selector
	// focus clicks the input until it has the keyboard focus: a click
	// can land while the view still lays out or its frame reloads, and
	// in CI (load 6-8) one click left the focus elsewhere for 5 minutes.
	focus := func() error {
		var err error
		for range 4 {
			if err = w.clickInChat(ctx, u, in.Selector); err != nil {
				return err
			}
			fctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			err = w.waitChatInputFocused(fctx, iu)
			cancel()
			if err == nil || ctx.Err() != nil || !errIsTimeout(err) {
				return err
			}
		}
		return fmt.Errorf("click %s (the focus is on %s): %w", in.Selector, w.focusPath(ctx), err)
	}
	typeAndSend := func(key, button string) error {
		if err := focus(); err != nil {
			return err
		}
		if cleared(ctx, w, u, in.Selector) {
			if err := w.insert(ctx, msg); err != nil {
				return err
			}
			if err := w.waitChatInput(ctx, iu, msg); err != nil {
				return err
			}
			if err := focus(); err != nil {
				return err
			}
		}
		if key == "" {
			return w.clickInChat(ctx, u, button)
		}
		keys, err := parseKeys(key)
		if err != nil {
			return err
		}
		return w.keys(ctx, keys...)
	}
	var sendKey, sendButton string
	sent := false
	for _, k := range []string{"enter", "ctrl+enter"} {
		if err := typeAndSend(k, ""); err != nil {
			return err
		}
		// A plugin that took the message (its input cleared) gets 10 s
		// more: its request may be slow.
		sent = got(4 * time.Second)
		took := sent || cleared(ctx, w, u, in.Selector)
		if !sent && took {
			sent = got(10 * time.Second)
		}
		if took {
			rep.Sent, sendKey = "key "+k, k
			if !sent {
				rep.Sent += " (the input was cleared, but no request came)"
			}
			break
		}
	}
	if rep.Sent == "" {
		for _, e := range rep.Elements {
			l := strings.ToLower(e.Label)
			if e.Kind == "button" && (strings.Contains(l, "send") || strings.Contains(l, "ask") || strings.Contains(l, "submit")) {
				if err := typeAndSend("", e.Selector); err != nil {
					return err
				}
				rep.Sent, sendButton = "button "+e.Selector, e.Selector
				sent = got(4 * time.Second)
				break
			}
		}
	}
	if !sent && rep.Sent != "" {
		// A provider or model picker may hold the query back, or have sent
		// it elsewhere: pick each option in turn, and send again if picking
		// alone sends nothing. The view may have filled its pickers since
		// it was first listed.
		els := rep.Elements
		if now, err := w.elements(ctx, u); err == nil {
			els = now
		}
		for _, e := range els {
			if e.Kind != "select" {
				continue
			}
			for _, opt := range e.Options {
				if opt == "" || opt == e.Value {
					continue
				}
				what, body, arg := setupScript(adapter.Action{Select: &adapter.Value{Selector: e.Selector, Value: opt}})
				if err := w.waitFor(ctx, what, js("ui, arg", `const c = chatDoc(ui); if (!c) return false; const d = c.d; `+body, jsChatDoc), u, arg); err != nil {
					return err
				}
				sent = got(2 * time.Second)
				if !sent {
					if err := typeAndSend(sendKey, sendButton); err != nil {
						return err
					}
					sent = got(4 * time.Second)
				}
				if sent {
					rep.Setup = append(rep.Setup, fmt.Sprintf("select: {selector: '%s', value: %s}", e.Selector, opt))
					break
				}
			}
			if sent {
				break
			}
		}
	}
	if !sent {
		return errors.New("no request reached the capture endpoint (is the plugin pointed at {{capture_url}} with --setting?)")
	}
	// Later requests (titles, summaries) follow the answer.
	for got(3 * time.Second) {
	}
	return nil
}

// cleared reports whether the input is empty now.
func cleared(ctx context.Context, w *window, u ui, sel string) bool {
	res, err := w.eval(ctx, js("ui, sel", `const c = chatDoc(ui); const el = c && c.d.querySelector(sel);
		return !!el && ((el.value !== undefined && !el.isContentEditable) ? el.value === '' : (el.textContent || '').trim() === '');`, jsChatDoc), u, sel)
	return err == nil && res.Bool()
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
