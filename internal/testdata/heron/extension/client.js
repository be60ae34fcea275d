'use strict';
// client.js sends Heron's requests to an OpenAI-compatible endpoint: the
// chat request streamed as Server-Sent Events, the title request as one JSON
// answer. Pure Node (global fetch), no vscode import.

class RequestError extends Error {}

function headers(apiKey) {
  const h = { 'Content-Type': 'application/json', Accept: 'text/event-stream, application/json' };
  if (apiKey) h.Authorization = 'Bearer ' + apiKey;
  return h;
}

async function failure(res) {
  let text = '';
  try {
    text = await res.text();
  } catch {
    // the body is lost; the status says enough
  }
  let msg = text.slice(0, 300);
  try {
    const j = JSON.parse(text);
    if (j && j.error && j.error.message) msg = j.error.message;
  } catch {
    // not JSON: keep the text
  }
  return new RequestError('HTTP ' + res.status + (msg ? ': ' + msg : ''));
}

/**
 * streamChat POSTs a streaming chat request and calls onDelta(text) for each
 * content delta; resolves to the whole answer. Events are split on blank
 * lines (\n\n or \r\n\r\n), across chunks.
 */
async function streamChat(url, apiKey, body, onDelta, signal) {
  const res = await fetch(url, { method: 'POST', headers: headers(apiKey), body: JSON.stringify(body), signal });
  if (!res.ok) throw await failure(res);
  const decoder = new TextDecoder();
  let buf = '';
  let text = '';
  const event = (block) => {
    const data = block
      .split(/\r?\n/)
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).replace(/^ /, ''))
      .join('\n');
    if (data === '' || data === '[DONE]') return;
    let d;
    try {
      d = JSON.parse(data);
    } catch {
      throw new RequestError('malformed stream event: ' + data.slice(0, 100));
    }
    if (d.error) throw new RequestError(d.error.message || JSON.stringify(d.error));
    const delta = d.choices && d.choices[0] && d.choices[0].delta && d.choices[0].delta.content;
    if (delta) {
      text += delta;
      onDelta(delta);
    }
  };
  for await (const chunk of res.body) {
    buf += decoder.decode(chunk, { stream: true });
    let m;
    while ((m = /\r?\n\r?\n/.exec(buf))) {
      event(buf.slice(0, m.index));
      buf = buf.slice(m.index + m[0].length);
    }
  }
  buf += decoder.decode();
  if (buf.trim() !== '') event(buf);
  return text;
}

/** complete POSTs a non-streaming request and resolves to the answer text. */
async function complete(url, apiKey, body, signal) {
  const res = await fetch(url, { method: 'POST', headers: headers(apiKey), body: JSON.stringify(body), signal });
  if (!res.ok) throw await failure(res);
  const j = await res.json();
  const c = j.choices && j.choices[0] && j.choices[0].message && j.choices[0].message.content;
  if (typeof c !== 'string') throw new RequestError('the answer has no message content');
  return c;
}

module.exports = { RequestError, streamChat, complete };
