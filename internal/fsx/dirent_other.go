//go:build !linux

package fsx

import (
	"io/fs"
	"os"
	"syscall"
)

// ReadDirIno lists dir and reports each entry's inode number. A link in
// dir's own place is refused, as on Linux.
func ReadDirIno(dir string) ([]DirEntry, error) {
	if info, err := os.Lstat(dir); err == nil && info.Mode()&fs.ModeSymlink != 0 {
		return nil, Unsafe(dir, info.Mode(), true)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := make([]DirEntry, 0, len(entries))
	for _, e := range entries {
		d := DirEntry{Name: e.Name(), Type: e.Type() & (fs.ModeDir | fs.ModeSymlink)}
		if e.Type()&^(fs.ModeDir|fs.ModeSymlink) != 0 {
			d.Type = fs.ModeIrregular | fs.ModeDevice
		}
		if info, err := e.Info(); err == nil {
			if st, ok := info.Sys().(*syscall.Stat_t); ok {
				d.Ino = uint64(st.Ino)
			}
		}
		out = append(out, d)
	}
	return out, nil
}

// ScanDir calls fn for each entry of dir, as ReadDirIno lists them.
func ScanDir(dir string, fn func(name []byte, ino uint64, typ fs.FileMode)) error {
	entries, err := ReadDirIno(dir)
	for _, e := range entries {
		fn([]byte(e.Name), e.Ino, e.Type)
	}
	return err
}

// ScanSmallDir is ScanDir (the Linux version takes a smaller buffer).
func ScanSmallDir(dir string, fn func(name []byte, ino uint64, typ fs.FileMode)) error {
	return ScanDir(dir, fn)
}
