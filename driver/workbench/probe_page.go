package workbench

// The probe's page scripts: stable selectors, the chat document's elements
// (through open shadow roots), the ranking of text inputs and of send-like
// buttons. They read only what any chat view shows (tags, roles, ARIA
// labels, placeholders, classes, layout), never a plugin's own names.

// jsStable defines generated(token), whether an id or class looks made by
// a framework (CSS-module and CSS-in-JS hashes, counters; a BEM name such
// as block__element is not); descriptor(el), a selector from the
// element's own tag, stable classes and label, for elements no longer in
// the document; and stableSel(el), the shortest selector that matches
// el alone in its document or shadow root (id, test ids, name, ARIA label,
// placeholder, title, a custom element's tag, classes; else a path),
// prefixed with its shadow hosts' selectors and >>>.
const jsStable = `const generated = (v) => /^(css|sc|jsx|svelte|emotion|tw)-|\d{3,}|^:r|[-_][A-Za-z0-9]*\d[A-Za-z0-9]*$|__(?=[A-Za-z0-9_-]{5}$).*[A-Z0-9]/.test(v);
const cssq = (s) => JSON.stringify(s);
const stableClasses = (el) => [...el.classList].filter((c) => !generated(c));
const descriptor = (el) => {
	const tag = el.tagName.toLowerCase();
	const cls = stableClasses(el).slice(0, 3).map((c) => '.' + CSS.escape(c)).join('');
	if (cls) return tag + cls;
	const label = el.getAttribute('aria-label') || el.getAttribute('title');
	if (label) return tag + '[' + (el.hasAttribute('aria-label') ? 'aria-label' : 'title') + '=' + cssq(label) + ']';
	return tag + [...el.classList].slice(0, 2).map((c) => '.' + CSS.escape(c)).join('');
};
const stableSel = (el) => {
	const root = el.getRootNode();
	const alone = (s) => { try { const all = root.querySelectorAll(s); return all.length === 1 && all[0] === el; } catch (e) { return false; } };
	const tag = el.tagName.toLowerCase();
	let s = null;
	if (el.id && !generated(el.id) && alone('#' + CSS.escape(el.id))) s = '#' + CSS.escape(el.id);
	for (const a of ['data-testid', 'data-test', 'data-cy', 'name', 'aria-label', 'placeholder', 'title']) {
		if (s) break;
		const v = el.getAttribute(a);
		if (v && v.length < 80 && alone(tag + '[' + a + '=' + cssq(v) + ']')) s = tag + '[' + a + '=' + cssq(v) + ']';
	}
	if (!s && tag.includes('-') && alone(tag)) s = tag;
	const cls = stableClasses(el).map((c) => '.' + CSS.escape(c));
	for (let i = 0; !s && i < cls.length; i++) if (alone(tag + cls[i])) s = tag + cls[i];
	for (let i = 0; !s && i < cls.length; i++) for (let j = i + 1; !s && j < cls.length; j++) if (alone(tag + cls[i] + cls[j])) s = tag + cls[i] + cls[j];
	if (!s && cls.length && alone(tag + cls.join(''))) s = tag + cls.join('');
	const all = [...el.classList].map((c) => '.' + CSS.escape(c)).join('');
	if (!s && all && alone(tag + all)) s = tag + all;
	if (!s) {
		const path = [];
		let e = el;
		for (; e && e.parentElement; e = e.parentElement) {
			const t = e.tagName.toLowerCase();
			const same = [...e.parentElement.children].filter((x) => x.tagName === e.tagName);
			path.unshift(same.length > 1 ? t + ':nth-of-type(' + (same.indexOf(e) + 1) + ')' : t);
			if (e !== el && e.id && !generated(e.id)) { path[0] = '#' + CSS.escape(e.id); break; }
		}
		if (e && !e.parentElement) path.unshift(e.tagName.toLowerCase());
		s = path.join(' > ');
	}
	return root.host ? stableSel(root.host) + ' >>> ' + s : s;
};`

