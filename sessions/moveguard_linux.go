package sessions

import (
	"io"

	"golang.org/x/sys/unix"
)

// lockOrder takes byte at of the guard file open at fd, exclusive and
// without waiting: an open file description lock, so that it excludes
// other descriptions of the file in this process as in others, and goes
// when the description is closed (or its process dies).
func lockOrder(fd int, at int64) error {
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart, Start: at, Len: 1}
	return unix.FcntlFlock(uintptr(fd), unix.F_OFD_SETLK, &lk)
}
