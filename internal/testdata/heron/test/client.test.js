'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const http = require('node:http');
const { streamChat, complete, RequestError } = require('../extension/client');

// serve starts a local server whose handler writes raw responses; it
// records each request's headers and body.
async function serve(t, handler) {
  const requests = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      requests.push({ url: req.url, headers: req.headers, body: JSON.parse(body) });
      handler(req, res);
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => server.close());
  return { url: `http://127.0.0.1:${server.address().port}/v1/chat/completions`, requests };
}

const event = (content) => 'data: ' + JSON.stringify({ choices: [{ index: 0, delta: { content } }] });

test('streamChat reads deltas split across chunks and CRLF events', async (t) => {
  const srv = await serve(t, (req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/event-stream' });
    const all = event('Hel') + '\r\n\r\n' + event('lo') + '\n\n' + 'data: [DONE]\n\n';
    const cut = 7;
    res.write(all.slice(0, cut));
    setTimeout(() => res.end(all.slice(cut)), 10);
  });
  const deltas = [];
  const text = await streamChat(srv.url, 'key-1', { stream: true }, (d) => deltas.push(d));
  assert.equal(text, 'Hello');
  assert.deepEqual(deltas, ['Hel', 'lo']);
  assert.equal(srv.requests[0].headers.authorization, 'Bearer key-1');
});

test('streamChat reports HTTP errors with the message', async (t) => {
  const srv = await serve(t, (req, res) => {
    res.writeHead(429, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ error: { message: 'slow down' } }));
  });
  await assert.rejects(streamChat(srv.url, '', {}, () => {}), (err) => err instanceof RequestError && /429: slow down/.test(err.message));
});

test('streamChat reports an error event', async (t) => {
  const srv = await serve(t, (req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/event-stream' });
    res.end(event('a') + '\n\ndata: {"error":{"message":"boom"}}\n\n');
  });
  await assert.rejects(streamChat(srv.url, '', {}, () => {}), /boom/);
});

test('complete reads one JSON answer, without a key header when there is none', async (t) => {
  const srv = await serve(t, (req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ choices: [{ message: { role: 'assistant', content: 'A title' } }] }));
  });
  assert.equal(await complete(srv.url, '', { messages: [] }), 'A title');
  assert.equal(srv.requests[0].headers.authorization, undefined);
});
