// Package respond is the capture endpoint's answerer made of a candidate
// pool and a judge: every member of the pool is asked, the judge scores
// and ranks the candidates, and the rank-1 candidate is the answer the
// plugin receives, so the dialogue continues with it. Every candidate,
// every verdict and every member that gave none (failed, skipped by its
// circuit breaker, or late for the pool's quorum or deadline) goes into
// the Answer, and from there into the dialogue record.
//
// It is a package of its own, not part of judge or pool, because it is
// the one place where the stages meet the capture endpoint: judge stays a
// scorer that imports only the shared nouns (dialog), pool stays the model
// gateway that imports only the shared nouns, and capture stays the wire.
// The responder reaches the pool through the one-method Proposer interface
// it owns, so a pool of one model (the CLI's --responder openai) and the
// offline stand-in are proposers too.
//
// A judge that cannot score (its model fails) does not fail the turn: the
// judge falls back to rules-only verdicts marked with the model's error,
// and every candidate is kept.
package respond
