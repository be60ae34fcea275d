// The pipeline canvas: a cytoscape graph laid out by dagre, forms that
// send revisioned batches, and an EventSource that reloads on every commit.
'use strict';
(function () {
  const name = document.body.dataset.pipeline;
  const api = '/api/pipelines/' + encodeURIComponent(name);
  const $ = (id) => document.getElementById(id);
  const el = (tag, props, ...kids) => {
    const e = document.createElement(tag);
    Object.assign(e, props || {});
    for (const k of kids) e.append(k);
    return e;
  };
  // yaml is the YAML panel: base is the revision its text was read at;
  // dirty says the person has edited it since (a new revision then does
  // not overwrite their text: committing it is a conflict they resolve).
  const state = { revision: 0, spec: null, ops: {}, selected: null, findings: [], lastResult: null,
    yaml: { base: 0, text: '', dirty: false } };
  window.df = state; // for people debugging in devtools and for the UI tests

  const cy = cytoscape({
    container: $('cy'),
    style: [
      { selector: 'node', style: { label: 'data(label)', 'text-wrap': 'wrap', 'text-valign': 'center', 'font-size': 11,
        shape: 'round-rectangle', width: 120, height: 44, 'background-color': '#dde7f3', 'border-width': 1, 'border-color': '#4e79a7' } },
      { selector: 'node.err', style: { 'border-color': '#e15759', 'border-width': 3 } },
      { selector: 'node.warn', style: { 'border-color': '#f28e2b', 'border-width': 2 } },
      { selector: 'node:selected', style: { 'background-color': '#ffe9a8' } },
      { selector: 'edge', style: { 'curve-style': 'bezier', 'target-arrow-shape': 'triangle', width: 1.5, label: 'data(label)',
        'font-size': 9, 'text-rotation': 'autorotate', color: '#555' } },
    ],
  });
  state.cy = cy;
  cy.on('tap', 'node', (e) => { state.selected = e.target.id(); showNode(); });

  async function post(url, body) {
    const r = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    return r.json();
  }

  // apply sends one batch on the revision shown and reports the result.
  async function apply(mutations, message) {
    const res = await post(api + '/apply', { base_revision: state.revision, mutations, message });
    state.lastResult = res;
    if (res.error) { showFindings([{ severity: 'error', code: 'REQUEST', message: res.error }]); return res; }
    if (res.conflict) showFindings([{ severity: 'error', code: 'CONFLICT', message: res.conflict.message }]);
    else if (!res.committed) showFindings(res.findings, 'Rejected, nothing committed:');
    await load();
    return res;
  }

  async function load() {
    const r = await fetch(api);
    if (!r.ok) { $('sync').textContent = 'no such pipeline yet: create it from the index page'; return; }
    const v = await r.json();
    const changed = v.revision !== state.revision || !state.spec;
    state.revision = v.revision; state.spec = v.spec; state.findings = v.findings;
    $('rev').textContent = 'r' + v.revision;
    showYAML(v);
    if (!state.lastResult || state.lastResult.committed) showFindings(v.findings);
    if (changed) draw();
    loadHistory();
    if (state.selected) showNode();
  }

  // showYAML fills the YAML panel with the pipeline unless the person is
  // editing it, in which case it says what was committed meanwhile.
  function showYAML(v) {
    const y = state.yaml, ta = $('yaml-edit'), st = $('yaml-state');
    if (!y.dirty) {
      y.base = v.revision; y.text = v.yaml; ta.value = v.yaml;
      st.className = 'muted'; st.textContent = 'r' + v.revision;
      return;
    }
    st.className = 'dirty';
    st.textContent = v.revision === y.base ? 'edited, not committed (on r' + y.base + ')'
      : 'edited on r' + y.base + '; r' + v.revision + ' has been committed since: committing will be refused as a conflict (discard to read r' + v.revision + ')';
  }

  $('yaml-edit').addEventListener('input', () => {
    state.yaml.dirty = $('yaml-edit').value !== state.yaml.text;
    showYAML({ revision: state.revision, yaml: state.yaml.text });
  });
  $('yaml-reset').onclick = () => { state.yaml.dirty = false; load(); };
  $('yaml-commit').onclick = async () => {
    const res = await post(api + '/yaml', { base_revision: state.yaml.base, yaml: $('yaml-edit').value, message: 'edit YAML' });
    state.lastResult = res;
    if (res.error) showFindings([{ severity: 'error', code: 'YAML', message: res.error }], 'YAML not committed:');
    else if (res.conflict) showFindings([{ severity: 'error', code: 'CONFLICT', message: res.conflict.message }], 'YAML not committed, your text is kept:');
    else if (!res.committed) showFindings(res.findings, 'YAML not committed, your text is kept:');
    else state.yaml.dirty = false;
    await load();
  };

  function draw() {
    const nodes = state.spec.nodes || [];
    const bad = {};
    for (const f of state.findings) if (f.node) bad[f.node] = bad[f.node] === 'err' || f.severity === 'error' ? 'err' : 'warn';
    const els = [];
    for (const n of nodes) {
      els.push({ group: 'nodes', data: { id: n.id, label: n.id + '\n' + n.op }, classes: bad[n.id] || '' });
    }
    for (const n of nodes) {
      for (const [port, ref] of Object.entries(n.inputs || {})) {
        const src = ref.split('.')[0];
        if (nodes.some((m) => m.id === src)) els.push({ group: 'edges', data: { id: n.id + ':' + port, source: src, target: n.id, label: port } });
      }
    }
    cy.elements().remove();
    cy.add(els);
    cy.layout({ name: 'dagre', rankDir: 'LR', nodeSep: 30, rankSep: 70 }).run();
    cy.fit(undefined, 30);
  }

  function showFindings(fs, title) {
    const ul = $('findings');
    ul.replaceChildren();
    if (title) ul.append(el('li', { className: 'error', textContent: title }));
    if (!fs || fs.length === 0) { ul.append(el('li', { className: 'muted', textContent: 'valid' })); return; }
    for (const f of fs) {
      const where = ['node', 'port', 'param'].filter((k) => f[k]).map((k) => k + '=' + f[k]).join(' ');
      ul.append(el('li', { className: f.severity },
        el('b', { textContent: f.code }), ' ' + where + ': ' + f.message,
        f.suggestion ? el('div', { className: 'sugg', textContent: '→ ' + f.suggestion }) : ''));
    }
  }

  async function loadHistory() {
    const h = await (await fetch(api + '/history')).json();
    const ol = $('history');
    ol.replaceChildren();
    for (const e of h.slice().reverse()) {
      const btn = el('button', { textContent: 'revert to', className: 'revert' });
      btn.onclick = async () => {
        const res = await post(api + '/revert', { to: e.revision, base_revision: state.revision });
        state.lastResult = res;
        if (!res.committed) showFindings(res.findings, 'Revert rejected:');
        await load();
      };
      ol.append(el('li', { value: e.revision }, 'r' + e.revision + ' ' + (e.author || '') + ': ' + (e.message || (e.nodes || []).join(', ')) + ' ', btn));
    }
  }

  // paramInput makes an input for one param schema.
  function paramInput(pname, schema, value) {
    let input;
    if (schema.enum) {
      input = el('select');
      input.append(el('option', { value: '', textContent: '(default)' }));
      for (const v of schema.enum) input.append(el('option', { value: v, textContent: v }));
      input.value = value ?? '';
    } else if (schema.type === 'boolean') {
      input = el('input', { type: 'checkbox', checked: value === true });
    } else if (schema.type === 'number' || schema.type === 'integer') {
      input = el('input', { type: 'number', step: 'any', value: value ?? '' });
    } else if (schema.type === 'array') {
      input = el('input', { value: (value || []).join(', '), placeholder: 'comma-separated' });
    } else {
      input = el('input', { value: value ?? '' });
    }
    input.name = pname;
    input.dataset.type = schema.type;
    return el('label', { className: 'param', title: schema.description || '' }, el('span', { textContent: pname }), input);
  }

  // readParam turns an input back into a JSON value (undefined: unset).
  function readParam(input) {
    const t = input.dataset.type;
    if (t === 'boolean') return input.checked;
    if (input.value === '') return undefined;
    if (t === 'number' || t === 'integer') return Number(input.value);
    if (t === 'array') return input.value.split(',').map((s) => s.trim()).filter((s) => s);
    return input.value;
  }

  function producers(type, self) {
    const out = [];
    for (const n of state.spec.nodes || []) {
      const op = state.ops[n.op];
      if (!op || n.id === self) continue;
      for (const p of (op.outputs || [])) if (p.type === type) out.push((op.outputs || []).length > 1 ? n.id + '.' + p.name : n.id);
    }
    return out;
  }

  function inputSelect(port, self, value) {
    const sel = el('select', { name: port.name });
    sel.dataset.port = '1';
    sel.append(el('option', { value: '', textContent: '(not connected)' }));
    for (const p of producers(port.type, self)) sel.append(el('option', { value: p, textContent: p }));
    if (value && ![...sel.options].some((o) => o.value === value)) sel.append(el('option', { value, textContent: value }));
    sel.value = value || '';
    return el('label', { className: 'param' }, el('span', { textContent: port.name + ' (' + port.type + ')' }), sel);
  }

  function showNode() {
    const panel = $('node-panel');
    const n = (state.spec.nodes || []).find((m) => m.id === state.selected);
    panel.replaceChildren(el('h2', { textContent: 'Node' }));
    if (!n) { panel.append(el('p', { className: 'muted', textContent: 'click a node' })); return; }
    const op = state.ops[n.op];
    panel.append(el('p', {}, el('b', { textContent: n.id }), ' · ' + n.op + (op ? ': ' + op.doc : '')));
    if (!op) return;
    const form = el('form', { id: 'node-form', onsubmit: () => false });
    for (const [pname, schema] of Object.entries(op.params.properties || {})) form.append(paramInput(pname, schema, (n.params || {})[pname]));
    for (const port of (op.inputs || [])) form.append(inputSelect(port, n.id, (n.inputs || {})[port.name]));
    const save = el('button', { id: 'node-save', textContent: 'save' });
    const del = el('button', { id: 'node-remove', textContent: 'remove node' });
    save.onclick = async () => {
      const muts = [];
      for (const input of form.querySelectorAll('input, select')) {
        if (input.dataset.port) {
          const cur = (n.inputs || {})[input.name] || '';
          if (input.value === cur) continue;
          muts.push(input.value ? { op: 'connect', node: n.id, port: input.name, from: input.value, replace: true } : { op: 'disconnect', node: n.id, port: input.name });
          continue;
        }
        const v = readParam(input);
        const cur = (n.params || {})[input.name];
        if (JSON.stringify(v) === JSON.stringify(cur)) continue;
        muts.push({ op: 'set_param', node: n.id, param: input.name, value: v === undefined ? null : v });
      }
      if (muts.length) await apply(muts, 'edit ' + n.id);
    };
    del.onclick = () => apply([{ op: 'remove_node', node: n.id }], 'remove ' + n.id);
    form.append(save, ' ', del);
    panel.append(form);
  }

  function showAddForm() {
    const op = state.ops[$('add-op').value];
    const f = $('add-form');
    f.replaceChildren();
    if (!op || !state.spec) return;
    for (const [pname, schema] of Object.entries(op.params.properties || {})) f.append(paramInput(pname, schema, undefined));
    for (const port of (op.inputs || [])) f.append(inputSelect(port, '', ''));
  }

  $('add-op').onchange = showAddForm;
  $('add').onclick = async () => {
    const op = $('add-op').value;
    const id = $('add-id').value.trim() || op;
    const params = {}, inputs = {};
    for (const input of $('add-form').querySelectorAll('input, select')) {
      if (input.dataset.port) {
        if (input.value) inputs[input.name] = input.value;
        continue;
      }
      const v = readParam(input);
      if (v !== undefined && !(input.dataset.type === 'boolean' && v === false)) params[input.name] = v;
    }
    const res = await apply([{ op: 'add_node', node: id, operator: op, params, inputs }], 'add ' + id);
    if (res.committed) { state.selected = id; showNode(); }
  };

  async function run(dry) {
    const res = await post(api + '/run', { dry_run: dry, limit: Number($('run-limit').value) || 0 });
    if (res.error) { showFindings([{ severity: 'error', code: 'RUN', message: res.error }]); return; }
    if (dry || !res.id) { showFindings(res.findings, 'Dry run: order ' + (res.order || []).join(' → ')); return; }
    $('run-link').replaceChildren(el('a', { href: '/runs/' + res.id, textContent: 'run ' + res.id }));
  }
  $('run').onclick = () => run(false);
  $('run-dry').onclick = () => run(true);

  (async () => {
    const ops = await (await fetch('/api/operators')).json();
    for (const op of ops) {
      state.ops[op.name] = op;
      $('add-op').append(el('option', { value: op.name, textContent: op.name + ' (' + op.category + ')' }));
    }
    await load();
    showAddForm();
    const es = new EventSource('/events');
    es.addEventListener('pipeline', (e) => {
      const c = JSON.parse(e.data);
      if (c.pipeline !== name || c.revision <= state.revision) return;
      $('sync').textContent = 'r' + c.revision + ' by ' + (c.author || 'someone');
      state.lastResult = null;
      load();
    });
    // The stream only carries commits made after it connected: on every
    // (re)connect read the pipeline again, so a commit made while the page
    // loaded or the connection was down is not missed. The page is ready
    // once that read is done.
    es.addEventListener('open', async () => {
      await load();
      state.ready = true;
    });
  })();
})();
