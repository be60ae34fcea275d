'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { render } = require('../extension/media/markdown');

test('render', async (t) => {
  const cases = [
    { name: 'paragraphs', md: 'a\nb\n\nc', want: '<p>a\nb</p>\n<p>c</p>' },
    { name: 'fenced code is escaped and literal', md: 'See:\n\n```python\nif a < b && c:\n    return "**x**"\n```\nafter', want: '<p>See:</p>\n<pre><code class="language-python">if a &lt; b &amp;&amp; c:\n    return &quot;**x**&quot;\n</code></pre>\n<p>after</p>' },
    { name: 'unclosed fence runs to the end (a stream cut short)', md: '```\nx', want: '<pre><code>x\n</code></pre>' },
    { name: 'tilde fence', md: '~~~\n```\n~~~', want: '<pre><code>```\n</code></pre>' },
    { name: 'inline code, bold, italics, link', md: 'use `a<b` **now** or *later* or _never_ [docs](https://x.invalid)', want: '<p>use <code>a&lt;b</code> <strong>now</strong> or <em>later</em> or <em>never</em> <a href="https://x.invalid">docs</a></p>' },
    { name: 'snake_case is not italics', md: 'call my_func_name', want: '<p>call my_func_name</p>' },
    { name: 'heading', md: '## Title ##', want: '<h2>Title</h2>' },
    { name: 'lists', md: '- a\n- b\n1. c\n2. d', want: '<ul><li>a</li><li>b</li></ul>\n<ol><li>c</li><li>d</li></ol>' },
    { name: 'quote', md: '> note', want: '<blockquote>note</blockquote>' },
    { name: 'raw HTML is text', md: '<script>x</script>', want: '<p>&lt;script&gt;x&lt;/script&gt;</p>' },
    { name: 'brackets without a link stay', md: '[offline placeholder] text', want: '<p>[offline placeholder] text</p>' },
  ];
  for (const c of cases) {
    await t.test(c.name, () => assert.equal(render(c.md), c.want));
  }
});
