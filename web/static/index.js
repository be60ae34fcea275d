// The index page: new pipelines (empty, from the default pipeline, or
// imported from a YAML file), each committed as revision 1; findings of
// a refused one are listed under the form.
'use strict';
(function () {
  const $ = (id) => document.getElementById(id);
  const el = (tag, props, ...kids) => {
    const e = document.createElement(tag);
    Object.assign(e, props || {});
    for (const k of kids) e.append(k);
    return e;
  };
  $('new').onsubmit = () => false;

  function show(title, findings) {
    const ul = $('new-result');
    ul.replaceChildren(el('li', { className: 'error', textContent: title }));
    for (const f of findings || []) {
      const where = ['node', 'port', 'param'].filter((k) => f[k]).map((k) => k + '=' + f[k]).join(' ');
      ul.append(el('li', { className: f.severity }, el('b', { textContent: f.code }), ' ' + where + ': ' + f.message,
        f.suggestion ? el('div', { className: 'sugg', textContent: '→ ' + f.suggestion }) : ''));
    }
  }

  // create posts a new pipeline and opens it once committed.
  async function create(path, body) {
    const name = $('new-name').value.trim();
    if (!/^[a-z0-9][a-z0-9_-]*$/.test(name)) { show('give a lower-case name (letters, digits, _ and -)'); return; }
    const r = await fetch('/api/pipelines/' + encodeURIComponent(name) + path, { method: 'POST',
      headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    const res = await r.json();
    if (res.committed) { location.href = '/p/' + encodeURIComponent(name); return; }
    if (res.error) show(res.error);
    else if (res.conflict) show('a pipeline called ' + name + ' exists already (r' + res.conflict.current_revision + '): choose another name');
    else show('not created: the pipeline has errors', (res.findings || []).filter((f) => f.severity === 'error'));
  }

  $('new-create').onclick = () => create('/apply', { base_revision: 0, message: 'new pipeline',
    mutations: [{ op: 'replace', spec: { apiVersion: 'dialogfarm/v1', kind: 'Pipeline', nodes: [] } }] });
  $('new-default').onclick = () => create('/create', { from: 'default',
    repos: $('new-repos').value.split(',').map((s) => s.trim()).filter((s) => s),
    n: Number($('new-n').value), profile: $('new-profile').value.trim() });
  $('import-file').onchange = async () => {
    const f = $('import-file').files[0];
    if (!f) return;
    $('import-yaml').value = await f.text();
    if (!$('new-name').value) $('new-name').value = f.name.replace(/\.ya?ml$/i, '').toLowerCase().replace(/[^a-z0-9_-]+/g, '-').replace(/^[^a-z0-9]+/, '');
  };
  $('import').onclick = () => {
    const f = $('import-file').files[0];
    create('/create', { yaml: $('import-yaml').value, file: f ? f.name : '' });
  };
})();
