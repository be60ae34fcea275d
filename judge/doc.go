// Package judge scores and ranks candidate answers and audits the judge
// against human labels. It imports only the shared nouns (dialog): the
// judge model is reached through the consumer-owned Completer interface
// (pool.Member implements it), and the responder that puts pool and judge
// behind the capture endpoint lives in package respond.
//
// # Scoring
//
// A Judge scores each candidate of a captured request (a Subject: the
// exact messages the plugin sent, with the intent, file language and query
// locale from the chat config or read from the request). The request is
// read by the plugin's message format, a MessageReader (the prompt: section
// of its adapter file; adapter.Set implements it): the judge knows no
// plugin's context layout or command templates itself. With a judge
// model (a Completer; pool.Member is one) it asks for a 1–5 score against
// the intent's rubric (explain, generate, fix, tests, docs, optimise,
// refactor, general), showing the request as JSON exactly as sent; the
// model answers {"score", "reason"}. Malformed output is repaired (code
// fences, surrounding prose, trailing commas, single quotes, "4" or 4.0)
// and, failing that, asked for again with the parse error up to
// Config.MaxRetries times. Output that is still unreadable gives an
// unparseable verdict with Score 0 — unscored, ranked after every scored
// candidate, never exported — rather than a default score.
//
// Without a judge model the judge runs in rules-only mode: every verdict
// has RulesOnly set and a reason saying so, and starts from 5. A judge
// model that fails (after the retries its Completer makes) gives the same
// rules-only verdict, with JudgeError holding the model's error: a turn
// never fails, nor loses its candidates, because the judge model did.
//
// # Rules
//
// A registry of named rules (DefaultRules) deducts from the score; each
// deduction records the rule's name, weight and a one-line reason. The
// final score is the LLM score (or 5) minus the deductions, clamped to
// 1..5. Weights can be changed and rules disabled by name (Config.Rules).
//
// # Ranking
//
// Candidates are ranked by final score; ties go to the smaller total
// deduction weight, then the higher LLM score, then the pool's member
// order (see Rank). The rank-1 candidate is the answer.
//
// # Audit
//
// Evaluate compares judged scores with human labels: Accuracy5 (of the
// items the judge scored 5, the share humans scored 5), precision and
// recall per score, exact agreement and quadratic-weighted Cohen's kappa
// with a seeded percentile-bootstrap 95% interval, overall and per intent,
// language and locale, with every unpaired id reported.
package judge
