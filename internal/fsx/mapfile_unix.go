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
func MapFile(path string) (data []byte, release func(), err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	size := info.Size()
	if size == 0 || !info.Mode().IsRegular() {
		data, err := os.ReadFile(path)
		return data, func() {}, err
	}
	if int64(int(size)) != size {
		return nil, nil, &os.PathError{Op: "mmap", Path: path, Err: unix.EFBIG}
	}
	data, err = unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, &os.PathError{Op: "mmap", Path: path, Err: err}
	}
	return data, func() { _ = unix.Munmap(data) }, nil
}
