package fsx

import (
	"encoding/binary"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// ReadDirIno lists dir with getdents64, so that each entry's inode number and
// type come without a stat call: on a board of 10,000 sessions that is the
// difference between a few milliseconds and tens of milliseconds.
func ReadDirIno(dir string) ([]DirEntry, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(fd)
	var out []DirEntry
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "getdents", Path: dir, Err: err}
		}
		if n <= 0 {
			return out, nil
		}
		out = parseDirents(buf[:n], out)
	}
}

// parseDirents decodes struct linux_dirent64 records: u64 ino, s64 off,
// u16 reclen, u8 type, NUL-terminated name.
func parseDirents(b []byte, out []DirEntry) []DirEntry {
	for len(b) >= 19 {
		ino := binary.NativeEndian.Uint64(b[0:8])
		reclen := int(binary.NativeEndian.Uint16(b[16:18]))
		if reclen < 19 || reclen > len(b) {
			break
		}
		typ := b[18]
		name := b[19:reclen]
		for i, c := range name {
			if c == 0 {
				name = name[:i]
				break
			}
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
		out = append(out, DirEntry{Name: string(name), Ino: ino, Type: mode})
	}
	return out
}
