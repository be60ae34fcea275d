// main.js: the Ask chat view. A renderer only: the extension host owns the
// conversation and tells this document what to show. Message text is always
// set with textContent, so div.content's textContent is exactly the answer.
(function () {
  'use strict';
  const vscode = acquireVsCodeApi();
  const body = document.body;
  const input = document.getElementById('ask-input');
  const sendBtn = document.getElementById('ask-send');
  const newBtn = document.getElementById('ask-new');
  const list = document.getElementById('messages');
  const empty = document.getElementById('empty');
  const form = document.getElementById('composer');
  let busy = false;

  function setBusy(value) {
    busy = !!value;
    body.dataset.busy = busy ? 'true' : 'false';
    sendBtn.disabled = busy;
  }

  function updateEmpty() {
    empty.hidden = list.childElementCount > 0;
  }

  function nearBottom() {
    return list.scrollHeight - list.scrollTop - list.clientHeight < 40;
  }

  function scrollDown(stick) {
    if (stick) list.scrollTop = list.scrollHeight;
  }

  function contentOf(id) {
    const el = document.getElementById(id);
    return el ? el.querySelector('.content') : null;
  }

  function add(m) {
    const stick = nearBottom();
    const el = document.createElement('div');
    el.className = 'message';
    el.id = m.id;
    el.dataset.testid = 'message';
    el.dataset.role = m.role;
    el.dataset.turn = String(m.turn);
    el.dataset.state = m.state;
    const who = document.createElement('div');
    who.className = 'role';
    who.textContent = m.role === 'user' ? 'You' : 'Ask';
    const content = document.createElement('div');
    content.className = 'content';
    content.dataset.testid = 'message-content';
    content.textContent = m.text;
    el.append(who, content);
    list.append(el);
    updateEmpty();
    scrollDown(stick);
  }

  function append(id, text) {
    const content = contentOf(id);
    if (!content) return;
    const stick = nearBottom();
    content.textContent += text;
    scrollDown(stick);
  }

  function finish(id, state, text) {
    const el = document.getElementById(id);
    if (!el) return;
    const stick = nearBottom();
    el.querySelector('.content').textContent = text;
    el.dataset.state = state;
    scrollDown(stick);
  }

  function clear() {
    list.replaceChildren();
    updateEmpty();
  }

  function submit() {
    const text = input.value;
    if (busy || text.trim() === '') return;
    setBusy(true); // the host confirms or undoes this
    input.value = '';
    vscode.postMessage({ type: 'ask', text });
  }

  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      submit();
    }
  });
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    submit();
  });
  newBtn.addEventListener('click', () => {
    vscode.postMessage({ type: 'new' });
    input.focus();
  });
  // When the view gains focus (reveal, click on the view), type into the input.
  window.addEventListener('focus', () => {
    if (document.activeElement === body || document.activeElement === null) input.focus();
  });

  window.addEventListener('message', (event) => {
    const msg = event.data;
    if (!msg || typeof msg !== 'object') return;
    switch (msg.type) {
      case 'restore':
        clear();
        for (const m of msg.messages) add(m);
        setBusy(msg.busy);
        break;
      case 'add':
        add(msg.message);
        break;
      case 'append':
        append(msg.id, msg.text);
        break;
      case 'finish':
        finish(msg.id, msg.state, msg.text);
        if (typeof msg.busy === 'boolean') setBusy(msg.busy);
        break;
      case 'busy':
        setBusy(msg.busy);
        break;
      case 'clear':
        clear();
        break;
      case 'focus':
        input.focus();
        break;
    }
  });

  setBusy(false);
  updateEmpty();
  body.dataset.ready = 'true';
  vscode.postMessage({ type: 'ready' });
})();