// jsWalk defines allElements(d): every element of the document and of the
// open shadow roots inside it, in document order, each shadow root's
// elements right after its host.
const jsWalk = `const allElements = (d) => {
	const out = [];
	const walk = (root) => {
		for (const el of root.querySelectorAll('*')) {
			out.push(el);
			if (el.shadowRoot) walk(el.shadowRoot);
		}
	};
	walk(d);
	return out;
};
const shown = (el) => {
	const r = el.getBoundingClientRect();
	return r.width > 2 && r.height > 2 && el.checkVisibility({visibilityProperty: true, opacityProperty: true});
};
const labelOf = (el) => {
	const ph = el.querySelector && el.querySelector('[data-placeholder]');
	return [el.getAttribute('aria-label'), el.getAttribute('placeholder'), el.getAttribute('aria-placeholder'), el.getAttribute('data-placeholder'),
		ph && ph.getAttribute('data-placeholder'), el.getAttribute('title'), el.labels && el.labels[0] && el.labels[0].textContent]
		.filter(Boolean).join(' ').replace(/\s+/g, ' ').trim();
};`

// jsRank defines rankInputs(c): the chat document's text inputs, best
// first, each with its selector, kind, label, visibility, whether it is
// enabled, a score and the reasons for it. Rich editors (ProseMirror,
// CodeMirror, other contenteditables) come before textareas, which come
// before single-line inputs; search boxes, filters and other panels'
// fields lose; a label that speaks of asking, messages, chat or prompts
// wins; so does being wide and low in the view, where composers sit.
// Hidden and disabled inputs are listed, never tried.
//
// sendButtons(c, inputSel) ranks the buttons that may send what the input
// holds: visible and enabled, labelled (text, ARIA label, title, icon
// classes) like send, submit or ask, or the input's form's submit button;
// not like stop, new, attach or settings; near the input first. A custom
// element with a button in its shadow root counts once, as itself.
const jsRank = `const inputKinds = (el) => {
	const tag = el.tagName.toLowerCase();
	const cls = (typeof el.className === 'string' ? el.className : '') + ' ' + ((el.parentElement && typeof el.parentElement.className === 'string') ? el.parentElement.className : '');
	if (el.isContentEditable && el.parentElement && el.parentElement.isContentEditable) return null;
	if (el.isContentEditable || el.getAttribute('contenteditable') === 'true' || el.getAttribute('contenteditable') === '' || el.getAttribute('contenteditable') === 'plaintext-only') {
		if (/\bProseMirror\b|\btiptap\b/.test(cls)) return {kind: 'prosemirror', score: 40, method: 'type'};
		if (/\bcm-content\b/.test(cls)) return {kind: 'codemirror', score: 34, method: 'type'};
		if (el.hasAttribute('data-lexical-editor') || el.hasAttribute('data-slate-editor') || /\bql-editor\b/.test(cls)) return {kind: 'richtext', score: 36, method: 'type'};
		return {kind: 'contenteditable', score: 30, method: 'type'};
	}
	if (/\bCodeMirror\b/.test(typeof el.className === 'string' ? el.className : '') && tag === 'div' && el.querySelector('textarea')) return {kind: 'codemirror', score: 32, method: 'type'};
	if (tag === 'textarea') return el.closest('.CodeMirror') ? null : {kind: 'textarea', score: 28, method: 'fill'};
	if (tag === 'input') {
		const type = (el.getAttribute('type') || 'text').toLowerCase();
		if (type === 'search') return {kind: 'input', score: 8, method: 'fill', search: true};
		if (['text', 'email', 'url', 'tel', ''].includes(type)) return {kind: 'input', score: 8, method: 'fill'};
		return null;
	}
	if (tag.includes('-') && el.shadowRoot) {
		const inner = el.shadowRoot.querySelector('textarea, input:not([type]), input[type="text"], input[type="search"]');
		if (inner) return {kind: inner.tagName === 'TEXTAREA' ? 'textarea' : 'input', score: inner.tagName === 'TEXTAREA' ? 24 : 6, method: 'fill', custom: true, search: (inner.getAttribute('type') || '') === 'search'};
	}
	if (el.getAttribute('role') === 'textbox') return {kind: 'textbox', score: 15, method: 'type'};
	return null;
};
const rankInputs = (c) => {
	const d = c.d;
	const W = d.defaultView;
	const vw = Math.max(d.documentElement.clientWidth, 1), vh = Math.max(d.documentElement.clientHeight, 1);
	const out = [];
	const seen = new Set();
	for (const el of allElements(d)) {
		const k = inputKinds(el);
		if (!k) continue;
		const host = el.getRootNode().host;
		if (seen.has(el) || (host && seen.has(host))) continue;
		seen.add(el);
		const why = [k.kind + ' +' + k.score];
		let score = k.score;
		const label = labelOf(el);
		const words = (label + ' ' + (el.getAttribute('name') || '') + ' ' + (el.id || '') + ' ' + (typeof el.className === 'string' ? el.className : '')).toLowerCase();
		const search = k.search || el.getAttribute('role') === 'searchbox' || !!el.closest('[role="search"], search') ||
			/search|filter|\bfind\b|replace|rename|\burl\b|password|e-?mail|api.?key|\btoken\b|user.?name|go to/.test(words);
		if (search) { score -= 30; why.push('search or other field -30'); }
		if (/\bask\b|message|\bchat|prompt|question|reply|compose|instruct|\btalk\b|\bsend\b|type (a|your)|write (a|your)|what can i|how can i/.test(words)) { score += 15; why.push('chat words +15'); }
		const visible = shown(el);
		const enabled = !el.disabled && !el.readOnly && el.getAttribute('aria-disabled') !== 'true' && el.getAttribute('aria-readonly') !== 'true';
		const r = el.getBoundingClientRect();
		if (visible) {
			const wide = Math.min(r.width / vw, 1), low = Math.min(Math.max((r.top + r.height / 2) / vh, 0), 1);
			score += Math.round(20 * wide) + Math.round(15 * low);
			why.push('width ' + Math.round(100 * wide) + '% +' + Math.round(20 * wide), 'height in view ' + Math.round(100 * low) + '% +' + Math.round(15 * low));
			if (r.height >= 36) { score += 5; why.push('tall +5'); }
		} else {
			why.push('hidden');
		}
		if (!enabled) why.push('disabled');
		out.push({selector: stableSel(el), kind: k.kind, method: k.method, label: label.slice(0, 80), visible, enabled, score, why: why.join(', ')});
	}
	out.sort((a, b) => (b.visible && b.enabled) - (a.visible && a.enabled) || b.score - a.score);
	return out;
};
const sendButtons = (c, inputSel) => {
	const d = c.d;
	const input = inputSel ? qs(d, inputSel) : null;
	const ir = input ? input.getBoundingClientRect() : null;
	const diag = Math.hypot(d.documentElement.clientWidth, d.documentElement.clientHeight) || 1;
	const out = [];
	for (const el of allElements(d)) {
		const tag = el.tagName.toLowerCase();
		const role = el.getAttribute('role');
		const host = el.getRootNode().host;
		if (host && host.shadowRoot && host.shadowRoot.querySelector('button')) continue; // the host stands for its own button
		if (el.hasAttribute('aria-haspopup')) continue; // a picker or a menu
		const buttonLike = tag === 'button' || role === 'button' || (tag === 'input' && ['submit', 'button', 'image'].includes(el.type)) ||
			(tag.includes('-') && (/button/.test(tag) || (el.shadowRoot && el.shadowRoot.querySelector('button'))));
		if (!buttonLike || (el.parentElement && el.parentElement.closest('button, [role="button"]'))) continue;
		if (!shown(el) || isDisabled(el)) continue;
		const icons = [...el.querySelectorAll('[class]')].map((x) => typeof x.className === 'string' ? x.className : '').join(' ');
		const text = [el.getAttribute('aria-label'), el.getAttribute('title'), el.value, (el.textContent || '').trim().slice(0, 40),
			typeof el.className === 'string' ? el.className : '', icons, el.getAttribute('type')].filter(Boolean).join(' ').toLowerCase();
		let score = 0;
		const why = [];
		const sendWords = /send|submit|\bask\b|paper-?plane|arrow-up|arrow-right|\bgo\b|\brun\b|enter/.test(text);
		const submit = !!input && el.type === 'submit' && !!el.form && el.form.contains(input);
		if (!sendWords && !submit) continue; // only a button that says it sends is pressed
		if (sendWords) { score += 30; why.push('send words +30'); }
		if (/stop|cancel|abort|\bnew\b|clear|reset|delete|remove|attach|upload|\bfile|history|setting|close|copy|regenerate|retry|search|\btab\b|more|menu|expand|collapse|back/.test(text)) { score -= 40; why.push('other action -40'); }
		if (submit) { score += 20; why.push('its form\'s submit +20'); }
		if (ir) {
			const r = el.getBoundingClientRect();
			const dist = Math.hypot((r.left + r.width / 2) - (ir.left + ir.width / 2), (r.top + r.height / 2) - (ir.top + ir.height / 2));
			const near = Math.round(10 * (1 - Math.min(dist / diag, 1)));
			score += near; why.push('near the input +' + near);
			if (input.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING) { score += 3; why.push('after the input +3'); }
		}
		out.push({selector: stableSel(el), label: text.slice(0, 60), score, why: why.join(', ')});
	}
	out.sort((a, b) => b.score - a.score);
	return out;
};`

