// Heron: a test chat plugin for dialogfarm. Its providers live only in
// heron-providers.json in its global storage folder (shared by every window
// of one editor); the view (a webview of custom elements) shows the
// conversation; this host side keeps the history, reads the editor's
// selection and sends the requests.
'use strict';
const vscode = require('vscode');
const fs = require('node:fs/promises');
const path = require('node:path');
const { FILE_NAME, ProviderError, parseProviders, chatURL, chatBody, titleBody } = require('./providers');
const { streamChat, complete } = require('./client');

class ChatView {
  constructor(context) {
    this.context = context;
    this.view = undefined;
    this.history = [];
    this.busy = undefined; // {id, abort}
    this.seq = 0;
  }

  providersFile() {
    return path.join(this.context.globalStorageUri.fsPath, FILE_NAME);
  }

  async providers() {
    let text;
    try {
      text = await fs.readFile(this.providersFile(), 'utf8');
    } catch (err) {
      if (err.code === 'ENOENT') throw new ProviderError('no providers: write ' + this.providersFile());
      throw err;
    }
    const list = parseProviders(text);
    if (list.length === 0) throw new ProviderError('no providers in ' + this.providersFile());
    return list;
  }

  resolveWebviewView(view) {
    this.view = view;
    const media = vscode.Uri.joinPath(this.context.extensionUri, 'media');
    view.webview.options = { enableScripts: true, localResourceRoots: [media] };
    const src = (f) => view.webview.asWebviewUri(vscode.Uri.joinPath(media, f));
    const csp = view.webview.cspSource;
    // One root element that the view's script fills, as a React app's.
    view.webview.html = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${csp}; script-src ${csp};">
<link rel="stylesheet" href="${src('style.css')}"></head><body>
<div id="root"></div>
<script src="${src('markdown.js')}"></script>
<script src="${src('elements.js')}"></script>
<script src="${src('view.js')}"></script></body></html>`;
    view.webview.onDidReceiveMessage((m) => this.onMessage(m).catch((err) => this.post({ type: 'error', id: m.id, message: String(err && err.message || err) })));
    view.onDidDispose(() => {
      this.view = undefined;
    });
  }

  post(m) {
    if (this.view) this.view.webview.postMessage(m);
  }

  async onMessage(m) {
    switch (m.type) {
      case 'ready':
        await this.sendProviders();
        break;
      case 'send':
        await this.chat(m);
        break;
      case 'stop':
        if (this.busy) this.busy.abort.abort();
        break;
      case 'new':
        this.reset();
        break;
    }
  }

  async sendProviders() {
    try {
      const list = await this.providers();
      this.post({ type: 'providers', providers: list.map((p) => ({ id: p.id, label: p.label })) });
    } catch (err) {
      this.post({ type: 'providers', providers: [], error: String(err.message || err) });
    }
  }

  reset() {
    if (this.busy) this.busy.abort.abort();
    this.history = [];
    this.post({ type: 'reset' });
  }

  selection() {
    const ed = vscode.window.activeTextEditor;
    if (!ed || ed.selection.isEmpty) return '';
    return ed.document.getText(ed.selection);
  }

  async chat(m) {
    if (this.busy) return;
    const id = m.id;
    const list = await this.providers();
    const p = list.find((x) => x.id === m.provider) || list[0];
    const body = chatBody(p, this.history, m.text, this.selection());
    const abort = new AbortController();
    this.busy = { id, abort };
    this.post({ type: 'start', id });
    let answer = '';
    try {
      answer = await streamChat(chatURL(p), p.apiKey, body, (d) => this.post({ type: 'delta', id, text: d }), abort.signal);
    } catch (err) {
      this.busy = undefined;
      if (abort.signal.aborted) {
        this.post({ type: 'end', id, stopped: true });
        return;
      }
      this.post({ type: 'error', id, message: String(err.message || err) });
      return;
    }
    this.history.push(body.messages[body.messages.length - 1], { role: 'assistant', content: answer });
    this.busy = undefined;
    this.post({ type: 'end', id });
    // The conversation's title, asked for once the answer is shown.
    try {
      const title = await complete(chatURL(p), p.apiKey, titleBody(p, m.text, answer));
      this.post({ type: 'title', text: title.trim().slice(0, 80) });
    } catch {
      // a title is a nicety: the header keeps the old one
    }
  }
}

function activate(context) {
  const view = new ChatView(context);
  context.subscriptions.push(
    vscode.window.registerWebviewViewProvider('heron.chat', view, { webviewOptions: { retainContextWhenHidden: true } }),
    vscode.commands.registerCommand('heron.open', async () => {
      await vscode.commands.executeCommand('heron.chat.focus');
      view.post({ type: 'focus' });
    }),
    vscode.commands.registerCommand('heron.newChat', () => view.reset()),
  );
}

function deactivate() {}

module.exports = { activate, deactivate };
