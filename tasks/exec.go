package tasks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// runResult is what one command did.
type runResult struct {
	Output   string // stdout and stderr, interleaved
	ExitCode int
	TimedOut bool
}

// runCmd runs name with args in dir; env entries are added to the process
// environment. A non-zero exit is not an error (it is in ExitCode); failing
// to start is. The command is killed when ctx ends or after timeout.
func runCmd(ctx context.Context, dir string, env []string, timeout time.Duration, name string, args ...string) (runResult, error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = 5 * time.Second
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	res := runResult{Output: buf.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.ExitCode = ee.ExitCode()
		if ctx.Err() != nil {
			res.TimedOut = true
		}
	default:
		return res, fmt.Errorf("run %s %s in %s: %w", name, strings.Join(args, " "), dir, err)
	}
	return res, nil
}

// tail returns at most the last n bytes of s, cut at a line start.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return "…\n" + s
}
