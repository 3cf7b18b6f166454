package sessions

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/pickup-dev/pickup/internal/fsx"
	"golang.org/x/sys/unix"
)

// A fresh lineup lets a one-shot `pickup next` skip reading todo/. Reading
// a directory of 10,000 entries is most of what such a process costs, and
// only priority order and "nothing available" depend on it: who gets a
// session is decided by the no-replace rename, and a session gone since is
// skipped. So a full listing that the listing cache answered leaves a
// stamp, .pickup/cache/todo.seen.v5, naming the cache's token and when the
// listing began; for snapshotAge after that, PeekFresh walks the cache's
// lines in board order and lstats only the first few sessions instead.
//
// The stamp's rule, what keeps it honest:
//
//   - A lister puts an empty (pending) stamp in place before it reads the
//     directory and writes its content through the descriptor it kept. A
//     stamp removed meanwhile keeps its content to itself.
//   - Whatever pickup puts in todo/ (new, release, reopen, requeue, reap,
//     doctor, sync) calls Arrived afterwards, which removes the stamp unless
//     the cache it names already holds the session's line, same inode,
//     size and modification time: a session released unchanged is found
//     in its place by the walk.
//   - A file that arrives otherwise (copied by hand, a plain git pull) is
//     seen by the first listing that begins after it: at most snapshotAge
//     late.
//   - Nothing is ever "nothing available" from a stamp: PeekFresh reports
//     false when the walk finds nothing, and the caller lists todo/.

// snapshotAge is how long a one-shot next trusts a full listing of todo/
// made by any process (see PeekFresh).
const snapshotAge = time.Second

// lineupAge is b.LineupAge, its default applied.
func (b *Board) lineupAge() time.Duration {
	if b.LineupAge == 0 {
		return snapshotAge
	}
	return b.LineupAge
}

// freshSkip is how many lines of sessions gone since a walk passes before
// it gives up for a full listing, which drops them from the cache.
const freshSkip = 64

const stampMagic = "pickup-seen 1 "

func (b *Board) stampPath(st State) string { return b.cachePath(string(st) + ".seen") }

// stamp is a pending stamp: begun before a listing, written after it.
type stamp struct {
	fd int
	t0 time.Time
}

// beginStamp puts a pending stamp for st in place (nil if it cannot: the
// listing then leaves none).
func (b *Board) beginStamp(st State) *stamp {
	t0 := time.Now()
	path := b.stampPath(st)
	tmp := filepath.Join(filepath.Dir(path), "."+string(st)+".seen."+strconv.Itoa(os.Getpid())+"."+strconv.FormatInt(t0.UnixNano(), 36))
	fd, err := unix.Open(tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o644)
	if err != nil {
		return nil
	}
	if err := unix.Rename(tmp, path); err != nil {
		unix.Close(fd)
		_ = unix.Unlink(tmp)
		return nil
	}
	return &stamp{fd: fd, t0: t0}
}

// finish writes the stamp for a listing that the cache with token answered
// in full; done drops it. Both are safe on a nil stamp.
func (s *stamp) finish(token uint64) {
	if s == nil {
		return
	}
	buf := make([]byte, 0, 64)
	buf = append(buf, stampMagic...)
	buf = strconv.AppendInt(buf, s.t0.UnixNano(), 10)
	buf = append(buf, ' ')
	buf = appendHex16(buf, token)
	buf = append(buf, '\n')
	_, _ = unix.Pwrite(s.fd, buf, 0)
}

func (s *stamp) done() {
	if s != nil {
		unix.Close(s.fd)
	}
}

// readStamp returns the token and start of st's stamp, and false if there
// is none, it is pending, or it cannot be read.
func (b *Board) readStamp(st State) (token uint64, t0 time.Time, ok bool) {
	var buf [96]byte
	fd, err := unix.Open(b.stampPath(st), unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return 0, t0, false
	}
	n, err := unix.Read(fd, buf[:])
	unix.Close(fd)
	if err != nil || n <= 0 {
		return 0, t0, false
	}
	line, ok := bytes.CutPrefix(buf[:n], []byte(stampMagic))
	if !ok || len(line) == 0 || line[len(line)-1] != '\n' {
		return 0, t0, false
	}
	ns, hex, ok := bytes.Cut(line[:len(line)-1], []byte(" "))
	nsec, err := strconv.ParseInt(string(ns), 10, 64)
	if !ok || err != nil {
		return 0, t0, false
	}
	token, ok = parseHex16(hex)
	return token, time.Unix(0, nsec), ok
}

// MarkChanged drops st's stamp: the next one-shot next lists st in full.
func (b *Board) MarkChanged(st State) {
	_ = unix.Unlink(b.stampPath(st))
}

