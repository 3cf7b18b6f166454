package drain

import (
	"io"

	"golang.org/x/sys/unix"
)

// lockByte locks byte at of the guard file fd for writing, as sessions
// orders a session's moves (an OFD lock), waiting in the kernel for
// another worker's move of the same session: the fewest calls for what the
// library polls for.
func lockByte(fd int, at int64) error {
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart, Start: at, Len: 1}
	return unix.FcntlFlock(uintptr(fd), unix.F_OFD_SETLKW, &lk)
}
