'use strict';
// sse.js talks to an OpenAI-compatible /chat/completions endpoint: an
// incremental Server-Sent Events parser and streamChat, which POSTs a request
// and reports each content delta. Pure Node (global fetch), no vscode import.

/**
 * SSEParser turns a byte/text stream into events ({event, data, id}).
 * Feed it with push(text); it returns the events completed by that text.
 * Lines may end in \n, \r\n or \r, even split across pushes.
 */
class SSEParser {
  constructor() {
    this.buf = '';
    this.data = [];
    this.event = '';
    this.id = '';
    this.pendingCR = false;
  }

  /** @param {string} text @returns {{event: string, data: string, id: string}[]} */
  push(text) {
    const out = [];
    let s = this.buf + text;
    if (this.pendingCR && s.startsWith('\n')) s = s.slice(1); // "\r" then "\n" in the next chunk
    this.pendingCR = false;
    let start = 0;
    for (let i = 0; i < s.length; i++) {
      const c = s[i];
      if (c !== '\n' && c !== '\r') continue;
      this.line(s.slice(start, i), out);
      if (c === '\r') {
        if (i + 1 < s.length) {
          if (s[i + 1] === '\n') i++;
        } else {
          this.pendingCR = true;
        }
      }
      start = i + 1;
    }
    this.buf = s.slice(start);
    return out;
  }

  /** end flushes a last line and an event not followed by a blank line. */
  end() {
    const out = [];
    if (this.buf !== '') this.line(this.buf, out);
    this.buf = '';
    this.line('', out);
    return out;
  }

  line(line, out) {
    if (line === '') {
      if (this.data.length > 0) {
        out.push({ event: this.event || 'message', data: this.data.join('\n'), id: this.id });
      }
      this.data = [];
      this.event = '';
      return;
    }
    if (line.startsWith(':')) return; // comment / keep-alive
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
    else if (field === 'id') this.id = value;
  }
}

/** ChatError is a failed request; message is the reason shown to the user. */
class ChatError extends Error {
  constructor(message, { status, cause } = {}) {
    super(message, cause ? { cause } : undefined);
    this.name = 'ChatError';
    this.status = status;
  }
}

function errorText(body) {
  const text = String(body || '').trim();
  try {
    const j = JSON.parse(text);
    const msg = j && (j.error && (j.error.message || j.error) || j.message);
    if (typeof msg === 'string' && msg) return msg;
  } catch (_) { /* not JSON */ }
  return text.length > 300 ? text.slice(0, 300) + '…' : text;
}

function networkReason(err) {
  let e = err;
  while (e && e.cause) e = e.cause;
  const detail = (e && (e.message || e.code)) || String(err);
  return 'network error: ' + detail;
}

/** deltaOf returns the content delta of one chunk (choices[0].delta.content), or ''. */
function deltaOf(chunk) {
  if (chunk && chunk.error) {
    const m = typeof chunk.error === 'string' ? chunk.error : chunk.error.message || JSON.stringify(chunk.error);
    throw new ChatError('model error: ' + m);
  }
  const choice = chunk && Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
  const content = choice && choice.delta && choice.delta.content;
  return typeof content === 'string' ? content : '';
}

/**
 * streamChat POSTs body to url and calls onDelta(text) for every content
 * delta of the SSE answer. Resolves with the whole answer once "[DONE]"
 * arrives (or the stream ends cleanly after a finish_reason). Rejects with
 * ChatError for non-2xx, network failures and malformed streams; with the
 * signal's AbortError when aborted.
 * @param {{url: string, apiKey?: string, body: object, signal?: AbortSignal,
 *          onDelta?: (text: string) => void, fetchImpl?: typeof fetch}} opts
 */
async function streamChat({ url, apiKey, body, signal, onDelta = () => {}, fetchImpl = globalThis.fetch }) {
  const headers = { 'Content-Type': 'application/json', Accept: 'text/event-stream' };
  if (apiKey) headers.Authorization = 'Bearer ' + apiKey;
  let res;
  try {
    res = await fetchImpl(url, { method: 'POST', headers, body: JSON.stringify(body), signal });
  } catch (err) {
    if (signal && signal.aborted) throw err;
    throw new ChatError(networkReason(err), { cause: err });
  }
  if (!res.ok) {
    let text = '';
    try { text = await res.text(); } catch (_) { /* keep the status alone */ }
    const detail = errorText(text);
    const statusText = res.statusText ? ' ' + res.statusText : '';
    throw new ChatError('HTTP ' + res.status + statusText + (detail ? ': ' + detail : ''), { status: res.status });
  }

  let answer = '';
  const ctype = (res.headers.get('content-type') || '').toLowerCase();
  if (ctype.includes('application/json')) {
    // The server ignored stream:true and answered one JSON object.
    let j;
    try { j = JSON.parse(await readAll(res, signal)); } catch (err) {
      if (signal && signal.aborted) throw err;
      if (err instanceof ChatError) throw err;
      throw new ChatError('bad response: invalid JSON', { cause: err });
    }
    deltaOf({ error: j && j.error });
    const msg = j && Array.isArray(j.choices) && j.choices[0] && j.choices[0].message;
    if (!msg || typeof msg.content !== 'string') throw new ChatError('bad response: no choices[0].message.content');
    onDelta(msg.content);
    return msg.content;
  }

  const parser = new SSEParser();
  const decoder = new TextDecoder('utf-8');
  let done = false;
  let finished = false;
  const handle = (events) => {
    for (const ev of events) {
      if (done) return;
      const data = ev.data.trim();
      if (data === '[DONE]') { done = true; return; }
      if (data === '') continue;
      let chunk;
      try { chunk = JSON.parse(data); } catch (err) {
        throw new ChatError('bad stream: invalid JSON in data line: ' + data.slice(0, 80), { cause: err });
      }
      const d = deltaOf(chunk);
      const choice = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
      if (choice && choice.finish_reason) finished = true;
      if (d) { answer += d; onDelta(d); }
    }
  };
  try {
    if (!res.body) throw new ChatError('bad stream: empty response body');
    for await (const bytes of res.body) {
      handle(parser.push(decoder.decode(bytes, { stream: true })));
      if (done) break;
    }
    if (!done) handle(parser.push(decoder.decode()).concat(parser.end()));
  } catch (err) {
    if (signal && signal.aborted) throw err;
    if (err instanceof ChatError) throw err;
    throw new ChatError('stream interrupted: ' + networkReason(err).replace(/^network error: /, ''), { cause: err });
  }
  if (!done && !finished) throw new ChatError('bad stream: ended before [DONE]');
  return answer;
}

async function readAll(res, signal) {
  try {
    return await res.text();
  } catch (err) {
    if (signal && signal.aborted) throw err;
    throw new ChatError('stream interrupted: ' + networkReason(err).replace(/^network error: /, ''), { cause: err });
  }
}

module.exports = { SSEParser, ChatError, streamChat, deltaOf };
