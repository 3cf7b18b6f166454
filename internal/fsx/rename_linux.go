package fsx

import "golang.org/x/sys/unix"

func renameNoReplace(oldpath, newpath string) error {
	for {
		err := unix.Renameat2(unix.AT_FDCWD, oldpath, unix.AT_FDCWD, newpath, unix.RENAME_NOREPLACE)
		if err != unix.EINTR {
			return err
		}
	}
}

func exchange(a, b string) error {
	for {
		err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
		if err != unix.EINTR {
			return err
		}
	}
}
