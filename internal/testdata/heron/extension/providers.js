'use strict';
// providers.js reads Heron's providers file and builds its model requests.
// Pure Node, no vscode import, so node --test can load it.
//
// The file (heron-providers.json in the extension's global storage folder)
// maps a provider id to one record whose endpoint is split into fields:
//
//   {"local": {"label": "Local", "protocol": "http", "hostname": "127.0.0.1",
//              "port": 8080, "path": "/v1", "apiKey": "sk-...", "model": "m"}}
//
// The first record is the active provider until another is picked.

const FILE_NAME = 'heron-providers.json';

// SYSTEM is Heron's own system prompt, first in every chat request.
const SYSTEM = 'You are Heron, a careful pair programmer. Answer in Markdown; put code in fenced blocks.';

// TITLE_PROMPT starts the user message of the title request sent after each answer.
const TITLE_PROMPT = 'Summarize this conversation as a title of at most six words. Reply with the title only.';

class ProviderError extends Error {}

/**
 * parseProviders reads the file's text into the providers in file order.
 * @param {string} text
 * @returns {{id: string, label: string, protocol: string, hostname: string, port: number|undefined, path: string, apiKey: string, model: string}[]}
 */
function parseProviders(text) {
  let data;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new ProviderError(FILE_NAME + ' is not JSON: ' + err.message);
  }
  if (!data || typeof data !== 'object' || Array.isArray(data)) {
    throw new ProviderError(FILE_NAME + ' must map provider ids to records');
  }
  const out = [];
  for (const [id, r] of Object.entries(data)) {
    if (!r || typeof r !== 'object') throw new ProviderError(`provider ${id}: not a record`);
    for (const f of ['protocol', 'hostname']) {
      if (typeof r[f] !== 'string' || r[f] === '') throw new ProviderError(`provider ${id}: ${f} is required`);
    }
    let port;
    if (r.port !== undefined && r.port !== null && r.port !== '') {
      port = Number(r.port);
      if (!Number.isInteger(port) || port <= 0 || port > 65535) throw new ProviderError(`provider ${id}: port ${r.port} is not a port number`);
    }
    out.push({
      id,
      label: typeof r.label === 'string' && r.label ? r.label : id,
      protocol: r.protocol.replace(/:$/, ''),
      hostname: r.hostname,
      port,
      path: typeof r.path === 'string' ? r.path : '',
      apiKey: typeof r.apiKey === 'string' ? r.apiKey : '',
      model: typeof r.model === 'string' ? r.model : '',
    });
  }
  return out;
}

/** baseURL joins a provider's fields: protocol://hostname:port + path, no trailing slash. */
function baseURL(p) {
  const port = p.port ? ':' + p.port : '';
  let path = p.path || '';
  if (path && !path.startsWith('/')) path = '/' + path;
  return (p.protocol + '://' + p.hostname + port + path).replace(/\/+$/, '');
}

/** chatURL is where chat and title requests go. */
function chatURL(p) {
  return baseURL(p) + '/chat/completions';
}

/**
 * userContent is a user message's content parts: the query, then the
 * editor's selection when there is one (nothing else of the editor).
 */
function userContent(query, selection) {
  const parts = [{ type: 'text', text: query }];
  if (selection && selection.trim() !== '') {
    parts.push({ type: 'text', text: '\n\nSelected code:\n```\n' + selection + '\n```' });
  }
  return parts;
}

/**
 * chatBody is the streaming chat request: the system prompt, the
 * conversation so far, then the new user message.
 */
function chatBody(provider, history, query, selection) {
  return {
    model: provider.model || undefined,
    stream: true,
    messages: [{ role: 'system', content: SYSTEM }, ...history, { role: 'user', content: userContent(query, selection) }],
  };
}

/** titleBody is the non-streaming request for the conversation's title. */
function titleBody(provider, query, answer) {
  return {
    model: provider.model || undefined,
    max_tokens: 20,
    messages: [{ role: 'user', content: TITLE_PROMPT + '\n\nUser: ' + query + '\nAssistant: ' + answer }],
  };
}

module.exports = { FILE_NAME, SYSTEM, TITLE_PROMPT, ProviderError, parseProviders, baseURL, chatURL, userContent, chatBody, titleBody };
