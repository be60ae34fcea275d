package workbench

import (
	"context"
	"encoding/json"
	"fmt"

	"dialogfarm/adapter"
)

// ProbeObserved is what the probe saw the view do with its test message
// and the answer it got: where the messages are, how the answer is shown,
// and when it was done. Each field is a draft for the adapter's answer:
// section.
type ProbeObserved struct {
	// User and Answer match the user and assistant messages; Text, inside
	// an assistant message, the answer's text ("" for the message itself).
	User   string `json:"user"`
	Answer string `json:"answer"`
	Text   string `json:"text"`
	// Compare is how the text shown relates to the answer sent: exact,
	// whitespace or markdown.
	Compare string       `json:"compare"`
	Done    adapter.Done `json:"done"`
	// Evidence says what each choice rests on.
	Evidence []string `json:"evidence"`
}

// jsRecorder defines startRecording(c): from now on, the chat document's
// changes that can end a turn are logged on its window: controls
// (buttons, custom elements, spinners, stop and progress signs) added and
// removed, with their descriptors, and attribute changes.
const jsRecorder = `const startRecording = (c) => {
	const d = c.d, W = d.defaultView;
	if (W.__dialogfarmProbe) W.__dialogfarmProbe.obs.disconnect();
	W.__dialogfarmProbeStable = null;
	const log = [];
	const t0 = performance.now();
	const words = (el) => ((typeof el.className === 'string' ? el.className : '') + ' ' + (el.getAttribute('aria-label') || '') + ' ' +
		(el.getAttribute('title') || '') + ' ' + (el.textContent || '').trim().slice(0, 30)).toLowerCase();
	const controlLike = (el) => el.matches('button, [role="button"], [role="progressbar"], [aria-busy], progress') || el.tagName.includes('-') ||
		/stop|cancel|abort|spinner|loading|progress|typing|busy|generating|codicon/.test(words(el));
	const note = (op, el, t) => { if (log.length < 3000) log.push({op, t, sel: descriptor(el), words: words(el)}); };
	const subtree = (op, n, t) => {
		if (n.nodeType !== 1) return;
		if (controlLike(n)) note(op, n, t);
		let k = 0;
		for (const el of n.querySelectorAll('*')) if (controlLike(el)) { note(op, el, t); if (++k > 40) break; }
	};
	const obs = new W.MutationObserver((ms) => {
		const t = Math.round(performance.now() - t0);
		for (const m of ms) {
			if (m.type === 'childList') {
				m.addedNodes.forEach((n) => subtree('add', n, t));
				m.removedNodes.forEach((n) => subtree('remove', n, t));
			} else if (m.type === 'attributes' && m.attributeName !== 'style' && m.attributeName !== 'class' && log.length < 3000) {
				log.push({op: 'attr', t, el: m.target, sel: descriptor(m.target), words: words(m.target), name: m.attributeName, old: m.oldValue, now: m.target.getAttribute(m.attributeName)});
			}
		}
	});
	obs.observe(d.body, {subtree: true, childList: true, attributes: true, attributeOldValue: true});
	W.__dialogfarmProbe = {obs, log, t0};
	return true;
};`

