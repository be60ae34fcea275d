// The index page: create a pipeline.
'use strict';
(function () {
  document.getElementById('new').onsubmit = () => false;
  document.getElementById('new-create').onclick = async () => {
    const name = document.getElementById('new-name').value.trim();
    const r = await fetch('/api/pipelines/' + encodeURIComponent(name) + '/apply', { method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ base_revision: 0, message: 'new pipeline', mutations: [{ op: 'replace', spec: { apiVersion: 'dialogfarm/v1', kind: 'Pipeline', nodes: [] } }] }) });
    const res = await r.json();
    if (res.committed) location.href = '/p/' + name; else alert(res.error || JSON.stringify(res));
  };
})();
