'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const http = require('node:http');
const { SSEParser, ChatError, streamChat } = require('../sse');

function parseAll(chunks) {
  const p = new SSEParser();
  const out = [];
  for (const c of chunks) out.push(...p.push(c));
  out.push(...p.end());
  return out.map((e) => e.data);
}

test('SSEParser', async (t) => {
  const cases = [
    { name: 'lf', chunks: ['data: a\n\ndata: b\n\n'], want: ['a', 'b'] },
    { name: 'crlf', chunks: ['data: a\r\n\r\ndata: b\r\n\r\n'], want: ['a', 'b'] },
    { name: 'cr', chunks: ['data: a\r\rdata: b\r\r'], want: ['a', 'b'] },
    { name: 'crlf split between chunks', chunks: ['data: a\r', '\n\r', '\ndata: b\r\n\r\n'], want: ['a', 'b'] },
    { name: 'line split between chunks', chunks: ['da', 'ta: {"x"', ':1}\n', '\n'], want: ['{"x":1}'] },
    { name: 'multi-line data', chunks: ['data: a\ndata: b\n\n'], want: ['a\nb'] },
    { name: 'comments and other fields', chunks: [': ping\nevent: message\nid: 7\nretry: 5\ndata: x\n\n'], want: ['x'] },
    { name: 'no space after colon', chunks: ['data:x\n\n'], want: ['x'] },
    { name: 'only the first space is stripped', chunks: ['data:  x\n\n'], want: [' x'] },
    { name: 'last event without blank line', chunks: ['data: a\n\ndata: [DONE]'], want: ['a', '[DONE]'] },
    { name: 'blank lines alone make no event', chunks: ['\n\n\n'], want: [] },
  ];
  for (const c of cases) {
    await t.test(c.name, () => assert.deepEqual(parseAll(c.chunks), c.want));
  }
});

const chunk = (content, finish = null) =>
  'data: ' + JSON.stringify({ choices: [{ index: 0, delta: content === undefined ? {} : { content }, finish_reason: finish }] }) + '\n\n';

// serve starts a local HTTP server whose handler writes raw responses; returns its base URL.
async function serve(t, handler) {
  const requests = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', () => {
      requests.push({ method: req.method, url: req.url, headers: req.headers, body });
      handler(req, res);
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => new Promise((r) => { server.closeAllConnections(); server.close(r); }));
  return { url: `http://127.0.0.1:${server.address().port}/v1/chat/completions`, requests };
}

function sseReply(parts, { end = true } = {}) {
  return (req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/event-stream' });
    let i = 0;
    const next = () => {
      if (i < parts.length) { res.write(parts[i++]); setImmediate(next); } else if (end) res.end(); else res.destroy();
    };
    next();
  };
}

