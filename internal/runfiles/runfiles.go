// Package runfiles holds the permissions of everything dialogfarm writes:
// records, exchanges, failure artifacts, SFT files, reports, configs and the
// editor's and browser's folders carry private code, prompts and answers, so
// files are 0600 and folders 0700 (readable by the user who runs dialogfarm
// only). Writers take the modes from here, so they are set in one place.
//
// WriteAtomic is the one way a file is replaced whole (configs, plans,
// profiles, reports, SFT files, dataset folders, caches, pipelines): a
// reader, or a run killed or crashed at any moment, sees the old file or
// the new one, never part of one.
package runfiles

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
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

// WriteAtomic replaces path with data, with FileMode. The data goes to a
// temporary file with a name of its own in path's folder (so two writers
// never share one), is synced to disk, and is renamed over path; then the
// folder is synced, so the rename itself survives a crash. On an error
// the temporary file is removed and path is as it was.
func WriteAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Chmod(FileMode)
	}
	if werr == nil {
		werr = f.Sync()
	}
	if err := errors.Join(werr, f.Close()); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// syncDir makes dir's entries (a rename into it) durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
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
