// Package runfiles holds the permissions of everything dialogfarm writes:
// records, exchanges, failure artifacts, SFT files, reports, configs and the
// editor's and browser's folders carry private code, prompts and answers, so
// files are 0600 and folders 0700 (readable by the user who runs dialogfarm
// only). Writers take the modes from here, so they are set in one place.
package runfiles

import (
	"fmt"
	"os"
)

const (
	// FileMode is the mode of every file a run writes.
	FileMode os.FileMode = 0o600
	// DirMode is the mode of every folder a run creates.
	DirMode os.FileMode = 0o700
)

// MkdirAll creates dir and its missing parents with DirMode. A folder that
// exists keeps its mode: it may be the user's own (--out .), and the files
// written into it are FileMode anyway.
func MkdirAll(dir string) error {
	return os.MkdirAll(dir, DirMode)
}

// WriteFile writes data to path with FileMode, narrowing an existing file's
// mode too.
func WriteFile(path string, data []byte) error {
	if err := os.WriteFile(path, data, FileMode); err != nil {
		return err
	}
	return narrow(path)
}

// OpenAppend opens path for appending, creating it with FileMode, and
// narrows an existing file's mode.
func OpenAppend(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, FileMode)
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(FileMode); err != nil {
		f.Close()
		return nil, fmt.Errorf("make %s private: %w", path, err)
	}
	return f, nil
}

func narrow(path string) error {
	if err := os.Chmod(path, FileMode); err != nil {
		return fmt.Errorf("make %s private: %w", path, err)
	}
	return nil
}
