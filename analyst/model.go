package analyst

import (
	"context"

	"dialogfarm/dialog"
)

// Model is the chat model this stage asks; *pool.Member, the one model
// gateway (retries honouring Retry-After, rpm limit, circuit breaker, key
// redaction, usage and cost), implements it. nil means no model.
type Model interface {
	// Model names the model; it keys the stage's answer cache.
	Model() string
	Complete(ctx context.Context, msgs []dialog.Message) (dialog.Candidate, error)
}
