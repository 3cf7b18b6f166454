package gitremote

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"github.com/pickup-dev/pickup/internal/arbiter"
	"github.com/pickup-dev/pickup/internal/gitx"
	"golang.org/x/sys/unix"
)

// ErrDiskFull: a transition could not be made because the disk that holds
// the clone is full (ENOSPC) or the user's quota is used up (EDQUOT). The
// local move was undone. It comes as a *DiskFullError.
var ErrDiskFull = arbiter.ErrDiskFull

// DiskFullError is a full disk met during a transition of a shared board.
type DiskFullError struct {
	Path string // where the write failed
	Err  error
}

func (e *DiskFullError) Error() string {
	return fmt.Sprintf("%v: %s: %v", ErrDiskFull, e.Path, e.Err)
}

func (e *DiskFullError) Unwrap() []error { return []error{ErrDiskFull, e.Err} }

// Hint says what to do.
func (e *DiskFullError) Hint() string {
	return fmt.Sprintf("nothing was moved on the shared board, here or on the remote: free space on the disk that holds %s and run it again", e.Path)
}

// diskFull returns err as a *DiskFullError if a write failed for want of
// space, in this process (ENOSPC, EDQUOT) or in a git it ran (its
// message), else nil. where names the place when err does not.
func diskFull(err error, where string) *DiskFullError {
	if err == nil {
		return nil
	}
	var de *DiskFullError
	if errors.As(err, &de) {
		return de
	}
	var cause error
	var ge *gitx.Error
	switch {
	case errors.Is(err, syscall.ENOSPC):
		cause = syscall.ENOSPC
	case errors.Is(err, syscall.EDQUOT):
		cause = syscall.EDQUOT
	case errors.As(err, &ge) && (strings.Contains(ge.Stderr, "No space left on device") || strings.Contains(ge.Stderr, "Disk quota exceeded")):
		cause = errors.New(ge.Summary())
	case errors.As(err, &ge) && strings.Contains(ge.Stderr, "write") && noRoom(where):
		// git does not always say why a write failed ("cannot update
		// ref …: couldn't write '….lock'"): the disk says it.
		cause = fmt.Errorf("%s (the disk has no room left)", ge.Summary())
	default:
		return nil
	}
	path := where
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		path = pe.Path
	case errors.As(err, &le):
		path = le.New
	}
	return &DiskFullError{Path: path, Err: cause}
}

// noRoom reports whether the filesystem that holds path has (almost) no
// room left for this user: less than 64 KiB, or no inode.
// localWriteFailed reports whether err is a git command that failed
// writing a file of the local repository (a ref's .lock, an object): a
// local failure, not the remote's, even when the disk no longer looks
// full by the time pickup looks (the space was freed meanwhile).
func localWriteFailed(err error) bool {
	var ge *gitx.Error
	if !errors.As(err, &ge) {
		return false
	}
	msg := strings.ToLower(ge.Stderr)
	return strings.Contains(msg, ".lock'") && (strings.Contains(msg, "write") || strings.Contains(msg, "unable to create")) ||
		strings.Contains(msg, "unable to write") || strings.Contains(msg, "failed to write")
}

func noRoom(path string) bool {
	var st unix.Statfs_t
	if path == "" || unix.Statfs(path, &st) != nil {
		return false
	}
	return uint64(st.Bavail)*uint64(st.Bsize) < 64<<10 || (st.Files > 0 && st.Ffree == 0)
}
