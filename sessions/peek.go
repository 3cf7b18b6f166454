package sessions

import (
	"bytes"
	"hash/maphash"
	"io/fs"
	"path/filepath"

	"github.com/pickup-dev/pickup/internal/fsx"
)

// Peek returns the first n sessions of state st (Todo, Done or Failed) in
// board order, and how many more the directory holds, reading only the
// directory and the listing cache: no session file is opened, and nothing is
// allocated per session but the n returned. This is what keeps `pickup next`
// on a board of 10,000 sessions within a few milliseconds, where a full
// listing would allocate and order all of them.
//
// ok is false when the cache cannot answer: it is missing or unreadable, or
// the directory holds a file it does not describe (a new session, or one
// replaced since). Call ScanState then, which reads what the cache lacks and
// rewrites it. Like ScanState, Peek trusts an entry while its name still
// has the same inode; call Refresh on a session before acting on its
// metadata.
func (b *Board) Peek(st State, n int) (first []Session, more int, ok bool) {
	if st == Doing {
		return nil, 0, false
	}
	data, release, err := fsx.MapFile(b.cachePath(string(st)))
	if err != nil {
		return nil, 0, false
	}
	defer release()
	dir := b.StateDir(st, "")
	matched, ok := b.walkCache(st, data, false, func(name, line []byte) bool {
		if len(first) == n {
			return true
		}
		s, ok := decodeCacheLine(dir, st, name, line)
		if !ok {
			return false
		}
		first = append(first, s)
		return true
	})
	if !ok {
		return nil, 0, false
	}
	return first, matched - len(first), true
}

// walkCache calls each, in board order, with the file name and the line of
// every line of the listing cache data (of state st) whose file is in st's
// directory with the inode the line gives. It reports how many lines
// matched, and false if the cache cannot answer for the directory: a
// session file without its line, an entry whose type the directory does
// not report, a cache of the wrong format, each returning false (a line it
// cannot decode), or, unless stale is true, a cache that is mostly lines of
// sessions gone since. Only the directory is read: no session file is
// opened.
func (b *Board) walkCache(st State, data []byte, stale bool, each func(name, line []byte) bool) (matched int, ok bool) {
	header, lines, _ := bytes.Cut(data, []byte("\n"))
	if _, ok := parseCacheHeader(header); !ok {
		return 0, false
	}
	// The directory cannot hold more sessions than the cache has lines if
	// the cache is to answer, which sizes the set once.
	present := newNameSet(bytes.Count(lines, []byte("\n")))
	err := fsx.ScanDir(b.StateDir(st, ""), func(name []byte, ino uint64, typ fs.FileMode) {
		if !isSessionName(name) || typ&(fs.ModeDir|fs.ModeSymlink|fs.ModeDevice) != 0 {
			return // scan skips these too
		}
		if typ != 0 {
			present.unknown++ // type not reported: scan would read the file
			return
		}
		present.add(name, ino)
	})
	if err != nil || present.unknown > 0 || present.overflow {
		return 0, false
	}
	if !stale && mostlyStale(present.max, present.len) {
		// Mostly lines of sessions gone since: let the listing rewrite
		// the cache (by scan's rule) rather than skip them on every call.
		return 0, false
	}
	if present.len == 0 {
		return 0, true
	}
	// One pass over the cache, in board order: every present file must
	// have its line, else the cache cannot answer.
	for rest := lines; len(rest) > 0; {
		var line []byte
		line, rest, _ = bytes.Cut(rest, []byte("\n"))
		name, ino, found := cacheLineKey(line)
		if !found || !present.take(name, ino) {
			continue // gone since the cache was written, or malformed
		}
		matched++
		if !each(name, line) {
			return 0, false
		}
	}
	return matched, matched == present.len
}

// mostlyStale reports whether a cache of lines lines, of which only present
// describe files still there, is worth rewriting: by the rule a listing
// follows, when over a third of its lines are stale.
func mostlyStale(lines, present int) bool { return lines > present+present/2+16 }

// decodeCacheLine decodes the cache line of file name in st's directory
// dir. name must be a session file's name (walkCache matched it against
// the directory).
func decodeCacheLine(dir string, st State, name, line []byte) (Session, bool) {
	_, s, ok := parseCacheLine(string(line))
	if !ok {
		return Session{}, false
	}
	id, _ := bytes.CutSuffix(name, []byte(".md"))
	s.ID = string(id)
	s.State, s.Path = st, dir+string(filepath.Separator)+string(name)
	return s, true
}

// cacheLineKey returns the file name and inode of a cache line, without
// decoding the rest of it.
func cacheLineKey(line []byte) (name []byte, ino uint64, ok bool) {
	if bytes.Count(line, []byte("\t")) != cacheFields-1 {
		return nil, 0, false // not a line loadCache would accept
	}
	name, rest, ok := bytes.Cut(line, []byte("\t"))
	if !ok || len(name) == 0 {
		return nil, 0, false
	}
	field, _, ok := bytes.Cut(rest, []byte("\t"))
	if !ok || len(field) == 0 || len(field) > 20 {
		return nil, 0, false
	}
	for _, c := range field {
		if c < '0' || c > '9' {
			return nil, 0, false
		}
		next := ino*10 + uint64(c-'0')
		if next/10 != ino {
			return nil, 0, false // overflow
		}
		ino = next
	}
	return name, ino, true
}

// nameSet is a set of (file name, inode) pairs held as 64-bit hashes in an
// open-addressing table of fixed capacity: a directory of 10,000 entries
// costs one 128 KiB slice instead of 10,000 strings and a map. Two
// different pairs share a hash with odds of about n²/2⁶⁴; should it happen,
// Peek miscounts and one call of next may miss a session, never claim one
// twice (a claim is a rename of the file itself).
type nameSet struct {
	seed     maphash.Seed
	slots    []uint64 // 0: empty; else the key, with bit 0 set once taken
	len, max int
	overflow bool // more than max pairs were added
	unknown  int  // entries whose type the directory did not report
}

// newNameSet returns a set for at most max pairs, at most two thirds full
// so that probe sequences stay short.
func newNameSet(max int) *nameSet {
	size := 16
	for size < max+max/2+1 {
		size *= 2
	}
	return &nameSet{seed: maphash.MakeSeed(), slots: make([]uint64, size), max: max}
}

func (s *nameSet) key(name []byte, ino uint64) uint64 {
	// Bit 1 always set keeps a key from ever being 0 (an empty slot);
	// bit 0 is the taken mark.
	return (maphash.Bytes(s.seed, name)^(ino*0x9e3779b97f4a7c15))&^1 | 2
}

func (s *nameSet) add(name []byte, ino uint64) {
	if s.len == s.max {
		s.overflow = true
		return
	}
	k := s.key(name, ino)
	mask := uint64(len(s.slots) - 1)
	for i := k & mask; ; i = (i + 1) & mask {
		switch s.slots[i] &^ 1 {
		case 0:
			s.slots[i] = k
			s.len++
			return
		case k:
			return // a directory never lists a name twice, but be safe
		}
	}
}

// take reports whether the pair is in the set and not yet taken, and marks
// it taken, so that a cache line repeated by mistake counts once.
func (s *nameSet) take(name []byte, ino uint64) bool {
	k := s.key(name, ino)
	mask := uint64(len(s.slots) - 1)
	for i := k & mask; s.slots[i] != 0; i = (i + 1) & mask {
		if s.slots[i]&^1 == k {
			if s.slots[i]&1 != 0 {
				return false
			}
			s.slots[i] |= 1
			return true
		}
	}
	return false
}
