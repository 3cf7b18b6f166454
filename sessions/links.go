package sessions

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/pickup-dev/pickup/internal/fsx"
)

// linkFindings reports every symbolic link in the board's own entries (its
// top files and directories, and everything below those directories), and
// every named pipe, socket or device where the board keeps a file of its
// own (its top files, .pickup/). Named pipes and the like inside state
// directories are Check's (stray files). Nothing is followed: a link is
// reported, never read through. Entries of the board's directory that are
// not the board's (a user's notes/) are not looked at.
func (b *Board) linkFindings() []Finding {
	var out []Finding
	_ = fsx.ScanDir(b.Dir+string(filepath.Separator)+".", func(name []byte, _ uint64, typ fs.FileMode) {
		kind := topKind(name)
		if kind == topNone {
			return
		}
		n := string(name)
		out = b.linkWalk(out, filepath.Join(b.Dir, n), n, kind, typ)
	})
	return out
}

// linkWalk looks at one entry (rel is its slash-separated path in the
// board; typ its dirent type) and, for a real directory, at everything in
// it.
func (b *Board) linkWalk(out []Finding, path, rel string, top topEntry, typ fs.FileMode) []Finding {
	if typ != 0 && typ != fs.ModeDir {
		info, err := os.Lstat(path)
		if err != nil {
			return out // gone since
		}
		typ = info.Mode().Type()
	}
	switch {
	case typ == fs.ModeDir:
		var subs []string
		var types []fs.FileMode
		_ = fsx.ScanDir(path, func(name []byte, _ uint64, t fs.FileMode) {
			if t == 0 {
				return // a regular file: nothing to say here
			}
			subs = append(subs, string(name))
			types = append(types, t)
		})
		for i, name := range subs {
			out = b.linkWalk(out, filepath.Join(path, name), rel+"/"+name, top, types[i])
		}
		return out
	case typ == 0:
		return out
	case typ == fs.ModeSymlink:
		target, _ := os.Readlink(path)
		return append(out, Finding{Kind: "symlink", Path: path, Message: linkMessage(rel, top, target)})
	}
	// A pipe, socket or device: the board's own files, and anything in
	// .pickup/, must be regular; in a state directory it is Check's stray.
	if top == topFile || top == topRuntime {
		err := fsx.Unsafe(path, typ, false)
		if ue, ok := err.(*UnsafePathError); ok {
			return append(out, Finding{Kind: ue.Kind(), Path: path,
				Message: ue.What[2:] + " where the board keeps a regular file: every command refuses the board until it is one (pickup never reads or waits on it); replace it with a regular file or remove it"})
		}
	}
	return out
}

// linkMessage says what a link at rel means to pickup.
func linkMessage(rel string, top topEntry, target string) string {
	to := fmt.Sprintf("symbolic link to %s", sanitizeTarget(target))
	parts := splitRel(rel)
	switch {
	case len(parts) == 1 && top == topFile:
		return to + " where the board keeps its own file: every command refuses the board until it is a regular file (pickup never reads or writes through links); replace the link with the file, or remove it"
	case len(parts) == 1:
		return to + " where the board keeps a directory of its own: every command refuses the board until it is a real directory (pickup never works through links); replace the link with the directory it points to, or remove it"
	case top == topRuntime && len(parts) == 2:
		return to + " directly in .pickup/: every command refuses the board until it is gone; .pickup/ holds only pickup's machine-local files, which it makes again: remove the link"
	case top == topRuntime:
		return to + " in .pickup/: refused wherever pickup would read or write through it; .pickup/ holds only pickup's machine-local files, which it makes again: remove the link"
	case len(parts) == 2 && parts[0] == string(Doing):
		return to + " in place of an owner's directory: never listed, reaped or followed, and that owner's commands refuse it; replace it with a real directory, or remove it"
	case len(parts) == 2:
		return to + " in a state directory: never listed, moved or followed; replace it with the session file itself"
	}
	return to + ": never listed, moved or followed"
}

// sanitizeTarget keeps a link's target printable: it comes from the
// repository, and doctor prints it.
func sanitizeTarget(s string) string {
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return fmt.Sprintf("%q", s)
}
