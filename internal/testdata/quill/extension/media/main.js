// The Quill view: the conversation, the provider picker and the composer.
// Nothing is sent until a provider is picked: a query waits for it.
(function () {
  'use strict';
  const vscode = acquireVsCodeApi();
  const log = document.getElementById('log');
  const composer = document.getElementById('composer');
  const go = document.getElementById('go');
  const picker = document.getElementById('provider');
  const waiting = document.getElementById('waiting');
  const title = document.getElementById('title');
  let history = [];
  let queued = null;
  let seq = 0;

  function turn(author, text) {
    const el = document.createElement('div');
    el.className = 'turn';
    el.dataset.author = author;
    const body = document.createElement('div');
    body.className = 'body';
    body.textContent = text;
    el.append(body);
    log.append(el);
    return el;
  }

  function ask(shown, text) {
    if (go.disabled) return;
    go.disabled = true;
    turn('me', shown);
    const messages = history.concat([{ role: 'user', content: [{ type: 'text', text }] }]);
    queued = { id: 'q' + ++seq, messages, text };
    const bot = turn('bot', '');
    bot.id = queued.id;
    flush();
  }

  function flush() {
    if (!queued) return;
    if (!picker.value) {
      waiting.hidden = false;
      return;
    }
    waiting.hidden = true;
    const q = queued;
    queued = null;
    vscode.postMessage({ type: 'chat', id: q.id, provider: picker.value, messages: q.messages, text: q.text });
    pendingText[q.id] = q.text;
  }
  const pendingText = {};

  function submit() {
    const text = composer.innerText.replace(/\n+$/, '');
    if (text.trim() === '' || go.disabled) return;
    composer.textContent = '';
    ask(text, text);
  }

  composer.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && e.ctrlKey) {
      e.preventDefault();
      submit();
    }
  });
  go.addEventListener('click', submit);
  picker.addEventListener('change', flush);
  document.getElementById('fresh').addEventListener('click', reset);

  function reset() {
    history = [];
    queued = null;
    log.replaceChildren();
    title.textContent = 'New conversation';
    waiting.hidden = true;
    go.disabled = false;
  }

  window.addEventListener('message', (event) => {
    const m = event.data;
    switch (m.type) {
      case 'providers': {
        const keep = picker.value;
        picker.replaceChildren(new Option('Choose a provider…', ''));
        for (const name of m.providers) picker.append(new Option(name, name));
        picker.value = keep;
        break;
      }
      case 'focus':
        composer.focus();
        break;
      case 'reset':
        reset();
        break;
      case 'ask':
        ask(m.shown, m.text);
        break;
      case 'delta': {
        const el = document.getElementById(m.id);
        if (el) el.querySelector('.body').textContent += m.text;
        break;
      }
      case 'answer': {
        const el = document.getElementById(m.id);
        // Shown trimmed: the adapter compares white space loosely.
        if (el) el.querySelector('.body').textContent = m.text.trim();
        history.push({ role: 'user', content: [{ type: 'text', text: pendingText[m.id] }] }, { role: 'assistant', content: m.text });
        delete pendingText[m.id];
        go.disabled = false;
        break;
      }
      case 'failed': {
        const el = document.getElementById(m.id);
        if (el) {
          el.classList.add('failed');
          el.querySelector('.body').textContent = 'Failed: ' + m.error;
        }
        go.disabled = false;
        break;
      }
      case 'title':
        title.textContent = m.text;
        break;
    }
  });

  document.body.classList.add('loaded');
  vscode.postMessage({ type: 'ready' });
})();
