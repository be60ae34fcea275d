// The profile editor (/profiles/NAME): the weights of the profile named
// by the body's data-profile, the plan they imply previewed as you type.
const base = document.body.dataset.profile;
let weights = {}, timer = null;
const el = (tag, attrs, text) => { const e = document.createElement(tag); Object.assign(e, attrs || {}); if (text !== undefined) e.textContent = text; return e; };
const pct = x => (100 * x).toFixed(1) + '%';
async function load() {
  const r = await fetch('/api/profiles/' + encodeURIComponent(base));
  const p = await r.json();
  if (!r.ok) { document.getElementById('errors').append(el('li', {}, p.error)); return; }
  document.getElementById('source').textContent = (p.saved ? 'saved ' : 'built-in ') + (p.source || '') + (p.description ? ' — ' + p.description : '');
  const dims = document.getElementById('dims');
  for (const d of p.dimensions) {
    weights[d.dim] = {};
    const box = el('div', {className: 'dim'});
    const h = el('h3', {}, d.dim + ' '); h.append(el('span', {className: 'jsd', id: 'jsd-' + d.dim}));
    const t = el('table'); const head = el('tr');
    for (const c of ['value', 'weight', 'share', 'plan']) head.append(el('th', {}, c));
    t.append(head);
    for (const v of d.values) {
      weights[d.dim][v.value] = v.weight;
      const tr = el('tr', {id: 'row-' + d.dim + '-' + v.value});
      const input = el('input', {type: 'number', min: 0, step: 'any', value: v.weight});
      input.dataset.dim = d.dim; input.dataset.value = v.value;
      input.oninput = () => { weights[d.dim][v.value] = parseFloat(input.value); schedule(); };
      const tdIn = el('td'); tdIn.append(input);
      tr.append(el('td', {}, v.value), tdIn, el('td', {className: 'share'}), el('td', {className: 'quota'}));
      t.append(tr);
    }
    box.append(h, t); dims.append(box);
  }
  for (const c of p.constraints || []) document.getElementById('constraints').append(el('li', {}, c));
  preview();
}
function schedule() { clearTimeout(timer); timer = setTimeout(preview, 250); }
async function preview() {
  const n = parseInt(document.getElementById('n').value, 10) || 100;
  const r = await fetch('/api/profiles/preview', {method: 'POST', headers: {'Content-Type': 'application/json'},
    body: JSON.stringify({base: base, weights: weights, n: n})});
  const pv = await r.json();
  const errs = document.getElementById('errors'); errs.replaceChildren();
  if (!r.ok) { errs.append(el('li', {}, pv.error)); return; }
  for (const e of pv.errors || []) errs.append(el('li', {}, e));
  document.getElementById('plan').textContent = pv.valid ? `${pv.plan_id}: ${pv.n} dialogues in ${pv.cells} cells` : 'none (see the errors)';
  for (const d of pv.dimensions) {
    document.getElementById('jsd-' + d.dim).textContent = 'JSD ' + d.jsd.toFixed(4);
    for (const v of d.values) {
      const tr = document.getElementById('row-' + d.dim + '-' + v.value);
      if (!tr) continue;
      tr.querySelector('.share').textContent = pct(v.share_a) + ' → ' + pct(v.share_b);
      tr.querySelector('.quota').textContent = pv.valid ? v.quota_b : '–';
      tr.classList.toggle('changed', Math.abs(v.share_a - v.share_b) >= 0.0005);
    }
  }
  const save = document.getElementById('save'); if (save) save.disabled = !pv.valid;
}
document.getElementById('n').oninput = schedule;
const save = document.getElementById('save');
if (save) save.onclick = async () => {
  const name = document.getElementById('save-name').value.trim();
  const r = await fetch('/api/profiles/' + encodeURIComponent(name), {method: 'POST', headers: {'Content-Type': 'application/json'},
    body: JSON.stringify({base: base, weights: weights, n: parseInt(document.getElementById('n').value, 10) || 100})});
  const res = await r.json();
  document.getElementById('status').textContent = r.ok ? 'saved: ' + res.saved : '';
  if (!r.ok) document.getElementById('errors').append(el('li', {}, res.error));
};
load();
