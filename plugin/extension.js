'use strict';
// extension.js: the Ask reference plugin. A webview view (askplugin.chat) in
// its own activity-bar container shows the conversation; the extension host
// owns the conversation state, builds each request from the editor context
// (prompt.js), POSTs it to {askplugin.baseUrl}/chat/completions and streams the
// SSE answer (sse.js) into the view chunk by chunk.

const vscode = require('vscode');
const crypto = require('crypto');
const prompt = require('./prompt');
const { streamChat } = require('./sse');

const VIEW_ID = 'askplugin.chat';

// Intent commands: each sends its slash command at once.
const INTENT_COMMANDS = {
  'askplugin.explainSelection': '/explain',
  'askplugin.fixSelection': '/fix',
  'askplugin.writeTests': '/tests',
  'askplugin.addDocs': '/doc',
};

/**
 * statusText is the status bar item's text. While a request runs it shows a
 * spinning icon, unless the user asked for reduced motion
 * (workbench.reduceMotion "on"): then a still icon, so that a window waiting
 * for the model repaints nothing.
 */
function statusText(busy) {
  if (!busy) return '$(comment-discussion) Ask';
  const still = vscode.workspace.getConfiguration('workbench').get('reduceMotion') === 'on';
  return still ? '$(watch) Ask' : '$(loading~spin) Ask';
}

/** APPEND_INTERVAL_MS is the longest a streamed piece waits to be shown (one frame). */
const APPEND_INTERVAL_MS = 16;

/** ChatViewProvider renders the conversation and runs its requests one at a time. */
class ChatViewProvider {
  constructor(extensionUri, log, status) {
    this.extensionUri = extensionUri;
    this.log = log;
    this.status = status;
    this.view = undefined;
    this.ready = false; // the current webview's script reported ready
    this.focusPending = false;
    this.lastEditor = undefined;
    this.queue = []; // {query, ctx} waiting for the view and for the previous request
    this.running = false;
    this.busy = false;
    this.controller = undefined; // AbortController of the request in flight
    this.generation = 0; // bumped by newChat; stale requests stop writing
    this.resetConversation();
  }

  resetConversation() {
    this.turn = 0;
    this.history = []; // {role, content} exactly as sent and received
    this.transcript = []; // what the view shows: {id, role, turn, state, text}
  }

  /** @param {vscode.WebviewView} view */
  resolveWebviewView(view) {
    this.view = view;
    this.ready = false;
    const media = vscode.Uri.joinPath(this.extensionUri, 'media');
    view.webview.options = { enableScripts: true, localResourceRoots: [media] };
    view.webview.html = this.html(view.webview, media);
    view.webview.onDidReceiveMessage((msg) => this.onMessage(view, msg));
    view.onDidDispose(() => {
      if (this.view === view) {
        this.view = undefined;
        this.ready = false;
      }
    });
  }

