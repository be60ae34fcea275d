// Package coherence checks that a chat config's queries fit what the
// simulated developer has in front of them: the file open in the editor
// and the code the plugin sends with the query (the selection, or the
// lines around the cursor). A query that names a file, a symbol or a
// technical term the request does not show, or pastes code the plugin
// already sends, makes a sample whose prompt no real developer would have
// written; the model answering it must guess or repeat.
//
// CheckQuery applies four rules to a query, each a Finding's Rule:
//
//   - file_not_in_context: a file name in the query's prose (a path with
//     a source or config extension) must be the open file, appear in the
//     code shown, or be a file of Context.Files whose text holds a code
//     block the query pastes (the query shows it).
//   - symbol_not_in_context: an identifier the prose names — in
//     backticks, called (`f()`), snake_case, camelCase, inner-capital
//     PascalCase or dotted (`os.Open`) — must occur as a whole word in
//     the code shown or pasted. Names of languages and tools (JavaScript,
//     GitHub) are no symbols.
//   - term_not_in_context: an acronym in the prose (two to six capitals:
//     CSV, HTTP, JSON) must occur, in any case, in the code shown or
//     pasted or in the file's name; chat abbreviations (OK, PR, API, IDE,
//     TODO) are exempt.
//   - duplicate_code: a block the query pastes (fenced, or two or more
//     lines that look like code) must not repeat the code shown: at most
//     half of its substantive lines (three or more characters, not only
//     punctuation) may be lines of the code shown, and no block may be
//     pasted twice.
//
// CheckFollowUp checks a follow-up against the turn before it
// (follow_up_presupposes): a follow-up that presupposes code in the
// answer needs a fenced block in it, and one that compares the answer
// with the original (any of the locales' words for "original") needs an
// answer that changed existing code: a fenced block, after a turn whose
// intent changes code (fix, optimize, refactor, docs, or a follow-up
// asking for a change).
//
// The rules read text only, in every locale dialogfarm writes; they are
// not tuned to any template. They cannot see a subject named in plain
// words ("code that caches results" where nothing caches): the template
// fallback grounds such phrases in the code shown instead.
package coherence
