package sessions

import (
	"io/fs"
	"os"
	"path/filepath"
)

// Files that hold process data (leases and lock records: process ids,
// boot ids, host names; the lock and guard files beside them) are created
// owner-only, 0600: other accounts on the machine have no business reading
// which processes work on what. A board that several accounts share as a
// group marks its .pickup/ directory setgid (chmod g+s), as group-shared
// directories usually are: there they are created 0660, so that the
// group's members can judge and take each other's leases and locks (the
// umask still applies: a group board wants umask 002).
const (
	privatePerm fs.FileMode = 0o600
	groupPerm   fs.FileMode = 0o660
)

// PrivatePerm returns the mode for files of process data in the board's
// .pickup/: 0600, or 0660 when .pickup/ is setgid. It costs one lstat, the
// first time.
func (b *Board) PrivatePerm() fs.FileMode {
	if p := b.perm.Load(); p != 0 {
		return fs.FileMode(p)
	}
	p := RuntimePerm(b.Dir)
	b.perm.Store(uint32(p))
	return p
}

// RuntimePerm is PrivatePerm for the board at dir, asked afresh.
func RuntimePerm(dir string) fs.FileMode {
	info, err := os.Lstat(filepath.Join(dir, RuntimeDirName))
	if err == nil && info.IsDir() && info.Mode()&fs.ModeSetgid != 0 {
		return groupPerm
	}
	return privatePerm
}
