'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { parseProviders, baseURL, chatURL, chatBody, titleBody, userContent, SYSTEM, TITLE_PROMPT, ProviderError } = require('../extension/providers');

test('parseProviders keeps file order and splits nothing it needs', () => {
  const list = parseProviders(JSON.stringify({
    farm: { label: 'Farm', protocol: 'http', hostname: '127.0.0.1', port: 41234, path: '/sec/s/s1/v1', apiKey: 'k', model: 'm' },
    other: { protocol: 'https:', hostname: 'example.invalid', port: '443' },
  }));
  assert.deepEqual(list.map((p) => p.id), ['farm', 'other']);
  assert.equal(list[0].label, 'Farm');
  assert.equal(list[1].label, 'other');
  assert.equal(list[1].protocol, 'https');
  assert.equal(list[1].port, 443);
  assert.equal(list[1].apiKey, '');
});

test('parseProviders rejects what it cannot use', async (t) => {
  const cases = {
    'not JSON': '{',
    'an array': '[]',
    'no hostname': JSON.stringify({ a: { protocol: 'http' } }),
    'a bad port': JSON.stringify({ a: { protocol: 'http', hostname: 'h', port: 70000 } }),
  };
  for (const [name, text] of Object.entries(cases)) {
    await t.test(name, () => assert.throws(() => parseProviders(text), ProviderError));
  }
});

test('baseURL and chatURL join the fields', () => {
  assert.equal(baseURL({ protocol: 'http', hostname: '127.0.0.1', port: 8080, path: '/abc/s/x/v1/' }), 'http://127.0.0.1:8080/abc/s/x/v1');
  assert.equal(baseURL({ protocol: 'https', hostname: 'h', path: 'v1' }), 'https://h/v1');
  assert.equal(chatURL({ protocol: 'http', hostname: 'h', port: 1, path: '' }), 'http://h:1/chat/completions');
});

test('chatBody: system prompt, history, then the user content parts with only the selection', () => {
  const p = { model: 'm' };
  const history = [{ role: 'user', content: [{ type: 'text', text: 'q1' }] }, { role: 'assistant', content: 'a1' }];
  const b = chatBody(p, history, 'What does this do?', 'x = 1');
  assert.equal(b.stream, true);
  assert.equal(b.model, 'm');
  assert.deepEqual(b.messages[0], { role: 'system', content: SYSTEM });
  assert.deepEqual(b.messages.slice(1, 3), history);
  assert.deepEqual(b.messages[3].content, [
    { type: 'text', text: 'What does this do?' },
    { type: 'text', text: '\n\nSelected code:\n```\nx = 1\n```' },
  ]);
  assert.deepEqual(userContent('q', '  \n'), [{ type: 'text', text: 'q' }]);
  assert.equal('model' in JSON.parse(JSON.stringify(chatBody({}, [], 'q', ''))), false);
});

test('titleBody is not streamed', () => {
  const b = titleBody({ model: 'm' }, 'q', 'a');
  assert.equal(b.stream, undefined);
  assert.equal(b.messages.length, 1);
  assert.ok(b.messages[0].content.startsWith(TITLE_PROMPT));
});
