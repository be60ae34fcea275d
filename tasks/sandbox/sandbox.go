// Package sandbox runs untrusted commands (model answers under test) with
// bubblewrap: no network (only a loopback in a fresh network namespace), a
// read-only view of the toolchain (/usr and the listed paths), the run's
// own workspace copy as the only writable directory besides a private
// /tmp, a cleared environment, all capabilities dropped, and limits on
// wall time, memory and processes.
//
// Limits: wall time by killing the sandbox (bwrap --die-with-parent takes
// every process in it down); memory and process count by a cgroup v1
// (memory, pids) sub-group when /sys/fs/cgroup is writable, else by
// RLIMIT_AS and RLIMIT_NPROC through prlimit (RLIMIT_NPROC is not enforced
// for root, so without cgroups a root caller has no process limit).
//
// Fallback: where bwrap is missing, `unshare --net --pid --fork` keeps the
// network out and the limits on, but the whole file system stays visible
// (Mode reports "unshare"); where that fails too, New returns an error
// unless Config.AllowUnsandboxed is set (Mode "none", for development only).
package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// Config sets the sandbox's limits and what it can see.
type Config struct {
	Timeout  time.Duration // wall time of one Run (default 2m)
	MemoryMB int           // memory limit (default 2048)
	MaxProcs int           // process/thread limit (default 256)
	ReadOnly []string      // extra host paths bound read-only at the same place
	Env      []string      // environment inside (PATH, HOME and TMPDIR are set)
	Path     string        // PATH inside (default /usr/local/bin:/usr/bin:/bin)
	// AllowUnsandboxed lets New succeed with neither bwrap nor unshare.
	AllowUnsandboxed bool
}

// DefaultConfig is two minutes, 2 GiB, 256 processes.
func DefaultConfig() Config {
	return Config{Timeout: 2 * time.Minute, MemoryMB: 2048, MaxProcs: 256}
}

// Sandbox runs commands under Config.
type Sandbox struct {
	cfg     Config
	mode    string
	bwrap   string
	cgroups bool
}

// Result is what a sandboxed command did.
type Result struct {
	Output   string
	ExitCode int
	TimedOut bool
	Mode     string
}

var runSeq atomic.Int64

// New finds bubblewrap (or the fallback) and checks that cgroups can be used.
func New(cfg Config) (*Sandbox, error) {
	d := DefaultConfig()
	if cfg.Timeout <= 0 {
		cfg.Timeout = d.Timeout
	}
	if cfg.MemoryMB <= 0 {
		cfg.MemoryMB = d.MemoryMB
	}
	if cfg.MaxProcs <= 0 {
		cfg.MaxProcs = d.MaxProcs
	}
	if cfg.Path == "" {
		cfg.Path = "/usr/local/bin:/usr/bin:/bin"
	}
	s := &Sandbox{cfg: cfg}
	if p, err := exec.LookPath("bwrap"); err == nil && probe(p, "--unshare-all", "--die-with-parent", "--ro-bind", "/usr", "/usr",
		"--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64", "/usr/bin/true") {
		s.mode, s.bwrap = "bwrap", p
	} else if p, err := exec.LookPath("unshare"); err == nil && probe(p, "--net", "--pid", "--fork", "/usr/bin/true") {
		s.mode = "unshare"
	} else if cfg.AllowUnsandboxed {
		s.mode = "none"
	} else {
		return nil, errors.New("sandbox: neither bwrap (Debian package bubblewrap) nor unshare --net works here; install bubblewrap")
	}
	s.cgroups = writable("/sys/fs/cgroup/pids") && writable("/sys/fs/cgroup/memory")
	return s, nil
}

func probe(name string, args ...string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return exec.CommandContext(ctx, name, args...).Run() == nil
}

func writable(dir string) bool {
	return syscall.Access(dir, 2 /* W_OK */) == nil
}

// Mode is "bwrap", "unshare" or "none".
func (s *Sandbox) Mode() string { return s.mode }

