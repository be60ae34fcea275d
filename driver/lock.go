package driver

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"dialogfarm/internal/runfiles"
)

// LockFile is the advisory lock of a run folder. Its holder's PID is
// written in it; the lock itself (flock) is released by the kernel when the
// holder exits, however it exits, so a lock left by a dead run is free.
const LockFile = "run.lock"

// FolderLock is a held run-folder lock.
type FolderLock struct {
	f *os.File
}

// LockedError says another live process holds a run folder.
type LockedError struct {
	Dir string
	PID int // 0 when the holder has not written its PID yet
}

func (e *LockedError) Error() string {
	holder := "pid unknown"
	if e.PID > 0 {
		holder = "pid " + strconv.Itoa(e.PID)
	}
	return fmt.Sprintf("run folder %s is in use by another dialogfarm (%s): wait for it to finish or stop it; one run folder has one run", e.Dir, holder)
}

// LockRunFolder takes dir's lock without waiting, creating dir if needed,
// and writes this process's PID into the lock file. It fails with a
// *LockedError when another open of the lock holds it (another process, or
// another LockRunFolder in this one).
func LockRunFolder(dir string) (*FolderLock, error) {
	if err := runfiles.MkdirAll(dir); err != nil {
		return nil, fmt.Errorf("create run folder: %w", err)
	}
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, runfiles.FileMode)
	if err != nil {
		return nil, fmt.Errorf("open run lock: %w", err)
	}
	if err := flock(f, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, &LockedError{Dir: dir, PID: lockHolder(dir)}
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	pid := []byte(strconv.Itoa(os.Getpid()) + "\n")
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, fmt.Errorf("write run lock: %w", err)
	}
	if _, err := f.WriteAt(pid, 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("write run lock: %w", err)
	}
	return &FolderLock{f: f}, nil
}

// Unlock releases the lock. The file stays: removing it would let a third
// process lock a new file while a second still waits on the old one.
func (l *FolderLock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close() // closing the descriptor releases the flock
	l.f = nil
	return err
}

// runAlive reports whether dir's lock is held, and by which PID.
func runAlive(dir string) (bool, int) {
	f, err := os.Open(filepath.Join(dir, LockFile))
	if err != nil {
		return false, 0
	}
	defer f.Close()
	if err := flock(f, unix.LOCK_SH|unix.LOCK_NB); err != nil {
		return errors.Is(err, unix.EWOULDBLOCK), lockHolder(dir)
	}
	_ = flock(f, unix.LOCK_UN)
	return false, 0
}

// lockHolder reads the PID written in dir's lock file (0 if none).
func lockHolder(dir string) int {
	data, err := os.ReadFile(filepath.Join(dir, LockFile))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	return pid
}

// flock retries the call when a signal interrupts it.
func flock(f *os.File, how int) error {
	for {
		err := unix.Flock(int(f.Fd()), how)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// FolderBusy reports whether a live process holds dir's run lock, and
// its PID (0 when unknown).
func FolderBusy(dir string) (bool, int) { return runAlive(dir) }
