package sessions

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/pickup-dev/pickup/internal/fsx"
)

// List returns the sessions in the given states (all states if none), in
// board order within each state (see Compare). Entries are checked against
// the cache by inode, size and modification time, so a file edited in place
// is re-read.
func (b *Board) List(states ...State) ([]Session, error) {
	if len(states) == 0 {
		states = []State{Todo, Doing, Done, Failed}
	}
	var all []Session
	for _, st := range states {
		list, err := b.ListState(st, true)
		if err != nil {
			return nil, err
		}
		all = append(all, list...)
	}
	return all, nil
}

// ListState lists one state, ordered. With validate false, cached entries
// are trusted while their inode is unchanged (no stat per file, for next on
// big boards); call Refresh on a session before acting on its metadata.
func (b *Board) ListState(st State, validate bool) ([]Session, error) {
	if st != Doing {
		list, err := b.scan(st, "", validate)
		Sort(list)
		return list, err
	}
	owners, err := b.Owners()
	if err != nil {
		return nil, err
	}
	var all []Session
	for _, o := range owners {
		list, err := b.scan(Doing, o, validate)
		if err != nil {
			return nil, err
		}
		all = append(all, list...)
	}
	Sort(all)
	return all, nil
}

// ScanState lists one state in no particular order, trusting cached
// entries while their inode is unchanged: the fast listing next builds on.
// Call Refresh on a session before acting on its metadata.
func (b *Board) ScanState(st State) ([]Session, error) {
	if st == Doing {
		return b.ListState(st, false)
	}
	return b.scan(st, "", false)
}

// ListOwner lists the sessions that owner has claimed.
func (b *Board) ListOwner(owner string) ([]Session, error) {
	list, err := b.scan(Doing, owner, true)
	Sort(list)
	return list, err
}

// IsSessionName reports whether a directory entry name is a session file:
// "<valid id>.md". Dotfiles (including temporary files) never are.
func IsSessionName(name string) (id string, ok bool) {
	id, ok = strings.CutSuffix(name, ".md")
	if !ok || !validName(id) {
		return "", false
	}
	return id, true
}

func (b *Board) scan(st State, owner string, validate bool) ([]Session, error) {
	dir := b.StateDir(st, owner)
	entries, err := fsx.ReadDirIno(dir)
	if err != nil {
		if (st == Doing || st == Failed) && errors.Is(err, fs.ErrNotExist) {
			return nil, nil // an owner's directory went away, or nothing failed yet
		}
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	key := string(st)
	if owner != "" {
		key += "." + owner
	}
	cache := b.loadCache(key)
	out := make([]Session, 0, len(entries))
	misses := 0
	for _, e := range entries {
		id, ok := IsSessionName(e.Name)
		if !ok || e.Type&(fs.ModeDir|fs.ModeSymlink|fs.ModeDevice) != 0 {
			continue
		}
		path := dir + string(filepath.Separator) + e.Name
		if c, ok := cache.get(e.Name); ok && c.ino == e.Ino && e.Type == 0 {
			s := *c
			s.ID, s.State, s.Owner, s.Path = id, st, owner, path
			if !validate {
				out = append(out, s)
				continue
			}
			if info, err := os.Lstat(path); err == nil && info.Mode().IsRegular() && info.Size() == c.size && info.ModTime().UnixNano() == c.mtime {
				out = append(out, s)
				continue
			}
		}
		s, err := readSession(path)
		if err != nil {
			continue // vanished, or not a regular file
		}
		s.ID, s.State, s.Owner = id, st, owner
		out = append(out, s)
		misses++
	}
	if misses > 0 || cache.len() > len(out)+len(out)/2+16 {
		b.saveCache(key, out)
	}
	return out, nil
}

// readSession reads a session file's frontmatter. It refuses symlinks and
// anything but regular files, and reads only the frontmatter, however big
// the body is.
func readSession(path string) (Session, error) {
	f, err := openRegular(path)
	if err != nil {
		return Session{}, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return Session{}, err
	}
	s := Session{Path: path, size: info.Size(), mtime: info.ModTime().UnixNano()}
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		s.ino = uint64(st.Ino)
	}
	m, perr := ParseMeta(f)
	if perr != nil {
		s.Problem = perr.Error()
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt = info.ModTime().UTC()
	}
	s.Meta = m
	return s, nil
}

// Refresh re-reads s if its file changed since it was listed (size or
// modification time), for callers that listed without validation. It
// returns fs.ErrNotExist if the file is gone.
func (b *Board) Refresh(s Session) (Session, error) {
	info, err := os.Lstat(s.Path)
	if err != nil {
		return s, err
	}
	if info.Mode().IsRegular() && info.Size() == s.size && info.ModTime().UnixNano() == s.mtime && sameIno(info, s.ino) {
		return s, nil
	}
	fresh, err := readSession(s.Path)
	if err != nil {
		return s, err
	}
	fresh.ID, fresh.State, fresh.Owner = s.ID, s.State, s.Owner
	return fresh, nil
}

// Read returns the session at place p with its whole content. Like
// listing, it refuses symlinks and anything but a regular file.
func (b *Board) Read(p Place) (Session, []byte, error) {
	id, ok := IsSessionName(filepath.Base(p.Path))
	if !ok {
		return Session{}, nil, fmt.Errorf("%w: %s", ErrInvalidID, p.Path)
	}
	f, err := openRegular(p.Path)
	if err != nil {
		return Session{}, nil, err
	}
	defer f.Close()
	content, err := io.ReadAll(f)
	if err != nil {
		return Session{}, nil, err
	}
	s := Session{ID: id, State: p.State, Owner: p.Owner, Path: p.Path}
	m, perr := ParseMeta(bytes.NewReader(content))
	if perr != nil {
		s.Problem = perr.Error()
	}
	if m.CreatedAt.IsZero() {
		if info, err := f.Stat(); err == nil {
			m.CreatedAt = info.ModTime().UTC()
		}
	}
	s.Meta = m
	return s, content, nil
}

func openRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !info.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	return f, nil
}

// sameIno reports whether info is the file with inode ino (true where
// inode numbers are unknown).
func sameIno(info os.FileInfo, ino uint64) bool {
	st, ok := info.Sys().(*syscall.Stat_t)
	return !ok || ino == 0 || uint64(st.Ino) == ino
}