// jsObserve defines observeAnswer(c, msg, raw, plain): once the view shows
// the answer (raw as sent, or plain, its markdown's rendered text; white
// space ignored) and it has not changed for a second, the answer's
// element, the message elements of the answer and of the test message and
// selectors that tell them apart, how the text compares, and the done
// condition the recorded changes support best: an attribute of the
// message that changed to its final value, a control shown while the
// answer came and gone since (a stop button, a spinner), a control
// disabled meanwhile and enabled again, else a stable text. Null before.
const jsObserve = `const observeAnswer = (c, msg, raw, plain) => {
	const d = c.d, W = d.defaultView;
	const strip = (s) => (s || '').replace(/\s+/g, '');
	const norm = (s) => (s || '').replace(/\s+/g, ' ').trim();
	const want = [strip(raw), strip(plain)];
	const depth = (el) => { let n = 0; for (let e = el; e; e = e.parentElement) n++; return n; };
	let T = null;
	const users = [];
	for (const el of d.body.querySelectorAll('*')) {
		if (el.isContentEditable || el.matches('textarea, input, script, style')) continue;
		const t = strip(el.textContent);
		if (!t) continue;
		if (want.includes(t) && (!T || depth(el) > depth(T))) T = el;
		if (t === strip(msg) && ![...el.children].some((x) => strip(x.textContent) === t)) users.push(el);
	}
	if (!T) return null;
	const st = W.__dialogfarmProbeStable || (W.__dialogfarmProbeStable = {text: null, since: 0});
	const now = performance.now();
	if (st.text !== T.textContent) { st.text = T.textContent; st.since = now; return null; }
	if (now - st.since < 1000) return null;
	const ev = [];
	const ancestors = (el) => { const a = []; for (let e = el; e; e = e.parentElement) a.push(e); return a; };
	const lca = (a, b) => { const as = ancestors(a); for (let e = b; e; e = e.parentElement) if (as.includes(e)) return e; return null; };
	const childOn = (anc, el) => { for (let e = el; e; e = e.parentElement) if (e.parentElement === anc) return e; return el; };
	let U = null, L = null;
	for (const u of users) {
		if (u.contains(T) || T.contains(u)) continue;
		const l = lca(u, T);
		if (!L || depth(l) > depth(L)) { U = u; L = l; }
	}
	let M = T, UM = null;
	if (U) { M = childOn(L, T); UM = childOn(L, U); }
	// ok: the selector matches a and not b, and no match holds another.
	const ok = (s, a, b) => {
		let all;
		try { all = [...d.querySelectorAll(s)]; } catch (e) { return false; }
		return all.includes(a) && (!b || !all.includes(b)) && !all.some((x) => all.some((y) => y !== x && y.contains(x)));
	};
	const attrs = (el) => [...el.attributes].filter((a) => !['id', 'class', 'style'].includes(a.name) && a.value.length < 40);
	const distinguish = (a, b, inner) => {
		const tag = a.tagName.toLowerCase();
		const bc = b ? [...b.classList] : [];
		const mine = stableClasses(a).filter((x) => !bc.includes(x));
		const shared = stableClasses(a).filter((x) => bc.includes(x));
		for (const x of mine) for (const s of ['.' + CSS.escape(x), tag + '.' + CSS.escape(x)]) if (ok(s, a, b)) return s;
		for (const at of attrs(a)) {
			if (b && b.getAttribute(at.name) === at.value) continue;
			const base = '[' + at.name + '=' + cssq(at.value) + ']';
			for (const s of [base, tag + base, ...shared.map((x) => '.' + CSS.escape(x) + base)]) if (ok(s, a, b)) return s;
		}
		if (b) for (const x of stableClasses(b).filter((x) => !a.classList.contains(x))) for (const y of shared) {
			const s = '.' + CSS.escape(y) + ':not(.' + CSS.escape(x) + ')';
			if (ok(s, a, b)) return s;
		}
		for (const x of [...a.classList].filter((x) => !bc.includes(x))) if (ok('.' + CSS.escape(x), a, b)) return '.' + CSS.escape(x);
		if (!b || b.tagName !== a.tagName) if (ok(tag, a, b)) return tag;
		// The same element for both: told apart by what is inside (an
		// avatar, a role label), with :has().
		const base = shared.length ? '.' + CSS.escape(shared[0]) : tag + [...a.classList].map((x) => '.' + CSS.escape(x)).join('');
		const inB = new Set(b ? [...b.querySelectorAll('[class]')].flatMap((x) => [...x.classList]) : []);
		for (const x of [...a.querySelectorAll('[class]')].filter((x) => !inner || !inner.contains(x)).flatMap((x) => stableClasses(x))) {
			if (inB.has(x)) continue;
			const s = base + ':has(.' + CSS.escape(x) + ')';
			if (ok(s, a, b)) return s;
		}
		return '';
	};
	const relative = (t, m) => {
		if (t === m) return '';
		const tag = t.tagName.toLowerCase();
		const tries = [...stableClasses(t).map((x) => '.' + CSS.escape(x)), ...stableClasses(t).map((x) => tag + '.' + CSS.escape(x)),
			...attrs(t).map((a) => '[' + a.name + '=' + cssq(a.value) + ']'), tag];
		for (const s of tries) { try { if (m.querySelector(s) === t) return s; } catch (e) {} }
		const path = [];
		for (let e = t; e && e !== m; e = e.parentElement) {
			const same = [...e.parentElement.children].filter((x) => x.tagName === e.tagName);
			path.unshift(e.tagName.toLowerCase() + (same.length > 1 ? ':nth-of-type(' + (same.indexOf(e) + 1) + ')' : ''));
		}
		return ':scope > ' + path.join(' > ');
	};
	const out = {user: '', answer: '', text: '', compare: '', done: {}, evidence: ev};
	out.answer = distinguish(M, UM, T);
	if (UM) out.user = distinguish(UM, M, U);
	out.text = relative(T, M);
	ev.push('answer shown in ' + descriptor(T) + (M !== T ? ' inside message ' + descriptor(M) : ''));
	if (UM) ev.push('test message shown in ' + descriptor(UM)); else ev.push('the view does not show the test message as sent');
	if (T.textContent === raw) out.compare = 'exact';
	else if (norm(T.textContent) === norm(raw)) out.compare = 'whitespace';
	else if (strip(T.textContent) === strip(plain)) { out.compare = 'markdown'; ev.push('the answer is rendered from markdown'); }
	else out.compare = 'whitespace';
	const rec = W.__dialogfarmProbe || {log: []};
	const log = rec.log;
	const cands = [];
	for (const e of log) {
		if (e.op !== 'attr' || e.el !== M || ['hidden', 'aria-label', 'title'].includes(e.name)) continue;
		const fin = M.getAttribute(e.name);
		if (fin !== null && fin !== '' && e.old !== fin) cands.push({score: 60, done: {attribute: {name: e.name, values: [fin]}}, why: 'the message\'s ' + e.name + ' went from ' + JSON.stringify(e.old) + ' to ' + JSON.stringify(fin)});
	}
	const rate = (w) => /stop|cancel|abort/.test(w) ? 50 : /spinner|loading|progress|typing|busy|generating/.test(w) ? 40 : 20;
	for (const e of log) {
		if (e.op !== 'add') continue;
		if (!log.some((r) => r.op === 'remove' && r.sel === e.sel && r.t >= e.t)) continue;
		let still = true;
		try { still = qsa(d, e.sel).length > 0; } catch (x) {}
		if (still) continue;
		cands.push({score: rate(e.words), done: {disappears: e.sel}, why: e.sel + ' was shown after the send and is gone'});
	}
	for (const e of log) {
		if (e.op !== 'attr' || e.name !== 'hidden' || e.now === null || !e.el.isConnected) continue;
		const s = e.sel + ':not([hidden])';
		let still = true;
		try { still = qsa(d, s).length > 0; } catch (x) {}
		if (!still) cands.push({score: rate(e.words) - 5, done: {disappears: s}, why: e.sel + ' was hidden after the send'});
	}
	for (const e of log) {
		if (e.op !== 'attr' || !['disabled', 'aria-disabled'].includes(e.name) || !e.el.isConnected || isDisabled(e.el)) continue;
		if (!log.some((x) => x.op === 'attr' && x.el === e.el && x.name === e.name && x.now !== null && x.now !== 'false')) continue;
		const s = stableSel(e.el);
		cands.push({score: /send|submit/.test(e.words) ? 35 : 25, done: {enabled: s}, why: s + ' was disabled while the answer came and is enabled again'});
	}
	cands.sort((a, b) => b.score - a.score);
	const seen = new Set();
	for (const k of cands) { const key = JSON.stringify(k.done); if (!seen.has(key)) { seen.add(key); ev.push('done candidate: ' + k.why); } }
	out.done = cands.length ? cands[0].done : {stableMS: 1500};
	if (!cands.length) ev.push('nothing marked the end of the answer: done when its text is stable');
	return JSON.stringify(out);
};`

// record starts logging the chat document's changes (jsRecorder).
func (p *chatProber) record(ctx context.Context) error {
	_, err := p.w.eval(ctx, js("ui", `const c = chatDoc(ui); return !!c && startRecording(c);`, jsChatDoc, jsStable, jsRecorder), p.u)
	if err != nil {
		return fmt.Errorf("watch the view: %w", err)
	}
	return nil
}

// observe waits until the view shows the answer to the request that went
// out, and reads what it shows (jsObserve).
func (p *chatProber) observe(ctx context.Context) (ProbeObserved, error) {
	var o ProbeObserved
	res, err := p.w.poll(ctx, "the view shows the answer", js("ui, msg, raw, plain", `const c = chatDoc(ui); return c ? observeAnswer(c, msg, raw, plain) : null;`,
		jsChatDoc, jsStable, jsObserve), p.u, p.msg, p.ex.Answer, adapter.MarkdownText(p.ex.Answer))
	if err != nil {
		return o, err
	}
	if err := json.Unmarshal([]byte(res.Str()), &o); err != nil {
		return o, fmt.Errorf("read what the view shows: %w", err)
	}
	return o, nil
}
