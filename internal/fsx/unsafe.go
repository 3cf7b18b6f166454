package fsx

import (
	"errors"
	"io/fs"
	"os"
)

// A board lives in a repository that anyone may have written, and a
// repository can commit a symbolic link: events.log -> ../../../.bashrc, or
// doing/ -> /somewhere/else. Following such a link would let the repository
// decide where pickup writes, and what it prints into an agent's context.
// So the files of a board are opened with O_NOFOLLOW (and O_NONBLOCK, so
// that a named pipe cannot hang the opener), its directories are checked to
// be real directories, and anything else is refused with an
// *UnsafePathError.

// ErrUnsafe matches every *UnsafePathError.
var ErrUnsafe = errors.New("unsafe path")

// UnsafePathError reports a path that pickup will not read or write
// through: a symbolic link, or a named pipe, socket or device (or a file
// where a directory belongs) where it keeps a file or directory of its own.
type UnsafePathError struct {
	Path string
	// What it is instead: "a symbolic link", "a named pipe", "a socket",
	// "a device", "not a directory" or "not a regular file".
	What string
	// Target is a link's target, as the link says it.
	Target string
}

func (e *UnsafePathError) Error() string {
	s := e.Path + " is " + e.What
	if e.Target != "" {
		s += " (to " + e.Target + ")"
	}
	return s + "; pickup never reads or writes through links, pipes or devices there"
}

func (e *UnsafePathError) Unwrap() error { return ErrUnsafe }

// Hint says what to do about it. It never suggests touching the target.
func (e *UnsafePathError) Hint() string {
	if e.What == "a symbolic link" {
		return "replace the link with the real file or directory (or remove it; that removes only the link), then run the command again; `pickup doctor` lists every link on a board"
	}
	return "replace it with a regular file or directory (or remove it), then run the command again; `pickup doctor` lists every such file on a board"
}

// Kind is a short name for what the path is, for doctor's findings:
// symlink, fifo, socket, device, notdir or irregular.
func (e *UnsafePathError) Kind() string {
	switch e.What {
	case "a symbolic link":
		return "symlink"
	case "a named pipe":
		return "fifo"
	case "a socket":
		return "socket"
	case "a device":
		return "device"
	case "not a directory":
		return "notdir"
	}
	return "irregular"
}

// Unsafe returns the *UnsafePathError for path, whose mode (from lstat) is
// mode, when a regular file (dir false) or a directory (dir true) belongs
// there; nil when it is one.
func Unsafe(path string, mode fs.FileMode, dir bool) error {
	t := mode.Type()
	switch {
	case dir && t == fs.ModeDir, !dir && t == 0:
		return nil
	case t == fs.ModeSymlink:
		target, _ := os.Readlink(path)
		return &UnsafePathError{Path: path, What: "a symbolic link", Target: target}
	case t == fs.ModeNamedPipe:
		return &UnsafePathError{Path: path, What: "a named pipe"}
	case t == fs.ModeSocket:
		return &UnsafePathError{Path: path, What: "a socket"}
	case t&fs.ModeDevice != 0:
		return &UnsafePathError{Path: path, What: "a device"}
	case dir:
		return &UnsafePathError{Path: path, What: "not a directory"}
	}
	return &UnsafePathError{Path: path, What: "not a regular file"}
}

// CheckDir reports an *UnsafePathError if path is there but is not a real
// directory (a link to one included), nil if it is one or is missing (a
// directory pickup makes is a real one). It costs one lstat.
func CheckDir(path string) error {
	info, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return Unsafe(path, info.Mode(), true)
}

// explain turns the error of an open with O_NOFOLLOW|O_NONBLOCK into an
// *UnsafePathError when that is what it means: ELOOP (EMLINK on the BSDs)
// for a link, ENXIO for a named pipe without a reader opened for writing,
// and ENOTDIR or EISDIR for the wrong kind of file. It asks lstat, since
// ELOOP also means too many links in a path. Other errors, and errors it
// cannot confirm, are returned as they are.
func explain(op, path string, errno error, dir bool) error {
	perr := &os.PathError{Op: op, Path: path, Err: errno}
	if !mayBeUnsafe(errno) {
		return perr
	}
	info, err := os.Lstat(path)
	if err != nil {
		return perr
	}
	if uerr := Unsafe(path, info.Mode(), dir); uerr != nil {
		return uerr
	}
	return perr
}

// linkError is explain for an open with O_DIRECTORY|O_NOFOLLOW, which
// fails with ENOTDIR (Linux) or ELOOP for a link: only a link becomes an
// *UnsafePathError; a file that is not a directory keeps its ENOTDIR.
func linkError(op, path string, errno error) error {
	perr := &os.PathError{Op: op, Path: path, Err: errno}
	if !mayBeUnsafe(errno) {
		return perr
	}
	if info, err := os.Lstat(path); err == nil && info.Mode()&fs.ModeSymlink != 0 {
		return Unsafe(path, info.Mode(), true)
	}
	return perr
}
