package workbench

import (
	"context"
	"errors"
	"sync"

	"dialogfarm/driver/editor"
)

// guard returns ctx, cancelled with the *editor.ActivationError when f fails
// first; stop releases what guard holds.
func guard(ctx context.Context, f failure) (context.Context, func()) {
	if f == nil {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case <-f.Failed():
			cancel(f.Err())
		case <-stop:
		case <-ctx.Done():
		}
	})
	return ctx, func() { close(stop); wg.Wait(); cancel(nil) }
}

// failure is what ends a window's waits at once: its editor's plugin
// failed to activate.
type failure interface {
	Failed() <-chan struct{}
	Err() error
}

var _ failure = (*editor.Editor)(nil)

// activationCause is the *editor.ActivationError that ended ctx, if one did.
func activationCause(ctx context.Context) error {
	var ae *editor.ActivationError
	if c := context.Cause(ctx); errors.As(c, &ae) {
		return c
	}
	return nil
}