test('streamChat', async (t) => {
  await t.test('streams deltas until [DONE] and sends the body and key', async (t) => {
    const s = await serve(t, sseReply([
      ': keep-alive\n\n',
      'data: ' + JSON.stringify({ choices: [{ index: 0, delta: { role: 'assistant' } }] }) + '\n\n',
      chunk('Hel'), chunk('lo, '), chunk('wörld'.slice(0, 2)), chunk('rld\n'), chunk(undefined, 'stop'),
      'data: [DONE]\n\n',
    ]));
    const deltas = [];
    const body = { model: 'm', stream: true, temperature: 0.2, messages: [{ role: 'user', content: 'q' }] };
    const answer = await streamChat({ url: s.url, apiKey: 'k1', body, onDelta: (d) => deltas.push(d) });
    assert.equal(answer, 'Hello, wörld\n');
    assert.deepEqual(deltas, ['Hel', 'lo, ', 'wö', 'rld\n']);
    assert.equal(s.requests.length, 1);
    assert.equal(s.requests[0].method, 'POST');
    assert.equal(s.requests[0].url, '/v1/chat/completions');
    assert.equal(s.requests[0].headers.authorization, 'Bearer k1');
    assert.equal(s.requests[0].headers['content-type'], 'application/json');
    assert.equal(s.requests[0].body, JSON.stringify(body));
  });

  await t.test('utf-8 split inside a character', async (t) => {
    const bytes = Buffer.from(chunk('日本語') + 'data: [DONE]\n\n');
    const s = await serve(t, (req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.write(bytes.subarray(0, 50));
      setImmediate(() => res.end(bytes.subarray(50)));
    });
    assert.equal(await streamChat({ url: s.url, body: {} }), '日本語');
  });

  await t.test('no key, no Authorization header', async (t) => {
    const s = await serve(t, sseReply([chunk('x'), 'data: [DONE]\n\n']));
    await streamChat({ url: s.url, apiKey: '', body: {} });
    assert.equal(s.requests[0].headers.authorization, undefined);
  });

  await t.test('clean end after finish_reason without [DONE] is done', async (t) => {
    const s = await serve(t, sseReply([chunk('ok'), chunk(undefined, 'stop')]));
    assert.equal(await streamChat({ url: s.url, body: {} }), 'ok');
  });

  await t.test('JSON answer to a stream request', async (t) => {
    const s = await serve(t, (req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ choices: [{ message: { role: 'assistant', content: 'whole' } }] }));
    });
    const deltas = [];
    assert.equal(await streamChat({ url: s.url, body: {}, onDelta: (d) => deltas.push(d) }), 'whole');
    assert.deepEqual(deltas, ['whole']);
  });

  const failures = [
    {
      name: 'non-2xx with OpenAI error JSON',
      handler: (req, res) => { res.writeHead(429, { 'Content-Type': 'application/json' }); res.end('{"error":{"message":"rate limited"}}'); },
      want: /^HTTP 429 Too Many Requests: rate limited$/,
    },
    {
      name: 'non-2xx with text body',
      handler: (req, res) => { res.writeHead(500); res.end('boom'); },
      want: /^HTTP 500 Internal Server Error: boom$/,
    },
    { name: 'malformed JSON chunk', handler: sseReply([chunk('a'), 'data: {nope\n\n']), want: /^bad stream: invalid JSON/ },
    { name: 'stream ends before [DONE]', handler: sseReply([chunk('a')]), want: /^bad stream: ended before \[DONE\]$/ },
    { name: 'connection dropped mid-stream', handler: sseReply([chunk('a')], { end: false }), want: /^(stream interrupted|bad stream)/ },
    { name: 'error object in the stream', handler: sseReply(['data: {"error":{"message":"overloaded"}}\n\n']), want: /^model error: overloaded$/ },
  ];
  for (const f of failures) {
    await t.test(f.name, async (t) => {
      const s = await serve(t, f.handler);
      await assert.rejects(streamChat({ url: s.url, body: {} }), (err) => {
        assert.ok(err instanceof ChatError, String(err));
        assert.match(err.message, f.want);
        return true;
      });
    });
  }

  await t.test('network error', async () => {
    const srv = http.createServer();
    await new Promise((r) => srv.listen(0, '127.0.0.1', r));
    const port = srv.address().port;
    await new Promise((r) => srv.close(r));
    await assert.rejects(streamChat({ url: `http://127.0.0.1:${port}/v1/chat/completions`, body: {} }), (err) => {
      assert.ok(err instanceof ChatError);
      assert.match(err.message, /^network error: .*ECONNREFUSED/);
      return true;
    });
  });

  await t.test('abort rejects with AbortError, not ChatError', async (t) => {
    const s = await serve(t, sseReply([chunk('a')], { end: false }));
    const ac = new AbortController();
    const p = streamChat({ url: s.url, body: {}, signal: ac.signal, onDelta: () => ac.abort() });
    await assert.rejects(p, (err) => {
      assert.ok(!(err instanceof ChatError), String(err));
      assert.equal(err.name, 'AbortError');
      return true;
    });
  });
});
