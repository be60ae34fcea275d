package driver

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
)

// holdLockEnv makes the test binary a process that holds a run folder's
// lock until its stdin closes (see TestLockHolderProcess).
const holdLockEnv = "DRIVER_TEST_HOLD_LOCK"

// TestLockHolderProcess is not a test: run by startLockHolder, it locks
// the folder named in holdLockEnv, says so and waits.
func TestLockHolderProcess(t *testing.T) {
	dir := os.Getenv(holdLockEnv)
	if dir == "" {
		t.Skip("helper process")
	}
	if _, err := LockRunFolder(dir); err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("locked\n")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	os.Exit(0)
}

// startLockHolder starts another process holding dir's lock and returns
// it once the lock is held.
func startLockHolder(tb testing.TB, dir string) *exec.Cmd {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHolderProcess$")
	cmd.Env = append(os.Environ(), holdLockEnv+"="+dir)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { stdin.Close(); _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "locked\n" {
		tb.Fatalf("lock holder said %q: %v", line, err)
	}
	return cmd
}

func TestLockRunFolderTwice(t *testing.T) {
	dir := t.TempDir()
	l, err := LockRunFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = LockRunFolder(dir)
	var locked *LockedError
	if !errors.As(err, &locked) || locked.PID != os.Getpid() || !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("second lock: %v", err)
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	l2, err := LockRunFolder(dir)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	l2.Unlock()
	if fi, err := os.Stat(filepath.Join(dir, LockFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("lock file: %v %v", fi, err)
	}
}

// TestLockHeldByAnotherProcess: another process's lock names its PID; once
// that process is killed (no chance to clean up) the folder is free.
func TestLockHeldByAnotherProcess(t *testing.T) {
	dir := t.TempDir()
	holder := startLockHolder(t, dir)
	_, err := LockRunFolder(dir)
	var locked *LockedError
	if !errors.As(err, &locked) || locked.PID != holder.Process.Pid {
		t.Fatalf("lock held by pid %d: got %v", holder.Process.Pid, err)
	}
	if alive, pid := runAlive(dir); !alive || pid != holder.Process.Pid {
		t.Errorf("runAlive = %v, %d", alive, pid)
	}
	holder.Process.Signal(syscall.SIGKILL)
	holder.Wait()
	if alive, _ := runAlive(dir); alive {
		t.Error("runAlive after the holder died")
	}
	l, err := LockRunFolder(dir)
	if err != nil {
		t.Fatalf("lock left by a dead process: %v", err)
	}
	l.Unlock()
}

// TestKillStaleOnlyForDeadRuns: processes.json of a run that still holds
// the folder's lock is left alone; once that run is dead, its process
// group is ended.
func TestKillStaleOnlyForDeadRuns(t *testing.T) {
	dir := t.TempDir()
	// A stand-in for an orphaned editor: its own process group, its
	// command line naming a folder inside the run folder.
	editor := exec.Command("sh", "-c", "sleep 1000; true", filepath.Join(dir, "editor"))
	editor.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := editor.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-editor.Process.Pid, syscall.SIGKILL) })
	exited := make(chan error, 1)
	go func() { exited <- editor.Wait() }()

	holder := startLockHolder(t, dir)
	if err := writeProcessGroups(dir, processGroups{Editor: editor.Process.Pid, Run: holder.Process.Pid}); err != nil {
		t.Fatal(err)
	}
	log := zaptest.NewLogger(t)
	if err := killStale(dir, log); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, processesFile)); err != nil {
		t.Fatalf("processes.json of a live run was handled as stale: %v", err)
	}
	select {
	case err := <-exited:
		t.Fatalf("the live run's editor was ended: %v", err)
	default:
	}

	holder.Process.Signal(syscall.SIGKILL)
	holder.Wait()
	l, err := LockRunFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	if err := killStale(dir, log); err != nil {
		t.Fatal(err)
	}
	if err := <-exited; err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("the dead run's editor: %v, want killed", err)
	}
	if _, err := os.Stat(filepath.Join(dir, processesFile)); !os.IsNotExist(err) {
		t.Errorf("processes.json after cleanup: %v", err)
	}
}

// TestKillStaleEndsEveryEditor: a killed run with a code-server per
// simulator leaves each behind; the next run on the folder ends them all,
// from the list processes.json keeps, and the one code-server a run before
// isolation recorded.
func TestKillStaleEndsEveryEditor(t *testing.T) {
	dir := t.TempDir()
	var exited []chan error
	var pids []int
	for _, id := range []string{"s1", "s2", "old"} {
		ed := exec.Command("sh", "-c", "sleep 1000; true", filepath.Join(dir, "editors", id))
		ed.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := ed.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = syscall.Kill(-ed.Process.Pid, syscall.SIGKILL) })
		done := make(chan error, 1)
		go func() { done <- ed.Wait() }()
		exited, pids = append(exited, done), append(pids, ed.Process.Pid)
	}
	if err := writeProcessGroups(dir, processGroups{Editors: pids[:2], Editor: pids[2], Run: 1 << 22}); err != nil {
		t.Fatal(err)
	}
	l, err := LockRunFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	if err := killStale(dir, zaptest.NewLogger(t)); err != nil {
		t.Fatal(err)
	}
	for i, done := range exited {
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "killed") {
				t.Errorf("editor %d: %v, want killed", i, err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("editor %d (pgid %d) still runs", i, pids[i])
		}
	}
}
