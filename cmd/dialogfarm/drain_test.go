package main

import (
	"bytes"
	"context"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A worker's first SIGINT drains it (no more jobs; the work context
// lasts), the next one ends its work; without a next one, the grace does.
func TestWorkerDrainsOnSignal(t *testing.T) {
	wait := func(what string, ch <-chan struct{}) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s never came", what)
		}
	}
	for _, c := range []struct {
		name  string
		grace time.Duration
		again bool
	}{{"second signal", time.Hour, true}, {"grace", 200 * time.Millisecond, false}} {
		t.Run(c.name, func(t *testing.T) {
			// As main: the first signal ends ctx.
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			var stderr bytes.Buffer
			a := &app{stderr: &stderr}
			work, drain, done := a.drainOnSignal(ctx, c.grace)
			defer done()
			if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			wait("the drain", drain)
			if !c.again {
				wait("the end of the grace", work.Done())
				return
			}
			select {
			case <-work.Done():
				t.Fatal("the first signal ended the work: nothing was drained")
			case <-time.After(300 * time.Millisecond):
			}
			if !strings.Contains(stderr.String(), "worker: draining") {
				t.Errorf("stderr: %q", stderr.String())
			}
			if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			wait("the end of the work at the second signal", work.Done())
		})
	}
}
