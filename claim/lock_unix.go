//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package claim

import (
	"os"

	"github.com/pickup-dev/pickup/internal/fsx"
	"golang.org/x/sys/unix"
)

// The file operations of a lock's fast path, as raw system calls: on a slow
// virtual machine the os package's extra calls cost more than the work.

// flockFile takes an exclusive flock(2) on path, creating the file if
// needed, and returns its release. A flock belongs to one open file, so two
// goroutines of one process exclude each other as two processes do, and the
// kernel drops it when its process dies.
func flockFile(path string, perm os.FileMode) (unlock func(), err error) {
	fd, err := openLocked(path, perm)
	if err != nil {
		return nil, err
	}
	return func() { unix.Close(fd) }, nil
}

// openLocked opens path, creating it with perm if needed, and waits for
// an exclusive flock(2) on it. A link in path's place is refused, never
// followed (O_CREAT would create its target).
func openLocked(path string, perm os.FileMode) (int, error) {
	fd, err := openRetry(path, unix.O_RDONLY|unix.O_CREAT|unix.O_CLOEXEC|fsx.NoFollow, perm)
	if err != nil {
		return -1, fsx.Explain("open", path, err, false)
	}
	for {
		err = unix.Flock(fd, unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		unix.Close(fd)
		return -1, &os.PathError{Op: "flock", Path: path, Err: err}
	}
	return fd, nil
}

// readSmall reads the whole of a small file, at most max bytes. A read of
// a regular file returns less than asked for only at its end, so a record
// usually takes one read.
func readSmall(path string, max int) ([]byte, error) {
	fd, err := openRetry(path, unix.O_RDONLY|unix.O_CLOEXEC|fsx.NoFollow, 0)
	if err != nil {
		return nil, fsx.Explain("open", path, err, false)
	}
	defer unix.Close(fd)
	buf := make([]byte, 0, 2048)
	for len(buf) < max {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		want := min(cap(buf), max) - len(buf)
		n, err := unix.Read(fd, buf[len(buf):len(buf)+want])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		}
		buf = buf[:len(buf)+n]
		if n < want {
			break // end of file
		}
	}
	return buf, nil
}

// createPrivate creates path exclusively with perm, open for reading and
// writing, and returns its descriptor and identity.
func createPrivate(path string, perm os.FileMode) (int, fileID, error) {
	fd, err := openRetry(path, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC|unix.O_NOFOLLOW, perm)
	if err != nil {
		return -1, fileID{}, &os.PathError{Op: "open", Path: path, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, fileID{}, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	return fd, fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)}, nil
}

// writeFD writes data at the start of the file fd, and fsyncs it if sync
// is set.
func writeFD(fd int, data []byte, sync bool) error {
	var err error
	for off := 0; off < len(data) && err == nil; {
		var n int
		n, err = unix.Pwrite(fd, data[off:], int64(off))
		if err == unix.EINTR {
			err = nil
		}
		off += max(n, 0)
	}
	if err == nil && sync {
		err = unix.Fsync(fd)
	}
	if err != nil {
		return os.NewSyscallError("write", err)
	}
	return nil
}

// pathID returns the identity of the file at path.
func pathID(path string) (fileID, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return fileID{}, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)}, nil
}

func closeFD(fd int) { unix.Close(fd) }

func openRetry(path string, flags int, perm os.FileMode) (int, error) {
	for {
		fd, err := unix.Open(path, flags, uint32(perm.Perm()))
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// flockLinked is flockFile for a lock file that its holder may delete: it
// takes the flock, then checks that the file it locked is still the one at
// path, and starts again if the holder before it deleted it meanwhile.
func flockLinked(path string, perm os.FileMode) (unlock func(), err error) {
	for {
		fd, err := openLocked(path, perm)
		if err != nil {
			return nil, err
		}
		var locked, linked unix.Stat_t
		if err := unix.Fstat(fd, &locked); err != nil {
			unix.Close(fd)
			return nil, &os.PathError{Op: "fstat", Path: path, Err: err}
		}
		if unix.Lstat(path, &linked) == nil && locked.Dev == linked.Dev && locked.Ino == linked.Ino {
			return func() { unix.Close(fd) }, nil
		}
		unix.Close(fd)
	}
}
