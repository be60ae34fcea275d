// view.js builds Heron's view into #root: a History panel (hidden, with its
// search box) before the Chat panel, whose header holds the title, the
// provider picker and New chat; the conversation; and the composer (a file
// input, a rich-text editor of paragraphs, Attach and Send). Send is the only
// way to send (Enter starts a new paragraph); while an answer streams, Stop
// takes its place. Answers are rendered from Markdown as they stream.
(function () {
  'use strict';
  const vscode = acquireVsCodeApi();
  const md = window.heronMarkdown;

  const h = (tag, attrs = {}, ...children) => {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (k === 'class') el.className = v;
      else if (v === true) el.setAttribute(k, '');
      else if (v !== false && v !== undefined) el.setAttribute(k, v);
    }
    el.append(...children);
    return el;
  };
  const icon = (name) => h('span', { class: 'codicon codicon-' + name, 'aria-hidden': 'true' });

  // The panels.
  const search = h('input', { type: 'search', class: 'hn-search__input', placeholder: 'Search conversations', 'aria-label': 'Search conversations' });
  const past = h('ul', { class: 'hn-past' });
  const historyPanel = h('section', { class: 'hn-panel', 'data-panel': 'history', hidden: true },
    h('form', { class: 'hn-search', role: 'search' }, search), past);
  const title = h('span', { class: 'hn-title' }, 'New chat');
  const picker = h('hn-picker', { class: 'hn-provider', 'aria-label': 'Provider' });
  const fresh = h('hn-button', { class: 'hn-new', appearance: 'icon', 'aria-label': 'New chat', title: 'New chat' }, icon('add'));
  const notice = h('div', { class: 'hn-notice', role: 'status', hidden: true });
  const thread = h('div', { class: 'hn-thread', role: 'log', 'aria-live': 'polite' });
  const file = h('input', { type: 'file', class: 'hn-file', multiple: true, hidden: true });
  const editor = h('div', {
    class: 'hn-editor hn-prose is-empty', contenteditable: 'true', role: 'textbox', 'aria-multiline': 'true',
    'aria-label': 'Message Heron', translate: 'no', spellcheck: 'false',
  }, h('p', { 'data-placeholder': 'Ask Heron about your code…' }, h('br')));
  const attach = h('hn-button', { class: 'hn-attach', appearance: 'icon', 'aria-label': 'Attach a file', title: 'Attach a file' }, icon('attach'));
  const send = h('hn-button', { class: 'hn-send', appearance: 'primary', 'aria-label': 'Send message', title: 'Send message' }, 'Send');
  const actions = h('div', { class: 'hn-actions' }, attach, send);
  const chatPanel = h('section', { class: 'hn-panel', 'data-panel': 'chat' },
    h('header', { class: 'hn-bar' }, title, picker, fresh), notice, thread,
    h('div', { class: 'hn-composer' }, file, h('div', { class: 'hn-editor-shell' }, editor), actions));
  const tabs = h('nav', { class: 'hn-tabs', role: 'tablist' },
    h('hn-button', { class: 'hn-tab', role: 'tab', 'data-tab': 'chat', 'aria-selected': 'true', appearance: 'icon' }, 'Chat'),
    h('hn-button', { class: 'hn-tab', role: 'tab', 'data-tab': 'history', 'aria-selected': 'false', appearance: 'icon' }, 'History'));
  document.getElementById('root').append(h('div', { class: 'hn-app' }, tabs, historyPanel, chatPanel));

  tabs.addEventListener('click', (e) => {
    const tab = e.target.closest('[data-tab]');
    if (!tab) return;
    for (const t of tabs.children) t.setAttribute('aria-selected', String(t === tab));
    historyPanel.hidden = tab.dataset.tab !== 'history';
    chatPanel.hidden = tab.dataset.tab !== 'chat';
  });
  search.addEventListener('input', () => {
    const q = search.value.toLowerCase();
    for (const li of past.children) li.hidden = !li.textContent.toLowerCase().includes(q);
  });
  attach.addEventListener('click', () => file.click());

  // The editor: paragraphs of text.
  document.execCommand('defaultParagraphSeparator', false, 'p');
  const editorText = () => {
    const blocks = [...editor.childNodes].map((n) => (n.nodeType === Node.ELEMENT_NODE ? n.textContent : n.nodeValue || ''));
    return blocks.join('\n').replace(/^\n+|\s+$/g, '');
  };
  const clearEditor = () => {
    editor.replaceChildren(h('p', { 'data-placeholder': 'Ask Heron about your code…' }, h('br')));
    editor.classList.add('is-empty');
  };
  editor.addEventListener('input', () => editor.classList.toggle('is-empty', editorText() === ''));
  const focusEditor = () => {
    editor.focus();
    const r = document.createRange();
    r.selectNodeContents(editor);
    r.collapse(false);
    const s = window.getSelection();
    s.removeAllRanges();
    s.addRange(r);
  };

  // The conversation.
  let current = null; // {id, el, text}
  let seq = 0;
  const turn = (who, cls) => {
    const text = h('div', { class: 'hn-turn__text' + (cls ? ' ' + cls : '') });
    const el = h('div', { class: 'hn-turn hn-turn--' + who }, h('div', { class: 'hn-turn__who' }, who === 'user' ? 'You' : 'Heron'), text);
    thread.append(el);
    return { el, text };
  };
  const streaming = (on) => {
    if (on) {
      const stop = h('hn-button', { class: 'hn-stop', 'aria-label': 'Stop generating', title: 'Stop generating' }, icon('debug-stop'));
      stop.addEventListener('click', () => vscode.postMessage({ type: 'stop' }));
      send.replaceWith(stop);
    } else {
      const stop = actions.querySelector('.hn-stop');
      if (stop) stop.replaceWith(send);
    }
  };

  function submit() {
    const text = editorText();
    if (text.trim() === '' || current) return;
    clearEditor();
    const u = turn('user');
    u.text.textContent = text;
    const id = 'm' + ++seq;
    const a = turn('assistant', 'hn-md');
    current = { id, el: a.el, text: a.text, md: '' };
    streaming(true);
    vscode.postMessage({ type: 'send', id, provider: picker.value, text });
  }
  send.addEventListener('click', submit);

  function reset() {
    if (thread.children.length) past.prepend(h('li', {}, title.textContent));
    thread.replaceChildren();
    title.textContent = 'New chat';
    current = null;
    streaming(false);
  }
  fresh.addEventListener('click', () => vscode.postMessage({ type: 'new' }));

  window.addEventListener('message', (event) => {
    const m = event.data;
    switch (m.type) {
      case 'providers':
        picker.options = m.providers.map((p) => ({ value: p.id, label: p.label }));
        notice.hidden = !m.error;
        notice.textContent = m.error || '';
        break;
      case 'focus':
        focusEditor();
        break;
      case 'reset':
        reset();
        break;
      case 'delta':
        if (current && current.id === m.id) {
          current.md += m.text;
          current.text.innerHTML = md.render(current.md);
          thread.scrollTop = thread.scrollHeight;
        }
        break;
      case 'end':
        if (current && current.id === m.id) {
          current = null;
          streaming(false);
        }
        break;
      case 'error':
        if (current && (current.id === m.id || !m.id)) {
          current.el.classList.add('hn-turn--error');
          current.text.textContent = 'Error: ' + m.message;
          current = null;
          streaming(false);
        } else {
          notice.hidden = false;
          notice.textContent = m.message;
        }
        break;
      case 'title':
        title.textContent = m.text;
        break;
    }
  });

  vscode.postMessage({ type: 'ready' });
})();
