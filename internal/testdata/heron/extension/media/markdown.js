// markdown.js renders the Markdown of Heron's answers to HTML: fenced code
// blocks as <pre><code>, headings, lists, block quotes, paragraphs, and
// inline code, bold, italics and links. Everything else is escaped text.
// Loaded by the view as a script (window.heronMarkdown) and by node --test
// as a module.
(function (root) {
  'use strict';

  function esc(s) {
    return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
  }

  // inline renders one paragraph's text: code spans first (their content
  // is literal), then bold, italics and links on the escaped rest.
  function inline(text) {
    const out = [];
    const re = /(`+)([\s\S]*?[^`])\1(?!`)/g;
    let last = 0;
    let m;
    while ((m = re.exec(text))) {
      out.push(spans(text.slice(last, m.index)));
      out.push('<code>' + esc(m[2].replace(/^ (.*) $/, '$1')) + '</code>');
      last = m.index + m[0].length;
    }
    out.push(spans(text.slice(last)));
    return out.join('');
  }

  function spans(text) {
    return esc(text)
      .replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (_, t, href) => '<a href="' + href + '">' + t + '</a>')
      .replace(/\*\*(?=\S)([\s\S]*?\S)\*\*/g, '<strong>$1</strong>')
      .replace(/(^|[^\w*])\*(?=\S)([^*]*?\S)\*(?![\w*])/g, '$1<em>$2</em>')
      .replace(/(^|[^\w])_(?=\S)([^_]*?\S)_(?!\w)/g, '$1<em>$2</em>');
  }

  const fence = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)[^`]*$/;
  const heading = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
  const bullet = /^ {0,3}[-*+]\s+(.*)$/;
  const ordered = /^ {0,3}\d{1,9}[.)]\s+(.*)$/;
  const quote = /^ {0,3}>\s?(.*)$/;

  /** render turns Markdown into HTML. */
  function render(md) {
    const lines = md.replace(/\r\n?/g, '\n').split('\n');
    const out = [];
    let para = [];
    let list = null; // {tag, items}
    const flushPara = () => {
      if (para.length) out.push('<p>' + inline(para.join('\n').trim()) + '</p>');
      para = [];
    };
    const flushList = () => {
      if (list) out.push('<' + list.tag + '>' + list.items.map((i) => '<li>' + inline(i) + '</li>').join('') + '</' + list.tag + '>');
      list = null;
    };
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i];
      const f = fence.exec(line);
      if (f) {
        flushPara();
        flushList();
        const code = [];
        const close = new RegExp('^ {0,3}' + f[1][0] + '{' + f[1].length + ',}\\s*$');
        for (i++; i < lines.length && !close.test(lines[i]); i++) code.push(lines[i]);
        const cls = f[2] ? ' class="language-' + esc(f[2]) + '"' : '';
        out.push('<pre><code' + cls + '>' + esc(code.join('\n') + (code.length ? '\n' : '')) + '</code></pre>');
        continue;
      }
      if (line.trim() === '') {
        flushPara();
        flushList();
        continue;
      }
      let m;
      if ((m = heading.exec(line))) {
        flushPara();
        flushList();
        out.push('<h' + m[1].length + '>' + inline(m[2]) + '</h' + m[1].length + '>');
      } else if ((m = bullet.exec(line)) || (m = ordered.exec(line))) {
        flushPara();
        const tag = bullet.test(line) ? 'ul' : 'ol';
        if (list && list.tag !== tag) flushList();
        if (!list) list = { tag, items: [] };
        list.items.push(m[1]);
      } else if ((m = quote.exec(line))) {
        flushPara();
        flushList();
        out.push('<blockquote>' + inline(m[1]) + '</blockquote>');
      } else if (list && /^\s+\S/.test(line)) {
        list.items[list.items.length - 1] += '\n' + line.trim();
      } else {
        flushList();
        para.push(line);
      }
    }
    flushPara();
    flushList();
    return out.join('\n');
  }

  const api = { render, escape: esc };
  if (typeof module === 'object' && module.exports) module.exports = api;
  else root.heronMarkdown = api;
})(typeof window !== 'undefined' ? window : globalThis);
