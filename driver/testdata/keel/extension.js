'use strict';
// Keel: a chat view whose model endpoint is nowhere in the settings. The
// port is in <globalStorage>/endpoint.json ({"port": N}), the path in
// ~/.keel/config.yaml ("path: /..."), both read at every request, as
// assistants that keep their providers in global files do: every window
// of one editor reads the same files.

const vscode = require('vscode');
const fs = require('fs');
const os = require('os');
const path = require('path');

function endpoint(context) {
  const file = path.join(context.globalStorageUri.fsPath, 'endpoint.json');
  const port = JSON.parse(fs.readFileSync(file, 'utf8')).port;
  const conf = fs.readFileSync(path.join(os.homedir(), '.keel', 'config.yaml'), 'utf8');
  const m = /^path:\s*(\S+)\s*$/m.exec(conf);
  if (!Number.isInteger(port) || !m) throw new Error('keel: no endpoint configured');
  return 'http://127.0.0.1:' + port + m[1];
}

async function ask(context, history, post) {
  const res = await fetch(endpoint(context) + '/chat/completions', {
    method: 'POST',
    headers: {'Content-Type': 'application/json'},
    body: JSON.stringify({model: 'keel-model', stream: true, messages: [{role: 'system', content: 'You are Keel.'}, ...history]}),
  });
  if (!res.ok) throw new Error('HTTP ' + res.status);
  const dec = new TextDecoder();
  let buf = '';
  let text = '';
  for await (const chunk of res.body) {
    buf += dec.decode(chunk, {stream: true});
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i).trim();
      buf = buf.slice(i + 1);
      if (!line.startsWith('data:')) continue;
      const data = line.slice(5).trim();
      if (data === '[DONE]') return text;
      const d = JSON.parse(data).choices[0].delta.content || '';
      text += d;
      post({type: 'delta', text});
    }
  }
  return text;
}

class View {
  constructor(context) {
    this.context = context;
    this.history = [];
  }
  resolveWebviewView(view) {
    this.view = view;
    view.webview.options = {enableScripts: true};
    const nonce = String(Math.random()).slice(2);
    view.webview.html = `<!doctype html><html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'nonce-${nonce}'; style-src 'unsafe-inline';">
</head><body>
<div id="log"></div>
<textarea id="q" rows="3" aria-label="Ask Keel"></textarea>
<button id="new">New</button>
<script nonce="${nonce}">
const vscode = acquireVsCodeApi();
const log = document.getElementById('log'), q = document.getElementById('q');
let last = null;
function add(role, text) {
  const d = document.createElement('div');
  d.className = 'msg'; d.dataset.role = role; d.textContent = text;
  if (role === 'assistant') d.dataset.state = 'streaming';
  log.appendChild(d);
  return d;
}
q.addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && !e.shiftKey) {
    e.preventDefault();
    const text = q.value;
    if (!text.trim()) return;
    q.value = '';
    add('user', text);
    last = add('assistant', '');
    vscode.postMessage({type: 'ask', text});
  }
});
document.getElementById('new').addEventListener('click', () => { log.textContent = ''; vscode.postMessage({type: 'new'}); });
window.addEventListener('message', (e) => {
  const m = e.data;
  if (m.type === 'clear') { log.textContent = ''; return; }
  if (!last) return;
  if (m.type === 'delta') last.textContent = m.text;
  if (m.type === 'done') { last.textContent = m.text; last.dataset.state = 'done'; }
  if (m.type === 'error') { last.textContent = m.text; last.dataset.state = 'error'; }
});
document.body.dataset.ready = 'true';
</script></body></html>`;
    view.webview.onDidReceiveMessage(async (m) => {
      if (m.type === 'new') { this.history = []; return; }
      if (m.type !== 'ask') return;
      const post = (x) => view.webview.postMessage(x);
      this.history.push({role: 'user', content: m.text});
      try {
        const text = await ask(this.context, this.history, post);
        this.history.push({role: 'assistant', content: text});
        post({type: 'done', text});
      } catch (err) {
        this.history.pop();
        post({type: 'error', text: String(err && err.message || err)});
      }
    });
  }
  clear() {
    this.history = [];
    if (this.view) this.view.webview.postMessage({type: 'clear'});
  }
}

function activate(context) {
  const view = new View(context);
  context.subscriptions.push(
    vscode.window.registerWebviewViewProvider('keel.chat', view, {webviewOptions: {retainContextWhenHidden: true}}),
    vscode.commands.registerCommand('keel.newChat', () => view.clear()),
  );
  const item = vscode.window.createStatusBarItem('keel.status', vscode.StatusBarAlignment.Right);
  item.text = 'Keel';
  item.show();
  context.subscriptions.push(item);
}

module.exports = {activate, deactivate() {}};