// Run runs argv in dir, which must lie inside workspace, the only host
// directory the command can write (it is bound at the same path).
func (s *Sandbox) Run(ctx context.Context, workspace, dir string, argv []string) (Result, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	res := Result{Mode: s.mode}
	inner := append([]string{"/usr/bin/prlimit", fmt.Sprintf("--as=%d", int64(s.cfg.MemoryMB)<<20*4),
		fmt.Sprintf("--nproc=%d", s.cfg.MaxProcs), "--"}, argv...)
	var cmdline []string
	switch s.mode {
	case "bwrap":
		cmdline = append(s.bwrapArgs(workspace, dir), inner...)
	case "unshare":
		cmdline = append([]string{"unshare", "--net", "--pid", "--fork", "--kill-child"}, inner...)
	default:
		cmdline = inner
	}
	var cg *cgroup
	if s.cgroups {
		var err error
		if cg, err = newCgroup(s.cfg.MemoryMB, s.cfg.MaxProcs); err != nil {
			return res, err
		}
		defer cg.remove()
		// enter the cgroup before exec, so every child is counted
		cmdline = append([]string{"/bin/sh", "-c", `echo $$ > "$DF_CG_PIDS" && echo $$ > "$DF_CG_MEM" && exec "$@"`, "sh"}, cmdline...)
	}
	cmd := exec.CommandContext(ctx, cmdline[0], cmdline[1:]...)
	cmd.Dir = dir
	cmd.Env = s.env(workspace)
	if cg != nil {
		cmd.Env = append(cmd.Env, "DF_CG_PIDS="+cg.pids+"/cgroup.procs", "DF_CG_MEM="+cg.mem+"/cgroup.procs")
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cg != nil {
			cg.kill()
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = 5 * time.Second
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	res.Output = buf.String()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) || errors.Is(err, exec.ErrWaitDelay):
		res.ExitCode = -1
		if ee != nil {
			res.ExitCode = ee.ExitCode()
		}
		if ctx.Err() != nil {
			res.TimedOut = true
			res.Output += fmt.Sprintf("\n[sandbox: killed after %s]\n", s.cfg.Timeout)
		}
	default:
		return res, fmt.Errorf("sandbox run %s: %w", strings.Join(argv, " "), err)
	}
	return res, nil
}

func (s *Sandbox) env(workspace string) []string {
	env := []string{"PATH=" + s.cfg.Path, "HOME=" + workspace, "TMPDIR=/tmp", "LANG=C.UTF-8",
		"GOPROXY=off", "GOFLAGS=-mod=readonly", "GOTOOLCHAIN=local", "PYTHONDONTWRITEBYTECODE=1"}
	if s.mode != "bwrap" {
		env = append(env, "TMPDIR="+workspace)
	}
	return append(env, s.cfg.Env...)
}

func (s *Sandbox) bwrapArgs(workspace, dir string) []string {
	a := []string{s.bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--clearenv",
		"--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin", "--symlink", "usr/sbin", "/sbin",
		"--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
		"--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"}
	for _, f := range []string{"/etc/ld.so.cache", "/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/localtime", "/etc/alternatives", "/etc/ssl"} {
		if _, err := os.Stat(f); err == nil {
			a = append(a, "--ro-bind", f, f)
		}
	}
	for _, p := range s.cfg.ReadOnly {
		a = append(a, "--ro-bind", p, p)
	}
	a = append(a, "--bind", workspace, workspace, "--chdir", dir)
	for _, e := range s.env(workspace) {
		k, v, _ := strings.Cut(e, "=")
		a = append(a, "--setenv", k, v)
	}
	return a
}

// cgroup is a pair of cgroup v1 sub-groups (pids, memory) for one run.
type cgroup struct{ pids, mem string }

func newCgroup(memMB, procs int) (*cgroup, error) {
	name := fmt.Sprintf("dialogfarm-sandbox-%d-%d", os.Getpid(), runSeq.Add(1))
	cg := &cgroup{pids: filepath.Join("/sys/fs/cgroup/pids", name), mem: filepath.Join("/sys/fs/cgroup/memory", name)}
	for _, d := range []string{cg.pids, cg.mem} {
		if err := os.Mkdir(d, 0o755); err != nil {
			cg.remove()
			return nil, fmt.Errorf("sandbox cgroup: %w", err)
		}
	}
	set := func(file, val string) error { return os.WriteFile(file, []byte(val), 0o644) }
	if err := errors.Join(set(filepath.Join(cg.pids, "pids.max"), strconv.Itoa(procs)),
		set(filepath.Join(cg.mem, "memory.limit_in_bytes"), strconv.FormatInt(int64(memMB)<<20, 10))); err != nil {
		cg.remove()
		return nil, fmt.Errorf("sandbox cgroup limits: %w", err)
	}
	_ = set(filepath.Join(cg.mem, "memory.memsw.limit_in_bytes"), strconv.FormatInt(int64(memMB)<<20, 10))
	return cg, nil
}

// kill sends SIGKILL to every process left in the group.
func (cg *cgroup) kill() {
	b, _ := os.ReadFile(filepath.Join(cg.pids, "cgroup.procs"))
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// remove kills what is left and deletes the groups (a group with live
// processes cannot be removed).
func (cg *cgroup) remove() {
	cg.kill()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for _, d := range []string{cg.pids, cg.mem} {
		// the kernel reaps the killed processes shortly; until then the
		// group is busy
		for i := 0; i < 100; i++ {
			if err := os.Remove(d); err == nil || errors.Is(err, os.ErrNotExist) {
				break
			}
			<-tick.C
		}
	}
}
