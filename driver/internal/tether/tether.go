// Package tether starts the driver's long-lived children (code-server,
// Chromium) so that they die with the process that started them: a run or
// worker killed with SIGKILL (kill -9, the OOM killer, a crash) leaves no
// editor or browser running, holding gigabytes, until something ends them.
package tether

import (
	"os/exec"
	"runtime"
	"syscall"
)

// Process is a child started by Start.
type Process struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// Start starts cmd as the leader of a process group of its own (so that
// its helpers can be ended with it) and has the kernel send it SIGKILL
// when this process dies. Linux sends that signal when the thread that
// started the child ends, not the process (go.dev/issue/27505), so cmd
// is started and waited for by a goroutine that holds its thread until
// cmd has exited.
func Start(cmd *exec.Cmd) (*Process, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	p := &Process{cmd: cmd, done: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		p.err = cmd.Wait()
		close(p.done)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return p, nil
}

// Pid is the process's id, and its group's.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Done is closed once the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Err is how the process exited (exec.Cmd.Wait's error), once Done is
// closed.
func (p *Process) Err() error {
	<-p.done
	return p.err
}

// Kill ends the process's group with SIGKILL.
func (p *Process) Kill() { _ = syscall.Kill(-p.Pid(), syscall.SIGKILL) }
