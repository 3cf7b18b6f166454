package sessions

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/pickup-dev/pickup/internal/fsx"
	"golang.org/x/sys/unix"
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
		sortSessions(list)
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
	sortSessions(all)
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
	sortSessions(list)
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
		if errors.Is(err, fs.ErrNotExist) {
			// An owner's directory went away, nothing failed yet, or a
			// clone lacks an empty state directory: nothing there.
			return nil, nil
		}
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	key := string(st)
	if owner != "" {
		key += "." + owner
	}
	cache := b.loadCache(key)
	out := make([]Session, 0, len(entries))
	var misses []int // where in out the files to read are
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
		out = append(out, Session{ID: id, State: st, Owner: owner, Path: path})
		misses = append(misses, len(out)-1)
	}
	read := readMisses(out, misses)
	if read < len(misses) {
		// Vanished, or not a regular file: not listed.
		out = slices.DeleteFunc(out, func(s Session) bool { return s.ID == "" })
	}
	if read > 0 || mostlyStale(cache.len(), len(out)) {
		b.saveCache(key, out)
	}
	return out, nil
}

// parallelMisses is how many files a listing must read before it reads
// them on several goroutines: below it, starting them costs more than it
// saves.
const parallelMisses = 64

// readMisses reads the files at out[i] for i in misses (placeholders with
// ID, State, Owner and Path), in place, and returns how many it read. A
// file it cannot read gets an empty ID. Many files are read on GOMAXPROCS
// goroutines: a cold listing of a big board is mostly system calls, which
// then run on every core; each goroutine reads into its own buffer.
func readMisses(out []Session, misses []int) int {
	workers := runtime.GOMAXPROCS(0)
	if len(misses) == 0 {
		return 0 // a warm listing: no buffer to allocate
	}
	if len(misses) <= parallelMisses || workers < 2 {
		return readSome(out, misses, nil)
	}
	var next atomic.Int64
	read := make([]int, workers)
	var wg sync.WaitGroup
	for w := range read {
		wg.Go(func() { read[w] = readSome(out, misses, &next) })
	}
	wg.Wait()
	total := 0
	for _, n := range read {
		total += n
	}
	return total
}

// readSome reads misses for readMisses: all of them if next is nil, else
// the ones it claims from next, one at a time.
func readSome(out []Session, misses []int, next *atomic.Int64) (read int) {
	buf, dec := make([]byte, headBufSize), newHeadDecoder()
	for k := 0; k < len(misses); k++ {
		if next != nil {
			if k = int(next.Add(1) - 1); k >= len(misses) {
				break
			}
		}
		p := &out[misses[k]]
		s, err := readSessionBuf(p.Path, buf, dec)
		if err != nil {
			p.ID = ""
			continue
		}
		s.ID, s.State, s.Owner = p.ID, p.State, p.Owner
		*p = s
		read++
	}
	return read
}

// readSession reads a session file's frontmatter. It refuses symlinks and
// anything but regular files, and reads only the frontmatter, however big
// the body is.
func readSession(path string) (Session, error) {
	return readSessionBuf(path, make([]byte, headBufSize), newHeadDecoder())
}

// readSessionBuf is readSession with buf (headBufSize bytes) for the first
// read, which usually holds the whole frontmatter, and dec to decode it. It
// makes four system calls (open, fstat, read, close): an *os.File would add
// an epoll registration attempt, a second fstat, and a cleanup to run,
// which a cold listing of 100,000 files feels.
func readSessionBuf(path string, buf []byte, dec *headDecoder) (Session, error) {
	fd, err := retryEINTR(func() (int, error) {
		return unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return Session{}, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if _, err := retryEINTR(func() (int, error) { return 0, unix.Fstat(fd, &st) }); err != nil {
		return Session{}, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return Session{}, fmt.Errorf("%s: not a regular file", path)
	}
	modTime := time.Unix(st.Mtim.Unix())
	s := Session{Path: path, size: st.Size, mtime: modTime.UnixNano(), ino: uint64(st.Ino)}
	// As ParseMeta, but the fdReader becomes an io.Reader (an allocation)
	// only when one read is not enough.
	n, rerr := fdReader{fd: fd, path: path}.Read(buf)
	head, first, herr, ok := scanHead(buf[:n], rerr == io.EOF)
	if !ok {
		head, first, herr = readHead(io.MultiReader(bytes.NewReader(buf[:n]), restAfter(fdReader{fd: fd, path: path}, rerr)))
	}
	m, perr := dec.meta(head, first, herr)
	if perr != nil {
		s.Problem = perr.Error()
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt = modTime.UTC()
	}
	s.Meta = m
	return s, nil
}

// fdReader reads a file descriptor as an *os.File would, errors included.
type fdReader struct {
	fd   int
	path string
}

func (r fdReader) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	n, err := retryEINTR(func() (int, error) { return unix.Read(r.fd, b) })
	switch {
	case err != nil:
		return 0, &fs.PathError{Op: "read", Path: r.path, Err: err}
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// retryEINTR calls f until it is not interrupted by a signal, as package
// os does.
func retryEINTR(f func() (int, error)) (int, error) {
	for {
		n, err := f()
		if err != unix.EINTR {
			return n, err
		}
	}
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
