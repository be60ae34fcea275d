package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// errOutputClosed is the cause of a stop whose reason is that nobody reads
// stdout or stderr any more (the pipe's reader, say a parent process or
// `| head`, went away).
var errOutputClosed = errors.New("stdout or stderr closed by its reader")

// stopOnClosedOutput returns a context cancelled with errOutputClosed once a
// write to a closed output pipe raises SIGPIPE and one of fds (main passes
// stdout and stderr) is such a pipe. Without it Go's
// runtime ends the process on that signal, leaving the editor and browser a
// drive started running with nobody to stop them; with it the write fails
// (EPIPE) and the run stops as on SIGINT: records written stay whole and the
// editor is stopped. A SIGPIPE from a network connection (which Go otherwise
// ignores) leaves the context alone: only a broken one of fds stops the run.
func stopOnClosedOutput(parent context.Context, fds ...int) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGPIPE)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-sig:
				for _, fd := range fds {
					if outputClosed(fd) {
						cancel(errOutputClosed)
						return
					}
				}
			}
		}
	}()
	return ctx, func() {
		cancel(context.Canceled)
		<-done
		signal.Stop(sig)
	}
}

// outputClosed reports whether fd is a pipe or socket whose other end is
// gone: poll reports an error or hang-up on it without waiting.
func outputClosed(fd int) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n > 0 && fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0
}
