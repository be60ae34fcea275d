'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const {
  SYSTEM_PROMPT, SLASH_COMMANDS, instructionFor, editorContext, userContent, requestBody, completionsUrl,
} = require('../prompt');

// fakeDoc mimics the parts of vscode.TextDocument that prompt.js uses.
function fakeDoc(text, languageId = 'go') {
  const lines = text.split('\n');
  const offset = (p) => lines.slice(0, p.line).reduce((n, l) => n + l.length + 1, 0) + p.character;
  return {
    languageId,
    lineCount: lines.length,
    lineAt: (i) => ({ text: lines[i] }),
    getText: (r) => text.slice(offset(r.start), offset(r.end)),
  };
}

function sel(anchorLine, anchorChar, activeLine, activeChar) {
  const a = { line: anchorLine, character: anchorChar };
  const b = { line: activeLine, character: activeChar };
  const before = a.line < b.line || (a.line === b.line && a.character <= b.character);
  return {
    anchor: a, active: b, start: before ? a : b, end: before ? b : a,
    isEmpty: a.line === b.line && a.character === b.character,
  };
}

const tenLines = Array.from({ length: 10 }, (_, i) => `line${i + 1}`).join('\n');

test('instructionFor', async (t) => {
  const cases = [
    { name: 'free text is trimmed', in: '  why does this loop?\n', want: 'why does this loop?', cmd: null },
    { name: 'explain alone', in: '/explain', want: SLASH_COMMANDS.explain, cmd: 'explain' },
    { name: 'fix with rest', in: '/fix the off-by-one', want: SLASH_COMMANDS.fix + '\nthe off-by-one', cmd: 'fix' },
    { name: 'tests with multi-line rest', in: '/tests  use table tests\nand subtests ', want: SLASH_COMMANDS.tests + '\nuse table tests\nand subtests', cmd: 'tests' },
    { name: 'doc rest after newline', in: '/doc\nGoDoc style', want: SLASH_COMMANDS.doc + '\nGoDoc style', cmd: 'doc' },
    { name: 'optimize', in: '/optimize', want: SLASH_COMMANDS.optimize, cmd: 'optimize' },
    { name: 'unknown command is free text', in: '/refactor this', want: '/refactor this', cmd: null },
    { name: 'prefix of a command is unknown', in: '/explainit', want: '/explainit', cmd: null },
    { name: 'case matters', in: '/Explain', want: '/Explain', cmd: null },
    { name: 'slash alone', in: '/', want: '/', cmd: null },
    { name: 'prototype names are not commands', in: '/constructor', want: '/constructor', cmd: null },
    { name: 'slash later in text', in: 'what does /explain do', want: 'what does /explain do', cmd: null },
  ];
  for (const c of cases) {
    await t.test(c.name, () => {
      assert.deepEqual(instructionFor(c.in), { instruction: c.want, command: c.cmd });
    });
  }
});

test('every slash command has a non-empty template', () => {
  assert.deepEqual(Object.keys(SLASH_COMMANDS).sort(), ['doc', 'explain', 'fix', 'optimize', 'tests']);
  for (const v of Object.values(SLASH_COMMANDS)) assert.ok(v.length > 20);
});

