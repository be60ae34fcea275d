// Quill: a test chat plugin for dialogfarm's adapter tests. The view (a
// webview) owns the conversation and the chosen provider; this host side
// only sends requests for it and reads the editor for "Explain This".
'use strict';
const vscode = require('vscode');

const SYSTEM = 'You are Quill, a concise coding assistant.';
const TITLE_SYSTEM = 'Write a title of at most five words for this conversation. Reply with the title only.';

class View {
  constructor(uri) {
    this.uri = uri;
    this.view = undefined;
    this.ready = false; // the view's script listens
    this.pending = [];
  }

  resolveWebviewView(view) {
    this.view = view;
    this.ready = false;
    const media = vscode.Uri.joinPath(this.uri, 'media');
    view.webview.options = { enableScripts: true, localResourceRoots: [media] };
    const js = view.webview.asWebviewUri(vscode.Uri.joinPath(media, 'main.js'));
    const css = view.webview.asWebviewUri(vscode.Uri.joinPath(media, 'style.css'));
    const csp = view.webview.cspSource;
    view.webview.html = `<!DOCTYPE html><html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${csp}; script-src ${csp};">
<link rel="stylesheet" href="${css}"></head><body>
<header><span id="title">New conversation</span>
<select id="provider" aria-label="Provider"></select>
<button id="fresh" type="button" title="New conversation">New</button></header>
<div id="log" role="log"></div>
<div id="waiting" hidden>Pick a provider to continue.</div>
<div id="composer" contenteditable="true" role="textbox" aria-label="Message Quill" data-placeholder="Message Quill (Ctrl+Enter to send)"></div>
<button id="go" class="go" type="button">Send</button>
<script src="${js}"></script></body></html>`;
    view.webview.onDidReceiveMessage((m) => this.onMessage(m));
  }

  post(m) {
    if (this.view) this.view.webview.postMessage(m);
  }

  async onMessage(m) {
    switch (m.type) {
      case 'ready': {
        this.ready = true;
        const providers = vscode.workspace.getConfiguration('quill').get('providers', []);
        this.post({ type: 'providers', providers: providers.map((p) => p.name) });
        for (const p of this.pending.splice(0)) this.post(p);
        break;
      }
      case 'chat':
        await this.chat(m);
        break;
    }
  }

  provider(name) {
    const providers = vscode.workspace.getConfiguration('quill').get('providers', []);
    return providers.find((p) => p.name === name);
  }

  async chat(m) {
    const p = this.provider(m.provider);
    if (!p) {
      this.post({ type: 'failed', id: m.id, error: 'unknown provider ' + m.provider });
      return;
    }
    const headers = { 'Content-Type': 'application/json' };
    if (p.apiKey) headers.Authorization = 'Bearer ' + p.apiKey;
    const url = p.baseUrl.replace(/\/+$/, '') + '/chat/completions';
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers,
        body: JSON.stringify({ model: p.model, stream: true, messages: [{ role: 'system', content: [{ type: 'text', text: SYSTEM }] }, ...m.messages] }),
      });
      if (!res.ok) throw new Error('HTTP ' + res.status + ': ' + (await res.text()).slice(0, 200));
      let text = '';
      let buf = '';
      const decoder = new TextDecoder();
      for await (const chunk of res.body) {
        buf += decoder.decode(chunk, { stream: true });
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const frame = buf.slice(0, i);
          buf = buf.slice(i + 2);
          for (const line of frame.split('\n')) {
            if (!line.startsWith('data:')) continue;
            const data = line.slice(5).trim();
            if (data === '[DONE]') continue;
            const d = JSON.parse(data);
            const delta = d.choices && d.choices[0] && d.choices[0].delta && d.choices[0].delta.content;
            if (delta) {
              text += delta;
              this.post({ type: 'delta', id: m.id, text: delta });
            }
          }
        }
      }
      this.post({ type: 'answer', id: m.id, text });
      // A short title for the header, in a separate non-streaming request.
      const t = await fetch(url, {
        method: 'POST',
        headers,
        body: JSON.stringify({ model: p.model, stream: false, max_tokens: 16, messages: [{ role: 'system', content: TITLE_SYSTEM }, { role: 'user', content: m.messages[m.messages.length - 1].content }] }),
      });
      if (t.ok) {
        const j = await t.json();
        this.post({ type: 'title', text: j.choices[0].message.content });
      }
    } catch (err) {
      this.post({ type: 'failed', id: m.id, error: String((err && err.message) || err) });
    }
  }

  async reveal() {
    await vscode.commands.executeCommand('quill.chat.focus');
  }

  async send(message) {
    await this.reveal();
    if (this.view && this.ready) this.post(message);
    else this.pending.push(message);
  }
}

function activate(context) {
  const view = new View(context.extensionUri);
  context.subscriptions.push(
    vscode.window.registerWebviewViewProvider('quill.chat', view, { webviewOptions: { retainContextWhenHidden: true } }),
    vscode.commands.registerCommand('quill.open', () => view.send({ type: 'focus' })),
    // Resetting does not reveal the view: a view never shown has nothing to reset.
    vscode.commands.registerCommand('quill.reset', () => {
      if (view.view && view.ready) view.post({ type: 'reset' });
    }),
    vscode.commands.registerCommand('quill.explain', () => {
      const ed = vscode.window.activeTextEditor;
      if (!ed) return;
      const code = ed.selection.isEmpty ? ed.document.lineAt(ed.selection.active.line).text : ed.document.getText(ed.selection);
      const file = vscode.workspace.asRelativePath(ed.document.uri, false);
      view.send({ type: 'ask', shown: 'Explain this', text: 'Explain this code from ' + file + ':\n\n' + code });
    }),
  );
}

function deactivate() {}

module.exports = { activate, deactivate };
