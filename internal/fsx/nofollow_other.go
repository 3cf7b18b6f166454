//go:build !unix

package fsx

import (
	"os"
)

// NoFollow is 0 where open(2) has no O_NOFOLLOW: ReadRegular and
// OpenRegular ask lstat first instead, which leaves a small window.
const NoFollow = 0

func mayBeUnsafe(errno error) bool { return false }

// Explain wraps err as an *os.PathError.
func Explain(op, path string, err error, dir bool) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe
	}
	return &os.PathError{Op: op, Path: path, Err: err}
}

// ReadRegular reads the whole of path, which must be a regular file.
func ReadRegular(path string) ([]byte, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	buf := make([]byte, info.Size())
	n, err := f.ReadAt(buf, 0)
	if n == len(buf) {
		err = nil
	}
	return buf[:n], err
}

// OpenRegular opens path for reading if it is a regular file.
func OpenRegular(path string) (*os.File, error) {
	info, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if err := Unsafe(path, info.Mode(), false); err != nil {
		return nil, err
	}
	return os.Open(path)
}
