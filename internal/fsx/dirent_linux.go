package fsx

import (
	"bytes"
	"encoding/binary"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// ReadDirIno lists dir with getdents64, so that each entry's inode number and
// type come without a stat call: on a board of 10,000 sessions that is the
// difference between a few milliseconds and tens of milliseconds.
func ReadDirIno(dir string) ([]DirEntry, error) {
	var out []DirEntry
	err := ScanDir(dir, func(name []byte, ino uint64, typ fs.FileMode) {
		out = append(out, DirEntry{Name: string(name), Ino: ino, Type: typ})
	})
	return out, err
}

// ScanDir calls fn for each entry of dir but "." and "..", with its name,
// inode number and type (as in DirEntry), in the order getdents64 returns
// them. The name is only valid during the call: nothing is allocated per
// entry, which is what lets next look at 10,000 names in a process that
// must start and exit in a few milliseconds.
//
// A link in dir's own place is not followed: that is an *UnsafePathError
// (a link higher up is, so dir+"/." lists a directory that is a link).
func ScanDir(dir string, fn func(name []byte, ino uint64, typ fs.FileMode)) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return linkError("open", dir, err)
	}
	defer unix.Close(fd)
	return scanFD(fd, dir, make([]byte, 32<<10), fn)
}

// ScanSmallDir is ScanDir for a directory of a few entries (a board's top,
// .pickup/): a small buffer, which a process that starts and exits in a
// few milliseconds does not have to zero and collect.
func ScanSmallDir(dir string, fn func(name []byte, ino uint64, typ fs.FileMode)) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return linkError("open", dir, err)
	}
	defer unix.Close(fd)
	return scanFD(fd, dir, make([]byte, 2<<10), fn)
}

func scanFD(fd int, dir string, buf []byte, fn func(name []byte, ino uint64, typ fs.FileMode)) error {
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return &os.PathError{Op: "getdents", Path: dir, Err: err}
		}
		if n <= 0 {
			return nil
		}
		parseDirents(buf[:n], fn)
	}
}

// parseDirents decodes struct linux_dirent64 records: u64 ino, s64 off,
// u16 reclen, u8 type, NUL-terminated name.
func parseDirents(b []byte, fn func(name []byte, ino uint64, typ fs.FileMode)) {
	for len(b) >= 19 {
		ino := binary.NativeEndian.Uint64(b[0:8])
		reclen := int(binary.NativeEndian.Uint16(b[16:18]))
		if reclen < 19 || reclen > len(b) {
			break
		}
		typ := b[18]
		name := b[19:reclen]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		b = b[reclen:]
		if len(name) == 0 || string(name) == "." || string(name) == ".." {
			continue
		}
		var mode fs.FileMode
		switch typ {
		case unix.DT_REG:
			mode = 0
		case unix.DT_DIR:
			mode = fs.ModeDir
		case unix.DT_LNK:
			mode = fs.ModeSymlink
		case unix.DT_UNKNOWN:
			mode = fs.ModeIrregular
		default:
			mode = fs.ModeIrregular | fs.ModeDevice
		}
		fn(name, ino, mode)
	}
}
