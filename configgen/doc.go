// Package configgen turns a production plan into chat configurations on
// real code: for each planned dialogue it picks a file of the cell's
// language in the given local repositories, parses it with tree-sitter
// (Go, Python, JavaScript, TypeScript, Java) and turns the cell's cursor
// behaviour into concrete positions:
//
//   - idle: the cursor at column 1 of a line outside every top-level symbol
//     (imports, comments, blank lines between declarations);
//   - inside_function: the cursor on a statement line of a named function's
//     body (never its signature), at a column within the line's code;
//   - whole_function: a selection covering exactly the function's node,
//     with its decorators, export keyword or `const f =` wrapper;
//   - partial_block: a multi-line statement of a body, or a run of 2–4
//     consecutive statements that is not the whole body;
//   - single_line: one single-line statement, from its first to its last
//     non-blank character;
//   - whole_file: everything, from 1:1 to the end of the last line.
//
// Positions are 1-based with character columns (dialog.Position);
// selections end exclusively, and the cursor sits at the selection's end.
//
// Files are skipped when vendored, build output, hidden, generated,
// minified, binary, symlinked, above Config.MaxFileBytes or unparseable
// (Stats counts each reason). A region is never chosen when it, or for a
// bare cursor the Config.ContextLines lines around it that the plugin
// sends, holds a secret according to DetectSecrets (Stats.SecretRegions
// counts the regions left out).
//
// The first query is written by an OpenAI-compatible model when one is
// configured (conditioned on intent, locale, difficulty, query style,
// instruction type, reference region and the code in view; slash-command
// instructions start with the plugin's command), and otherwise by
// templates in the config's locale; each config records which in
// query_source. The templates are paraphrase banks per locale (several
// wordings of each request, the casual style of terse queries and a typo
// in DefaultTypoRate of them); a question about no code in particular is
// about a language feature or task the code in view shows (grounding.go);
// a "_code" style pastes code from elsewhere — the other open file, a
// call of the function, another function — never the code the plugin
// already sends. Every first query goes through the coherence checker
// (package coherence): a template query it finds something in is
// reworded (Stats.Regenerated) or its config dropped
// (Stats.IncoherentDropped), a model query replaced by the template
// (Stats.ModelIncoherent). Plugin-command instructions carry the command's slash form
// as the query. Follow-ups are not pre-written: the config carries a
// FollowUpPolicy (one kind per follow-up turn, each drawn from the kinds
// that suit the turn before it) and FollowUpWriter writes each at run
// time, with a wording whose presuppositions the answer just shown meets
// (no "why is that better than the original?" after an explanation that
// changed nothing).
//
// Everything is deterministic for a seed: config i depends only on the
// seed, i and the repositories' content.
package configgen
