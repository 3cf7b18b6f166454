//go:build unix

package fsx

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// NoFollow are the flags every open of a board's file adds: O_NOFOLLOW, so
// that a link in the file's place is refused (ELOOP) instead of followed,
// and O_NONBLOCK, so that a named pipe in its place fails or opens at once
// instead of waiting for a peer (the callers then refuse it by its mode).
// O_NONBLOCK changes nothing for regular files.
const NoFollow = unix.O_NOFOLLOW | unix.O_NONBLOCK

func mayBeUnsafe(errno error) bool {
	switch errno {
	case unix.ELOOP, unix.EMLINK, unix.ENXIO, unix.ENOTDIR, unix.EISDIR, unix.EOPNOTSUPP:
		return true
	}
	return false
}

// Explain turns err, the error of a raw open(2) of path with NoFollow (a
// syscall.Errno, or an *os.PathError holding one), into an
// *UnsafePathError when the path is a link or special file (or, with dir,
// not a directory), else into an *os.PathError.
func Explain(op, path string, err error, dir bool) error {
	if pe, ok := err.(*os.PathError); ok {
		err = pe.Err
	}
	if _, ok := err.(syscall.Errno); !ok {
		return &os.PathError{Op: op, Path: path, Err: err}
	}
	return explain(op, path, err, dir)
}

// ReadRegular reads the whole of path, which must be a regular file: a
// link, named pipe or device in its place is refused with an
// *UnsafePathError, without following or waiting on it. It makes the four
// system calls of a small read (open, fstat, read, close) and allocates
// only the result.
func ReadRegular(path string) ([]byte, error) {
	fd, err := openRetry(path, unix.O_RDONLY|unix.O_CLOEXEC|NoFollow)
	if err != nil {
		return nil, explain("open", path, err, false)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	if uint32(st.Mode)&unix.S_IFMT != unix.S_IFREG {
		return nil, Unsafe(path, modeOf(uint32(st.Mode)), false)
	}
	// One byte more than the size, so that the usual read ends with it
	// unfilled and needs no second read to see the end.
	buf := make([]byte, 0, int(st.Size)+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
		if len(buf) < cap(buf) && int64(len(buf)) >= st.Size {
			return buf, nil // short read at the size fstat gave: the end
		}
	}
}

// OpenRegular opens path for reading as ReadRegular reads it.
func OpenRegular(path string) (*os.File, error) {
	fd, err := openRetry(path, unix.O_RDONLY|unix.O_CLOEXEC|NoFollow)
	if err != nil {
		return nil, explain("open", path, err, false)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	if uint32(st.Mode)&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, Unsafe(path, modeOf(uint32(st.Mode)), false)
	}
	// Blocking again, as os.File expects of a regular file.
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, &os.PathError{Op: "fcntl", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

func openRetry(path string, flags int) (int, error) {
	for {
		fd, err := unix.Open(path, flags, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// modeOf converts the type bits of a stat mode.
func modeOf(m uint32) os.FileMode {
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		return os.ModeDir
	case unix.S_IFLNK:
		return os.ModeSymlink
	case unix.S_IFIFO:
		return os.ModeNamedPipe
	case unix.S_IFSOCK:
		return os.ModeSocket
	case unix.S_IFCHR:
		return os.ModeDevice | os.ModeCharDevice
	case unix.S_IFBLK:
		return os.ModeDevice
	case unix.S_IFREG:
		return 0
	}
	return os.ModeIrregular
}
