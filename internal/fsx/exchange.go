package fsx

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
)

// ReplaceExisting atomically replaces the file at path with data, but only
// if path still exists: if another process moved it away meanwhile (a
// reaper returning a session to todo/), it fails with ENOENT and writes
// nothing there, so a stale writer can never resurrect a file at its old
// place. On Linux and macOS this is an atomic exchange of a fresh temporary
// file with path; elsewhere a check followed by a rename, which leaves a
// small window.
func ReplaceExisting(path string, data []byte, perm os.FileMode, sync bool) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path))
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after the exchange it holds the old content
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if sync {
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
	}
	if err := f.Close(); err != nil {
		return err
	}
	err = exchange(tmp, path)
	if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSYS) || errors.Is(err, syscall.ENOTSUP) {
		if _, serr := os.Lstat(path); serr != nil {
			return serr
		}
		err = os.Rename(tmp, path)
	}
	if err != nil {
		return &os.LinkError{Op: "exchange", Old: tmp, New: path, Err: err}
	}
	if sync {
		return SyncDir(dir)
	}
	return nil
}