// Arrived is called after pickup put the file at path in todo/: it drops
// the stamp unless the cache the stamp names already describes that file
// as it is (a session released unchanged), so that the next next sees it
// in its place without waiting for the stamp to age.
func (b *Board) Arrived(path string) {
	if filepath.Clean(filepath.Dir(path)) != filepath.Clean(b.StateDir(Todo, "")) {
		return // not an arrival in todo/
	}
	if !b.describes(filepath.Base(path), path) {
		b.MarkChanged(Todo)
	}
}

// describes reports whether todo's stamp is complete, names the cache in
// place, that cache has a line for name matching the file at path, and the
// stamp was not replaced while it looked.
func (b *Board) describes(name, path string) bool {
	var before, after unix.Stat_t
	if unix.Stat(b.stampPath(Todo), &before) != nil {
		return true // no stamp: nothing to drop
	}
	token, _, ok := b.readStamp(Todo)
	if !ok {
		return false
	}
	var file unix.Stat_t
	if unix.Lstat(path, &file) != nil || file.Mode&unix.S_IFMT != unix.S_IFREG {
		return false
	}
	data, release, err := fsx.MapFile(b.cachePath(string(Todo)))
	if err != nil {
		return false
	}
	defer release()
	header, lines, _ := bytes.Cut(data, []byte("\n"))
	if t, ok := parseCacheHeader(header); !ok || t != token {
		return false
	}
	key := make([]byte, 0, len(name)+2)
	key = append(append(append(key, '\n'), name...), '\t')
	at := 0
	if !bytes.HasPrefix(lines, key[1:]) {
		if at = bytes.Index(lines, key); at < 0 {
			return false
		}
		at++
	}
	line := lines[at:]
	if end := bytes.IndexByte(line, '\n'); end >= 0 {
		line = line[:end]
	}
	_, s, ok := parseCacheLine(string(line))
	if !ok || s.ino != file.Ino || s.size != file.Size || s.mtime != time.Unix(file.Mtim.Unix()).UnixNano() {
		return false
	}
	return unix.Stat(b.stampPath(Todo), &after) == nil && after.Ino == before.Ino
}

// PeekFresh is PeekMatching from a stamp younger than b.LineupAge, without
// reading the directory: the first n sessions that f matches, in board
// order, among the lines of the cache the stamp names whose files are
// still there with the line's inode. It reports false when it cannot
// answer (no fresh stamp, a line whose file was replaced, too many lines of
// sessions gone since) and when it finds none: the caller lists then.
func (b *Board) PeekFresh(st State, n int, f TagFilter) ([]Session, bool) {
	maxAge := b.lineupAge()
	if st == Doing || maxAge <= 0 {
		return nil, false
	}
	token, t0, ok := b.readStamp(st)
	if age := time.Since(t0); !ok || age < 0 || age >= maxAge {
		return nil, false
	}
	data, release, err := fsx.MapFile(b.cachePath(string(st)))
	if err != nil {
		return nil, false
	}
	defer release()
	header, rest, _ := bytes.Cut(data, []byte("\n"))
	if t, ok := parseCacheHeader(header); !ok || t != token {
		return nil, false
	}
	dir := b.StateDir(st, "")
	m := f.lineMatcher()
	path := make([]byte, 0, len(dir)+64)
	var first []Session
	gone := 0
	for len(rest) > 0 && len(first) < n {
		var line []byte
		line, rest, _ = bytes.Cut(rest, []byte("\n"))
		name, ino, ok := cacheLineKey(line)
		if !ok || !isSessionName(name) || !m.match(line) {
			continue
		}
		path = append(append(append(path[:0], dir...), filepath.Separator), name...)
		var fi unix.Stat_t
		err := unix.Lstat(string(path), &fi)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if gone++; gone > freshSkip {
				return nil, false
			}
			continue
		case err != nil, fi.Mode&unix.S_IFMT != unix.S_IFREG, fi.Ino != ino:
			return nil, false // replaced or odd: a listing decides
		}
		s, ok := decodeCacheLine(dir, st, name, line)
		if !ok {
			return nil, false
		}
		first = append(first, s)
	}
	return first, len(first) > 0
}

// leadingStale is how many lines of sessions gone since may precede the
// first present one before a listing drops them from the cache: else every
// walk of a board being drained would pass them again.
const leadingStale = freshSkip / 2

// restamp finishes a listing that the cache data answered in full, whose
// first present line starts at offset first: it drops leading lines of
// sessions gone since from the cache when there are many, and writes the
// stamp for what is then in place.
func (b *Board) restamp(st State, s *stamp, data []byte, first int) {
	if s == nil {
		return
	}
	header, lines, _ := bytes.Cut(data, []byte("\n"))
	token, ok := parseCacheHeader(header)
	if !ok {
		return
	}
	skip := first - (len(header) + 1)
	if skip > 0 && bytes.Count(lines[:skip], []byte("\n")) > leadingStale {
		buf := appendCacheHeader(make([]byte, 0, len(data)-skip+40))
		token, _ = parseCacheHeader(buf[:len(buf)-1])
		buf = append(buf, data[first:]...)
		b.writeCache(string(st), buf)
	}
	s.finish(token)
}