  html(webview, media) {
    const nonce = crypto.randomBytes(16).toString('base64').replace(/[^A-Za-z0-9]/g, '');
    const js = webview.asWebviewUri(vscode.Uri.joinPath(media, 'main.js'));
    const css = webview.asWebviewUri(vscode.Uri.joinPath(media, 'main.css'));
    const src = webview.cspSource;
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${src}; font-src ${src}; img-src ${src} data:; script-src 'nonce-${nonce}';">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${css}">
<title>Ask</title>
</head>
<body data-busy="false">
<header id="toolbar">
  <span class="title">Ask</span>
  <button id="ask-new" data-testid="ask-new" type="button" title="Start a new conversation">New chat</button>
</header>
<div id="messages" data-testid="messages" role="log" aria-live="polite"></div>
<div id="empty" class="hint">Ask about the code at your cursor or selection.<br>Slash commands: /explain /fix /tests /doc /optimize</div>
<form id="composer">
  <textarea id="ask-input" data-testid="ask-input" rows="3" placeholder="Ask about your code (Enter to send, Shift+Enter for a new line)"></textarea>
  <button id="ask-send" data-testid="ask-send" type="submit">Send</button>
</form>
<script nonce="${nonce}" src="${js}"></script>
</body>
</html>`;
  }

  onMessage(view, msg) {
    if (view !== this.view || !msg || typeof msg !== 'object') return;
    switch (msg.type) {
      case 'ready':
        this.ready = true;
        this.post({ type: 'restore', messages: this.transcript, busy: this.busy });
        if (this.focusPending) {
          this.focusPending = false;
          this.post({ type: 'focus' });
        }
        this.pump();
        break;
      case 'ask':
        if (typeof msg.text === 'string' && msg.text.trim() !== '') {
          this.ask(msg.text, this.captureContext());
        } else {
          this.post({ type: 'busy', busy: this.busy }); // undo the view's optimistic busy
        }
        break;
      case 'new':
        this.newChat();
        break;
    }
  }

  post(msg) {
    if (this.view && this.ready) this.view.webview.postMessage(msg);
  }

  /** reveal opens the view (creating it if needed) and focuses its input. */
  reveal() {
    this.focusPending = true;
    return vscode.commands.executeCommand(VIEW_ID + '.focus').then(
      () => {
        if (this.ready && this.focusPending) {
          this.focusPending = false;
          this.post({ type: 'focus' });
        }
      },
      (err) => this.log.error('reveal chat view: ' + (err && err.message)),
    );
  }

  trackEditor(editor) {
    if (editor && editor.document.uri.scheme !== 'output') this.lastEditor = editor;
  }

  editor() {
    const active = vscode.window.activeTextEditor;
    if (active && active.document.uri.scheme !== 'output') return active;
    const last = this.lastEditor;
    if (last && !last.document.isClosed && vscode.window.visibleTextEditors.includes(last)) return last;
    return undefined;
  }

  /** captureContext reads the editor state now (the question is about this moment). */
  captureContext() {
    const ed = this.editor();
    if (!ed) return null;
    const cfg = vscode.workspace.getConfiguration('askplugin');
    const rel = vscode.workspace.asRelativePath(ed.document.uri, false);
    return prompt.editorContext(ed.document, ed.selection, rel, cfg.get('contextLines', 15));
  }

  ask(query, ctx) {
    this.queue.push({ query, ctx });
    this.pump();
  }

  async pump() {
    if (this.running || !this.ready || this.queue.length === 0) return;
    this.running = true;
    const item = this.queue.shift();
    try {
      await this.run(item);
    } catch (err) {
      this.log.error('ask: ' + (err && err.stack || err));
    } finally {
      this.running = false;
      if (this.queue.length === 0) this.setBusy(false);
      this.pump();
    }
  }

  setBusy(busy) {
    const changed = busy !== this.busy;
    this.busy = busy;
    this.status.text = statusText(busy);
    if (changed) this.post({ type: 'busy', busy });
  }

  addMessage(role, turn, state, text) {
    const m = { id: 'msg-' + (this.transcript.length + 1), role, turn, state, text };
    this.transcript.push(m);
    this.post({ type: 'add', message: m });
    return m;
  }

  /**
   * finish settles an assistant message. When nothing else is queued the view
   * leaves busy in the same update, so data-state and data-busy change together.
   */
  finish(answer, state, text) {
    answer.state = state;
    answer.text = text;
    const busy = this.queue.length > 0;
    this.busy = busy;
    this.status.text = statusText(busy);
    this.post({ type: 'finish', id: answer.id, state, text, busy });
  }

  async run({ query, ctx }) {
    const gen = this.generation;
    const cfg = vscode.workspace.getConfiguration('askplugin');
    const turn = ++this.turn;
    const user = prompt.userContent(ctx, prompt.instructionFor(query).instruction);
    const body = prompt.requestBody({
      model: cfg.get('model', ''),
      temperature: cfg.get('temperature', 0.2),
      history: this.history,
      user,
    });
    this.setBusy(true);
    this.addMessage('user', turn, 'done', query.trim());
    const answer = this.addMessage('assistant', turn, 'streaming', '');
    const controller = new AbortController();
    this.controller = controller;
    const url = prompt.completionsUrl(cfg.get('baseUrl', ''));
    this.log.info(`turn ${turn}: POST ${url} (model ${body.model}, ${body.messages.length} messages)`);
    // The view gets the streamed text at most once per frame: the pieces
    // that arrive meanwhile (often a whole network read's worth) go out as
    // one append, so the view lays out and paints once for them.
    let pending = '';
    let flushTimer;
    const flush = () => {
      flushTimer = undefined;
      if (pending !== '' && gen === this.generation) this.post({ type: 'append', id: answer.id, text: pending });
      pending = '';
    };
    try {
      const text = await streamChat({
        url,
        apiKey: cfg.get('apiKey', ''),
        body,
        signal: controller.signal,
        onDelta: (d) => {
          if (gen !== this.generation) return;
          answer.text += d;
          pending += d;
          if (flushTimer === undefined) flushTimer = setTimeout(flush, APPEND_INTERVAL_MS);
        },
      });
      clearTimeout(flushTimer); // finish carries the whole text
      if (gen !== this.generation) return;
      this.history.push({ role: 'user', content: user }, { role: 'assistant', content: text });
      this.finish(answer, 'done', text);
      this.log.info(`turn ${turn}: done, ${text.length} characters`);
    } catch (err) {
      clearTimeout(flushTimer);
      if (gen !== this.generation) return; // the conversation was cleared meanwhile
      const reason = (err && err.message) || String(err);
      // A failed exchange is not part of the history the next request sends.
      this.finish(answer, 'error', 'Error: ' + reason);
      this.log.warn(`turn ${turn}: ${reason}`);
    } finally {
      if (this.controller === controller) this.controller = undefined;
    }
  }

  newChat() {
    this.generation++;
    this.queue = [];
    if (this.controller) this.controller.abort();
    this.controller = undefined;
    this.resetConversation();
    this.post({ type: 'clear' });
    this.setBusy(false);
  }
}

/** @param {vscode.ExtensionContext} context */
function activate(context) {
  const log = vscode.window.createOutputChannel('Ask', { log: true });
  const status = vscode.window.createStatusBarItem('askplugin.status', vscode.StatusBarAlignment.Right, 100);
  status.name = 'Ask';
  status.text = '$(comment-discussion) Ask';
  status.tooltip = 'Ask: Open Chat (Ctrl+Alt+A)';
  status.command = 'askplugin.openChat';

  const provider = new ChatViewProvider(context.extensionUri, log, status);
  provider.trackEditor(vscode.window.activeTextEditor);

  context.subscriptions.push(
    log,
    status,
    vscode.window.registerWebviewViewProvider(VIEW_ID, provider, {
      webviewOptions: { retainContextWhenHidden: true },
    }),
    vscode.window.onDidChangeActiveTextEditor((e) => provider.trackEditor(e)),
    vscode.commands.registerCommand('askplugin.openChat', () => provider.reveal()),
    vscode.commands.registerCommand('askplugin.newChat', () => provider.newChat()),
    ...Object.entries(INTENT_COMMANDS).map(([id, slash]) =>
      vscode.commands.registerCommand(id, () => {
        const ctx = provider.captureContext(); // before focus moves to the view
        provider.reveal();
        provider.ask(slash, ctx);
      }),
    ),
  );
  status.show();
  log.info('Ask activated');
}

function deactivate() {}

module.exports = { activate, deactivate };