test('editorContext', async (t) => {
  const cases = [
    {
      name: 'empty selection: lines around the cursor',
      doc: fakeDoc(tenLines), s: sel(4, 2, 4, 2), n: 2,
      want: { path: 'a/b.go', languageId: 'go', cursor: { line: 5, col: 3 }, around: { from: 3, to: 7, text: 'line3\nline4\nline5\nline6\nline7' } },
    },
    {
      name: 'clipped at the start of the file',
      doc: fakeDoc(tenLines), s: sel(0, 0, 0, 0), n: 3,
      want: { path: 'a/b.go', languageId: 'go', cursor: { line: 1, col: 1 }, around: { from: 1, to: 4, text: 'line1\nline2\nline3\nline4' } },
    },
    {
      name: 'clipped at the end of the file',
      doc: fakeDoc(tenLines), s: sel(9, 5, 9, 5), n: 15,
      want: { path: 'a/b.go', languageId: 'go', cursor: { line: 10, col: 6 }, around: { from: 1, to: 10, text: tenLines } },
    },
    {
      name: 'zero context lines: the cursor line',
      doc: fakeDoc(tenLines), s: sel(2, 1, 2, 1), n: 0,
      want: { path: 'a/b.go', languageId: 'go', cursor: { line: 3, col: 2 }, around: { from: 3, to: 3, text: 'line3' } },
    },
    {
      name: 'selection within a line, cursor at its active end',
      doc: fakeDoc(tenLines), s: sel(1, 1, 1, 4), n: 15,
      want: { path: 'a/b.go', languageId: 'go', cursor: { line: 2, col: 5 }, selection: { from: 2, to: 2, text: 'ine' } },
    },
    {
      name: 'backwards selection: cursor at the start',
      doc: fakeDoc(tenLines), s: sel(3, 5, 1, 0), n: 15,
      want: { path: 'a/b.go', languageId: 'go', cursor: { line: 2, col: 1 }, selection: { from: 2, to: 4, text: 'line2\nline3\nline4' } },
    },
    {
      name: 'selection ending at column 1 excludes that line',
      doc: fakeDoc(tenLines), s: sel(1, 0, 3, 0), n: 15,
      want: { path: 'a/b.go', languageId: 'go', cursor: { line: 4, col: 1 }, selection: { from: 2, to: 3, text: 'line2\nline3\n' } },
    },
    {
      name: 'tabs count as one column',
      doc: fakeDoc('func f() {\n\t\treturn\n}'), s: sel(1, 2, 1, 2), n: 0,
      want: { path: 'a/b.go', languageId: 'go', cursor: { line: 2, col: 3 }, around: { from: 2, to: 2, text: '\t\treturn' } },
    },
  ];
  for (const c of cases) {
    await t.test(c.name, () => {
      assert.deepEqual(editorContext(c.doc, c.s, 'a/b.go', c.n), c.want);
    });
  }
});

test('userContent', async (t) => {
  await t.test('selection', () => {
    const ctx = editorContext(fakeDoc(tenLines, 'python'), sel(1, 0, 2, 5), 'pkg/m.py', 15);
    assert.equal(
      userContent(ctx, instructionFor('/explain').instruction),
      'File: pkg/m.py\nLanguage: python\nCursor: line 3, column 6\n' +
      'Selected code (lines 2-3):\n```python\nline2\nline3\n```\n' +
      '\n' + SLASH_COMMANDS.explain,
    );
  });
  await t.test('around the cursor', () => {
    const ctx = editorContext(fakeDoc(tenLines), sel(0, 3, 0, 3), 'main.go', 1);
    assert.equal(
      userContent(ctx, 'what is this?'),
      'File: main.go\nLanguage: go\nCursor: line 1, column 4\n' +
      'Code around the cursor (lines 1-2):\n```go\nline1\nline2\n```\n' +
      '\nwhat is this?',
    );
  });
  await t.test('no editor: the instruction alone', () => {
    assert.equal(userContent(null, 'hello'), 'hello');
  });
});

test('requestBody keeps history exactly and fixes the key order', () => {
  const history = [
    { role: 'user', content: 'U1 ' }, { role: 'assistant', content: 'A1\n', extra: 1 },
  ];
  const body = requestBody({ model: 'm', temperature: 0.2, history, user: 'U2' });
  assert.equal(
    JSON.stringify(body),
    JSON.stringify({
      model: 'm', stream: true, temperature: 0.2,
      messages: [
        { role: 'system', content: SYSTEM_PROMPT },
        { role: 'user', content: 'U1 ' }, { role: 'assistant', content: 'A1\n' },
        { role: 'user', content: 'U2' },
      ],
    }),
  );
});

test('completionsUrl', async (t) => {
  for (const [base, want] of [
    ['http://127.0.0.1:9/s/x/v1', 'http://127.0.0.1:9/s/x/v1/chat/completions'],
    ['http://127.0.0.1:9/v1/', 'http://127.0.0.1:9/v1/chat/completions'],
    [' https://api.openai.com/v1 ', 'https://api.openai.com/v1/chat/completions'],
  ]) {
    await t.test(base, () => assert.equal(completionsUrl(base), want));
  }
});
