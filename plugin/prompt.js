'use strict';
// prompt.js builds what the plugin sends to the model: the system prompt,
// the user message (editor context + instruction) and the full message list.
// Pure: no vscode import, so node tests exercise it directly. Documents and
// selections are duck-typed like vscode's (lineCount, lineAt(i).text,
// getText(range), languageId; range.start/end {line, character}, isEmpty,
// active {line, character}).

const SYSTEM_PROMPT =
  'You are Ask, a coding assistant inside the VS Code editor. ' +
  'The user message starts with the file the developer is working in, its language, ' +
  'the cursor position and the selected code or the code around the cursor, ' +
  'followed by their request. Answer that request precisely and concisely. ' +
  'Use Markdown, and put code in fenced code blocks tagged with the language.';

// Slash commands: "/cmd rest" is sent as the template, then rest on a new line.
const SLASH_COMMANDS = Object.freeze({
  explain: 'Explain what this code does, step by step, and point out anything surprising.',
  fix: 'Find the bugs in this code and fix them. Show the corrected code and explain each change.',
  tests: 'Write unit tests for this code using the usual test framework for this language. Cover normal cases, edge cases and errors.',
  doc: "Add documentation comments to this code, following this language's conventions. Show the documented code.",
  optimize: 'Optimize this code for performance and readability without changing its behaviour. Show the improved code and explain the changes.',
});

/**
 * instructionFor turns what the developer typed into the INSTRUCTION part of
 * the user message. The query is trimmed; "/cmd rest" with a known command
 * becomes the command's template followed by "\n" + rest when rest is not
 * empty. Unknown commands (and "/" alone) are sent as free text.
 * @param {string} query
 * @returns {{instruction: string, command: string|null}}
 */
function instructionFor(query) {
  const text = String(query).trim();
  const m = /^\/(\S+)(?:\s+([\s\S]*))?$/.exec(text);
  if (m && Object.prototype.hasOwnProperty.call(SLASH_COMMANDS, m[1])) {
    const rest = (m[2] || '').trim();
    const template = SLASH_COMMANDS[m[1]];
    return { instruction: rest ? template + '\n' + rest : template, command: m[1] };
  }
  return { instruction: text, command: null };
}

/**
 * editorContext captures what the user message needs from an editor, at the
 * moment the question is asked.
 * @param {object} doc vscode.TextDocument-like
 * @param {object} selection vscode.Selection-like
 * @param {string} relPath workspace-relative path
 * @param {number} contextLines lines before and after the cursor when nothing is selected
 */
function editorContext(doc, selection, relPath, contextLines) {
  const cursor = { line: selection.active.line + 1, col: selection.active.character + 1 };
  const ctx = { path: relPath, languageId: doc.languageId, cursor };
  if (!selection.isEmpty) {
    const { start, end } = selection;
    // A selection ending at column 1 of a later line does not include that line.
    const last = end.character === 0 && end.line > start.line ? end.line - 1 : end.line;
    ctx.selection = { from: start.line + 1, to: last + 1, text: doc.getText(selection) };
    return ctx;
  }
  const n = Math.max(0, Math.floor(Number(contextLines) || 0));
  const first = Math.max(0, selection.active.line - n);
  const lastLine = Math.min(doc.lineCount - 1, selection.active.line + n);
  const lines = [];
  for (let i = first; i <= lastLine; i++) lines.push(doc.lineAt(i).text);
  ctx.around = { from: first + 1, to: lastLine + 1, text: lines.join('\n') };
  return ctx;
}

/**
 * userContent assembles the USER message from an editor context (or null when
 * no editor is open: then the instruction alone is sent) and an instruction.
 */
function userContent(ctx, instruction) {
  if (!ctx) return instruction;
  let s =
    'File: ' + ctx.path + '\n' +
    'Language: ' + ctx.languageId + '\n' +
    'Cursor: line ' + ctx.cursor.line + ', column ' + ctx.cursor.col + '\n';
  if (ctx.selection) {
    s += 'Selected code (lines ' + ctx.selection.from + '-' + ctx.selection.to + '):\n' +
      '```' + ctx.languageId + '\n' + ctx.selection.text + '\n```\n';
  } else {
    s += 'Code around the cursor (lines ' + ctx.around.from + '-' + ctx.around.to + '):\n' +
      '```' + ctx.languageId + '\n' + ctx.around.text + '\n```\n';
  }
  return s + '\n' + instruction;
}

/**
 * requestBody is the JSON body for POST {baseUrl}/chat/completions. history
 * holds the previous {role, content} messages of the conversation exactly as
 * they were sent and received. Key order is fixed: model, stream, temperature, messages.
 */
function requestBody({ model, temperature, history, user }) {
  return {
    model,
    stream: true,
    temperature,
    messages: [
      { role: 'system', content: SYSTEM_PROMPT },
      ...history.map((m) => ({ role: m.role, content: m.content })),
      { role: 'user', content: user },
    ],
  };
}

/** completionsUrl joins the base URL (with or without a trailing slash) and /chat/completions. */
function completionsUrl(baseUrl) {
  return String(baseUrl).trim().replace(/\/+$/, '') + '/chat/completions';
}

module.exports = {
  SYSTEM_PROMPT,
  SLASH_COMMANDS,
  instructionFor,
  editorContext,
  userContent,
  requestBody,
  completionsUrl,
};
