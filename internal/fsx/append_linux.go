package fsx

import "golang.org/x/sys/unix"

// AppendIsAtomic reports whether the filesystem holding the open file fd
// is one where a write(2) to a file opened O_APPEND moves the offset to the
// end and writes in one atomic step, so that lines appended at once by any
// number of processes, one write each, never interleave or overwrite one
// another: the local filesystems that take the inode's lock around the
// whole write (ext2/3/4, XFS, Btrfs, tmpfs). Elsewhere (NFS above all,
// where write(2) documents that O_APPEND may corrupt the file) appenders
// must take a lock around each write, and so does anyone when the answer
// is unknown.
func AppendIsAtomic(fd int) bool {
	var st unix.Statfs_t
	if err := unix.Fstatfs(fd, &st); err != nil {
		return false
	}
	switch uint32(st.Type) {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC, unix.TMPFS_MAGIC:
		return true
	}
	return false
}