// jsElements defines listElements(c): the chat document's interactive
// elements, custom elements and elements inside open shadow roots, each
// with a stable selector (crossing shadow roots with >>>), its kind (a
// custom element's tag), label, state, and a drop-down's options.
const jsElements = `const listElements = (c) => {
	const out = [];
	for (const el of allElements(c.d)) {
		const tag = el.tagName.toLowerCase();
		const custom = tag.includes('-');
		const editable = el.isContentEditable && !(el.parentElement && el.parentElement.isContentEditable);
		const interactive = el.matches('input, textarea, select, button, [role="button"], [role="textbox"], [role="combobox"], [role="listbox"], [role="option"], [role="tab"]') || editable;
		if (!custom && !interactive) continue;
		if (!custom && el.getRootNode().host && el.getRootNode().host.tagName.toLowerCase().includes('-') && !editable &&
			!el.matches('[role="option"], [role="listbox"]')) continue; // a custom element's own parts: its host stands for them
		const kind = editable ? 'contenteditable' : tag;
		const label = (labelOf(el) || (el.textContent || '').trim()).replace(/\s+/g, ' ').slice(0, 60);
		const e = {kind, selector: stableSel(el), label, disabled: isDisabled(el), hidden: !shown(el)};
		if (custom) e.shadow = el.shadowRoot ? 'open' : 'none';
		if (tag === 'select') { e.options = [...el.options].map((o) => o.value); e.value = el.value; }
		else if (custom) {
			const opts = [...el.querySelectorAll('*'), ...(el.shadowRoot ? el.shadowRoot.querySelectorAll('*') : [])]
				.filter((o) => o.matches('option, [role="option"]') || /-option$/i.test(o.tagName));
			if (opts.length) {
				e.options = opts.map((o) => o.value || o.getAttribute('value') || (o.dataset && o.dataset.value) || (o.textContent || '').trim());
				if ('value' in el) e.value = String(el.value);
			}
		}
		out.push(e);
		if (out.length >= 120) break;
	}
	return out;
};`
