//go:build unix

package fsx

import (
	"os"

	"golang.org/x/sys/unix"
)

// MapFile returns the content of a file as read-only memory shared with the
// page cache, and a function that releases it. Reading a cache of 1 MB this
// way costs a handful of page faults instead of copying it into 256 freshly
// faulted heap pages, which in a short-lived process is most of the cost.
//
// The memory must not be used after release, and the file must not be
// truncated while it is mapped (that would fault): map only files that are
// replaced by rename, never rewritten in place, such as those WriteReplace
// makes.
//
// Like ReadRegular, it refuses a link, named pipe or device in path's place.
// Raw system calls (open, fstat, mmap, close): an os.File would add a poller
// registration attempt and a second fstat on the path of every next.
func MapFile(path string) (data []byte, release func(), err error) {
	fd, err := openRetry(path, unix.O_RDONLY|unix.O_CLOEXEC|NoFollow)
	if err != nil {
		return nil, nil, explain("open", path, err, false)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, nil, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	if uint32(st.Mode)&unix.S_IFMT != unix.S_IFREG {
		return nil, nil, Unsafe(path, modeOf(uint32(st.Mode)), false)
	}
	size := st.Size
	if size == 0 {
		return nil, func() {}, nil
	}
	if int64(int(size)) != size {
		return nil, nil, &os.PathError{Op: "mmap", Path: path, Err: unix.EFBIG}
	}
	data, err = unix.Mmap(fd, 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, &os.PathError{Op: "mmap", Path: path, Err: err}
	}
	return data, func() { _ = unix.Munmap(data) }, nil
}
