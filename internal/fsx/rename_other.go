//go:build !linux && !darwin

package fsx

import "syscall"

// renameNoReplace reports ENOSYS so that RenameNoReplace uses link+unlink.
func renameNoReplace(oldpath, newpath string) error { return syscall.ENOSYS }

func exchange(a, b string) error { return syscall.ENOSYS }
