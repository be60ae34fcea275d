package main

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"
)

// TestClosedOutputStopsTheRun writes to a pipe whose reader is gone, as a
// run's log line does when the process that read its stderr died: the
// write fails instead of killing the process, and the run's context ends
// with the reason.
func TestClosedOutputStopsTheRun(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx, unwatch := stopOnClosedOutput(context.Background(), int(w.Fd()))
	defer unwatch()
	if ctx.Err() != nil {
		t.Fatal("cancelled before anything happened")
	}
	r.Close()
	if _, err := w.Write([]byte("a log line\n")); err == nil {
		t.Fatal("write to a pipe without reader succeeded")
	}
	select {
	case <-ctx.Done():
	case <-time.After(time.Minute): // a guard against hanging, not a speed check
		t.Fatal("the run's context was not cancelled after SIGPIPE on a closed output")
	}
	if !errors.Is(context.Cause(ctx), errOutputClosed) {
		t.Errorf("cause %v, want %v", context.Cause(ctx), errOutputClosed)
	}
}

// TestOpenOutputKeepsTheRun: a SIGPIPE that comes while the watched output
// still has its reader (a network peer went away) does not stop the run.
func TestOpenOutputKeepsTheRun(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	other, otherW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer otherW.Close()
	ctx, unwatch := stopOnClosedOutput(context.Background(), int(w.Fd()))
	defer unwatch()
	other.Close()
	if _, err := otherW.Write([]byte("x")); err == nil {
		t.Fatal("write to a pipe without reader succeeded")
	}
	if outputClosed(int(w.Fd())) {
		t.Fatal("a pipe with its reader open counted as closed")
	}
	if !outputClosed(int(otherW.Fd())) {
		t.Fatal("a pipe without reader not counted as closed")
	}
	unwatch()
	if !errors.Is(context.Cause(ctx), context.Canceled) || errors.Is(context.Cause(ctx), errOutputClosed) {
		t.Errorf("cause %v, want plain cancel by unwatch", context.Cause(ctx))
	}
}
