// Package pool asks several OpenAI-compatible models for candidate answers
// to one captured request.
//
// A Pool holds Members, each an endpoint and model reached through
// go-openai. For each request every member is asked concurrently
// (errgroup, at most Config.Concurrency at once); each member also bounds
// its own calls in flight across requests (MaxConcurrency) and spaces them
// by its requests-per-minute limit (RPM).
//
// Transient failures — 429 (waiting as long as Retry-After or
// retry-after-ms says, up to RetryConfig.MaxRetryAfter), 408, 409, 425,
// 5xx, attempt timeouts, refused or reset connections, and SSE streams cut
// before their finish reason — are retried with exponential backoff and
// jitter up to RetryConfig.MaxAttempts. Other 4xx statuses fail at once.
// Members fail independently: a request proceeds with the candidates that
// came back, each failure is logged with its reason and returned in the
// Proposal, a member failing Config.FailingAfter requests in a row is
// reported as failing (error log and Stats.Failing), and a request with no
// candidate at all fails with ErrNoCandidates joined with every reason.
//
// Each candidate records its model, text, latency, prompt and completion
// tokens — from the API's usage, or estimated with CountTokens and marked
// TokensCounted when the server reports none — and its estimated cost from
// the member's per-million-token prices.
//
// A Cache in the run folder, keyed by the SHA-256 of the member's identity
// and the exact request it sends, answers repeated calls so a re-run or a
// resumed run never pays twice. API keys are never part of a cache key, a
// log line, an error or a written config: MemberConfig.APIKey is a Secret,
// filled from the variable APIKeyEnv names by ResolveKeys.
//
// Member also implements judge.Completer, so the judge model gets the same
// retries, limits, cache and accounting.
package pool
