package workbench

// Selectors in adapter files and in the probe's report may cross open
// shadow roots: "host >>> inner" matches inner inside the shadow root of
// each element matching host (the combinator Puppeteer and the old
// Shadow DOM spec spell the same way). Custom elements of component
// toolkits (a button or a drop-down whose control lives in its shadow
// root) need it; a selector without >>> is an ordinary CSS selector.

// jsDeep defines qsa(root, sel) and qs(root, sel), which read >>>;
// deepActive(doc), the focused element through open shadow roots;
// composedContains(outer, inner), across shadow roots; and
// userClick(el), the events a person's click causes, on the control
// inside a custom element's shadow root where it has one.
const jsDeep = `const qsa = (root, sel) => {
	if (!sel.includes('>>>')) return [...root.querySelectorAll(sel)];
	let scopes = [root];
	const parts = sel.split('>>>').map((s) => s.trim());
	for (let i = 0; i < parts.length; i++) {
		const found = [];
		for (const s of scopes) for (const el of s.querySelectorAll(parts[i])) if (!found.includes(el)) found.push(el);
		if (i === parts.length - 1) return found;
		scopes = found.map((el) => el.shadowRoot).filter(Boolean);
	}
	return [];
};
const qs = (root, sel) => sel.includes('>>>') ? (qsa(root, sel)[0] || null) : root.querySelector(sel);
const deepActive = (d) => {
	let a = d.activeElement;
	while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
	return a;
};
const composedContains = (outer, inner) => {
	for (let n = inner; n; n = n.parentNode || n.host) if (n === outer) return true;
	return false;
};
const isDisabled = (el) => !!el.disabled || el.getAttribute('aria-disabled') === 'true';
const userClick = (el) => {
	const t = (el.shadowRoot && el.shadowRoot.querySelector('button, [role="button"], input, [part~="control"]')) || el;
	const W = t.ownerDocument.defaultView;
	const r = t.getBoundingClientRect();
	const o = {bubbles: true, cancelable: true, composed: true, view: W, clientX: r.left + r.width / 2, clientY: r.top + r.height / 2, button: 0};
	t.dispatchEvent(new W.PointerEvent('pointerdown', {...o, pointerId: 1, isPrimary: true, buttons: 1}));
	t.dispatchEvent(new W.MouseEvent('mousedown', {...o, buttons: 1}));
	if (typeof t.focus === 'function') t.focus();
	t.dispatchEvent(new W.PointerEvent('pointerup', {...o, pointerId: 1, isPrimary: true}));
	t.dispatchEvent(new W.MouseEvent('mouseup', o));
	t.dispatchEvent(new W.MouseEvent('click', {...o, detail: 1}));
};`

// jsSelectOption is the body of a select step: it picks the option whose
// value (or, failing that, label) is arg.value in arg.selector. A native
// <select> gets its value and the input and change events. A custom
// drop-down (vscode-dropdown and the like) is opened and its option
// clicked, as a person does, the option found among its children or in its
// shadow root; only if that leaves another value is its value property
// set and input and change fired. It returns false while the element or
// the option is not there yet.
const jsSelectOption = `const el = qs(d, arg.selector);
	if (!el) return false;
	const fire = (t) => { for (const e of ['input', 'change']) t.dispatchEvent(new Event(e, {bubbles: true, composed: true})); };
	if (el.tagName === 'SELECT') {
		if (![...el.options].some((o) => o.value === arg.value)) return false;
		el.value = arg.value; fire(el); return true;
	}
	const scope = [...el.querySelectorAll('*'), ...(el.shadowRoot ? el.shadowRoot.querySelectorAll('*') : [])];
	const options = scope.filter((o) => o.matches('option, [role="option"]') || /-option$/i.test(o.tagName));
	const valueOf = (o) => [o.value, o.getAttribute('value'), o.dataset ? o.dataset.value : undefined];
	const opt = options.find((o) => valueOf(o).includes(arg.value)) || options.find((o) => (o.textContent || '').trim() === arg.value);
	const picked = () => el.value === arg.value || (!!opt && (opt.selected === true || opt.getAttribute('aria-selected') === 'true'));
	if (!opt) {
		if (!('value' in el) || options.length === 0) return false;
		el.value = arg.value; fire(el); return el.value === arg.value;
	}
	if (picked()) return true;
	const trigger = (el.shadowRoot && el.shadowRoot.querySelector('[aria-haspopup], [role="combobox"]')) || el;
	const open = el.open === true || el.getAttribute('aria-expanded') === 'true' || trigger.getAttribute('aria-expanded') === 'true';
	if (!open) userClick(trigger);
	userClick(opt);
	if (picked()) return true;
	if (!('value' in el)) return false;
	el.value = arg.value; fire(el);
	return picked();`
