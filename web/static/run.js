// The run page: the dashboard panel, read again on every change of this
// run; the cancel button goes once the run is no longer running.
'use strict';
(function () {
  const id = document.body.dataset.run;
  const cancel = document.getElementById('cancel');
  if (cancel) cancel.onclick = () => fetch('/api/runs/' + encodeURIComponent(id) + '/cancel', { method: 'POST' });
  async function refresh() {
    const r = await fetch('/runs/' + encodeURIComponent(id) + '/panel');
    if (!r.ok) return;
    document.getElementById('panel').innerHTML = await r.text();
    const d = document.getElementById('dashboard');
    const c = document.getElementById('cancel');
    if (c && d && d.dataset.status !== 'running') c.remove();
  }
  const es = new EventSource('/events');
  es.addEventListener('run', (e) => { if (JSON.parse(e.data).id === id) refresh(); });
  // The stream carries only changes made after it connected: read the panel
  // again on every (re)connect so none made meanwhile is missed.
  es.addEventListener('open', refresh);
})();
