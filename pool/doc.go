// Package pool is dialogfarm's one model gateway, and the candidate pool
// built on it.
//
// # The gateway
//
// Every model call of dialogfarm goes through a Member: an
// OpenAI-compatible endpoint and model reached through go-openai — each
// pool member, the judge model, the single model of `--responder openai`
// (a pool of one), the analyst's classifier, configgen's query writer and
// the follow-up writer. One policy applies to all of them:
//
//   - Transient failures — 429 (waiting as long as Retry-After or
//     retry-after-ms says, up to RetryConfig.MaxRetryAfter), 408, 409, 425,
//     5xx, attempt timeouts, refused or reset connections, and SSE streams
//     cut before their finish reason — are retried with exponential backoff
//     and jitter up to RetryConfig.MaxAttempts. Other 4xx fail at once.
//   - Calls are spaced by the member's requests-per-minute limit (RPM, a
//     golang.org/x/time/rate token bucket) and bounded in flight
//     (MaxConcurrency).
//   - A circuit breaker (github.com/sony/gobreaker/v2, BreakerConfig) stops
//     calling a member after Failures failed requests in a row, fails its
//     requests at once with ErrCircuitOpen for Cooldown, then lets one
//     request through and closes again if it is answered. Requests whose
//     caller gave up count neither way.
//   - Each answer records its model, text, latency, prompt and completion
//     tokens — from the API's usage, or estimated with CountTokens and
//     marked TokensCounted when the server reports none — and its estimated
//     cost from the member's per-million-token prices; Stats sums them.
//   - The API key is cut out of every error text (and of the go-openai
//     APIError or RequestError it unwraps to), every log line and every
//     answer, so an upstream that echoes the bearer token in its error body
//     cannot put it into a record, a log or the plugin's error bubble. Keys
//     are never part of a cache key or a written config either:
//     MemberConfig.APIKey is a Secret, filled from the variable APIKeyEnv
//     names by ResolveKeys.
//   - A key goes only where it belongs (keys.go): APIKeyEnv must name a
//     credential-looking variable (…KEY, …TOKEN, …SECRET) that is not a
//     well-known credential of another service than the host's
//     (WellKnownKeys: AWS_SECRET_ACCESS_KEY, GITHUB_TOKEN, another
//     provider's key), and a key never goes over plain http to a host
//     other than loopback, unless the member's AllowKeyEnv or
//     AllowInsecure says so. A refused variable is not even read
//     (ErrKeyPolicy). NewMember logs which variable goes to which host,
//     by name (KeyRoute), so each command that calls models says so first.
//   - Every number of a Config and MemberConfig has a range, checked by
//     Validate and ValidateRanges, NaN and infinities refused.
//
// A Cache in the run folder, keyed by the SHA-256 of the member's identity
// and the exact request it sends, answers repeated calls so a re-run or a
// resumed run never pays twice.
//
// # The pool
//
// A Pool asks all its Members for a candidate answer to each captured
// request, concurrently (at most Config.Concurrency at once). It answers
// once Config.Quorum members (default all) have answered, or once
// Config.Deadline has passed with at least one candidate; the members it
// stops waiting for are cancelled and recorded as late. Members fail
// independently: a request proceeds with the candidates that came back,
// and the Proposal lists every member that gave none with its reason
// (failed, skipped by an open circuit, or late), which the record keeps
// (dialog.Missing). A member failing Config.FailingAfter requests in a row
// is reported as failing (error log and Stats.Failing), and a request with
// no candidate at all fails with ErrNoCandidates joined with every reason.
//
// Member implements the consumer-owned model interfaces of judge, analyst
// and configgen (Complete), and Pool the respond package's Proposer.
package pool
