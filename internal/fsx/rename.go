package fsx

import (
	"errors"
	"os"
	"syscall"
)

// RenameNoReplace renames oldpath to newpath in one step, failing with an
// error that matches os.ErrExist (EEXIST) if newpath already exists and
// os.ErrNotExist (ENOENT) if oldpath does not. It never replaces newpath.
// Errors are *os.LinkError values.
func RenameNoReplace(oldpath, newpath string) error {
	err := renameNoReplace(oldpath, newpath)
	if err == nil {
		return nil
	}
	if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSYS) || errors.Is(err, syscall.ENOTSUP) {
		// The filesystem does not implement the no-replace flag.
		return LinkUnlink(oldpath, newpath)
	}
	return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
}

// LinkUnlink is the portable fallback of RenameNoReplace: link(2) refuses an
// existing target, and of several processes that linked the same source only
// the one whose unlink(2) succeeds keeps its new name; the others remove
// theirs and report ENOENT, exactly as a lost rename would.
//
// A crash between the two calls leaves one file with two names (link count
// 2); it never loses the file.
func LinkUnlink(oldpath, newpath string) error {
	if err := os.Link(oldpath, newpath); err != nil {
		var le *os.LinkError
		if errors.As(err, &le) {
			le.Op = "rename"
			return le
		}
		return err
	}
	if err := os.Remove(oldpath); err != nil {
		// Someone else moved oldpath away after our link: they won.
		_ = os.Remove(newpath)
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: underlying(err)}
	}
	return nil
}

func underlying(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
