package sessions

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// TornLineError reports an append to the event log that the system cut
// short part-way (a full disk, a file size limit): the line is not in the
// log. Erased says whether the part that was written was blanked out in
// place (the log then holds no partial line); if not, `pickup doctor --fix`
// erases it. Either way the transition stands, and doctor finds the move
// the history missed.
type TornLineError struct {
	Path          string
	Offset        int64 // where the partial line begins
	Written, Want int   // bytes written of the line's
	Erased        bool
	Err           error // io.ErrShortWrite, or why the erase failed
}

func (e *TornLineError) Error() string {
	if e.Erased {
		return fmt.Sprintf("write %s: cut short after %d of %d bytes (disk full?); the partial line was erased", e.Path, e.Written, e.Want)
	}
	return fmt.Sprintf("write %s: cut short after %d of %d bytes (disk full?), and its partial line at byte %d could not be erased: %v", e.Path, e.Written, e.Want, e.Offset, e.Err)
}

func (e *TornLineError) Unwrap() error { return e.Err }

// eraseShortWrite undoes a write(2) of a line that the system cut short
// after n bytes, on fd, opened O_APPEND: it overwrites those bytes in place
// with spaces ending in a newline, a blank line that every reader skips.
//
// Truncating them away would be tidier but is not safe: other processes
// append without a lock (fsx.AppendIsAtomic), so their lines may already
// follow ours, and a truncate cannot tell. The bytes overwritten are ours
// alone wherever the log ends by now, and overwriting bytes already written
// needs no new space on a full disk (on copy-on-write filesystems it may:
// then the error says so and doctor erases them later). The caller holds
// whatever serializes writes on fd, so no one else uses its offset or
// flags meanwhile.
func eraseShortWrite(fd int, path string, n, want int) error {
	e := &TornLineError{Path: path, Written: n, Want: want, Err: io.ErrShortWrite}
	// An O_APPEND write leaves the offset just past the bytes it wrote.
	end, err := unix.Seek(fd, 0, io.SeekCurrent)
	if err != nil {
		e.Err = fmt.Errorf("%w; find the partial line: %w", io.ErrShortWrite, err)
		return e
	}
	e.Offset = end - int64(n)
	if err := overwrite(fd, path, e.Offset, blank(n)); err != nil {
		e.Err = fmt.Errorf("%w; erase the partial line: %w", io.ErrShortWrite, err)
		return e
	}
	e.Erased = true
	return e
}

// blank returns n bytes that make a blank line: spaces, then a newline.
func blank(n int) []byte {
	b := bytes.Repeat([]byte{' '}, n)
	if n > 0 {
		b[n-1] = '\n'
	}
	return b
}

// overwrite writes data at off on fd, which may be open O_APPEND: Linux's
// pwrite(2) appends on such a descriptor whatever the offset, so O_APPEND
// is cleared for the write and set again after.
func overwrite(fd int, path string, off int64, data []byte) (err error) {
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		return err
	}
	if flags&unix.O_APPEND != 0 {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFL, flags&^unix.O_APPEND); err != nil {
			return err
		}
		defer func() {
			if _, rerr := unix.FcntlInt(uintptr(fd), unix.F_SETFL, flags); err == nil && rerr != nil {
				err = &os.PathError{Op: "fcntl", Path: path, Err: rerr}
			}
		}()
	}
	for len(data) > 0 {
		n, werr := unix.Pwrite(fd, data, off)
		if werr != nil {
			return &os.PathError{Op: "pwrite", Path: path, Err: werr}
		}
		if n == 0 {
			return &os.PathError{Op: "pwrite", Path: path, Err: io.ErrShortWrite}
		}
		data, off = data[n:], off+int64(n)
	}
	return nil
}
