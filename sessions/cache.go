package sessions

import (
	"bytes"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pickup-dev/pickup/internal/fsx"
)

// The listing cache keeps, per state directory, what ordering and listing
// need from each file's frontmatter, so that next on a board of 10,000
// sessions reads one small file instead of 10,000 session heads. It is only
// a cache: it is rewritten atomically, any process may replace it, losing it
// costs one full read, and a line that cannot be parsed is ignored.
//
// Format: a header line ("pickup-cache 5 " and a token of 16 hex digits,
// new at every write, which a listing's stamp names: see lineup_fresh.go),
// then one line per session with tab-separated
// fields: name, inode, mtime (ns), size, priority, created_at (Unix
// "seconds.nanoseconds": a count of nanoseconds only covers 1678 to 2262),
// attempts, title, tags, depends_on, problem. Text fields escape backslash,
// tab and newline; lists are joined with \x1f. Lines are in board order
// (Compare), so that next can take the first present entries without
// decoding the rest (see Peek).
const cacheHeader = "pickup-cache 5"

// cacheFields is the number of tab-separated fields of an entry line.
const cacheFields = 11

// dependsField is the index of depends_on among them.
const dependsField = 9

// cacheVersion names the files of this format, so that pickup binaries of
// two formats on one board (an upgrade, a before/after benchmark) each keep
// their own cache instead of rewriting each other's on every call.
const cacheVersion = ".v5"

func (b *Board) cachePath(key string) string {
	return filepath.Join(b.RuntimeDir(), "cache", key+cacheVersion)
}

// cacheIndex is a loaded cache: its entries, and their index by file name.
type cacheIndex struct {
	entries []Session
	byName  map[string]int32
}

func (c *cacheIndex) get(name string) (*Session, bool) {
	if c == nil {
		return nil, false
	}
	i, ok := c.byName[name]
	if !ok {
		return nil, false
	}
	return &c.entries[i], true
}

func (c *cacheIndex) len() int {
	if c == nil {
		return 0
	}
	return len(c.entries)
}

func (b *Board) loadCache(key string) *cacheIndex {
	data, err := fsx.ReadRegular(b.cachePath(key))
	if err != nil {
		return nil
	}
	// One string for the whole file: every field is a substring of it.
	text := string(data)
	header, rest, ok := strings.Cut(text, "\n")
	if _, hok := parseCacheHeader([]byte(header)); !ok || !hok {
		return nil
	}
	n := strings.Count(rest, "\n")
	c := &cacheIndex{entries: make([]Session, 0, n), byName: make(map[string]int32, n)}
	for len(rest) > 0 {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		name, s, ok := parseCacheLine(line)
		if !ok {
			continue
		}
		c.byName[name] = int32(len(c.entries))
		c.entries = append(c.entries, s)
	}
	return c
}

// parseCacheLine decodes one entry line of the cache, which names a file
// by its base name.
func parseCacheLine(line string) (name string, s Session, ok bool) {
	var fields [cacheFields]string
	if !splitFields(line, fields[:]) {
		return "", s, false
	}
	var err1, err2, err3, err4, err5, err6 error
	s.ino, err1 = strconv.ParseUint(fields[1], 10, 64)
	s.mtime, err2 = strconv.ParseInt(fields[2], 10, 64)
	s.size, err3 = strconv.ParseInt(fields[3], 10, 64)
	prio, err4 := strconv.Atoi(fields[4])
	s.CreatedAt, err5 = parseUnix(fields[5])
	s.Attempts, err6 = strconv.Atoi(fields[6])
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || err5 != nil || err6 != nil || prio < int(High) || prio > int(Low) {
		return "", s, false
	}
	s.Priority = Priority(prio)
	s.Title = unescape(fields[7])
	s.Tags = splitList(fields[8])
	s.DependsOn = splitList(fields[dependsField])
	s.Problem = unescape(fields[10])
	return fields[0], s, true
}

func parseUnix(s string) (time.Time, error) {
	sec, nsec, ok := strings.Cut(s, ".")
	if !ok {
		return time.Time{}, strconv.ErrSyntax
	}
	a, err := strconv.ParseInt(sec, 10, 64)
	if err != nil {
		return time.Time{}, err
	}
	b, err := strconv.ParseInt(nsec, 10, 64)
	if err != nil || b < 0 || b >= 1e9 {
		return time.Time{}, strconv.ErrSyntax
	}
	return time.Unix(a, b).UTC(), nil
}

// saveCache writes the cache for key; failures only cost speed later. It
// sorts list in board order.
func (b *Board) saveCache(key string, list []Session) {
	sortSessions(list)
	// Appended field by field, with no string per field: on a cold listing
	// of 100,000 sessions this runs once per session.
	buf := make([]byte, 0, len(list)*96+len(cacheHeader)+1)
	buf = appendCacheHeader(buf)
	for i := range list {
		s := &list[i]
		buf = append(buf, filepath.Base(s.Path)...)
		buf = append(buf, '\t')
		buf = strconv.AppendUint(buf, s.ino, 10)
		buf = append(buf, '\t')
		buf = strconv.AppendInt(buf, s.mtime, 10)
		buf = append(buf, '\t')
		buf = strconv.AppendInt(buf, s.size, 10)
		buf = append(buf, '\t')
		buf = strconv.AppendInt(buf, int64(s.Priority), 10)
		buf = append(buf, '\t')
		buf = appendUnix(buf, s.CreatedAt)
		buf = append(buf, '\t')
		buf = strconv.AppendInt(buf, int64(s.Attempts), 10)
		buf = append(buf, '\t')
		buf = appendEscaped(buf, s.Title)
		buf = append(buf, '\t')
		buf = appendList(buf, s.Tags)
		buf = append(buf, '\t')
		buf = appendList(buf, s.DependsOn)
		buf = append(buf, '\t')
		buf = appendEscaped(buf, s.Problem)
		buf = append(buf, '\n')
	}
	b.writeCache(key, buf)
}

// writeCache replaces the cache of key with data, a header and lines. It
// is only a cache: a write that fails is left for the next listing.
func (b *Board) writeCache(key string, data []byte) {
	// Mkdir, not MkdirAll: a cache goes into an existing .pickup/ only, so
	// that reading a fresh clone's board creates nothing.
	dir := filepath.Dir(b.cachePath(key))
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return
	}
	_ = fsx.WriteReplace(b.cachePath(key), data, 0o644, false)
}

// appendCacheHeader appends a header line with a new token: no two writes
// of a cache share one, so a stamp that names a token names one content.
func appendCacheHeader(buf []byte) []byte {
	buf = append(buf, cacheHeader...)
	buf = append(buf, ' ')
	buf = appendHex16(buf, rand.Uint64())
	return append(buf, '\n')
}

// parseCacheHeader returns the token of a cache's header line (without its
// newline), and false if it is not the header of this format.
func parseCacheHeader(line []byte) (token uint64, ok bool) {
	rest, ok := bytes.CutPrefix(line, []byte(cacheHeader+" "))
	if !ok {
		return 0, false
	}
	return parseHex16(rest)
}

func appendHex16(buf []byte, v uint64) []byte {
	const digits = "0123456789abcdef"
	for shift := 60; shift >= 0; shift -= 4 {
		buf = append(buf, digits[(v>>uint(shift))&0xf])
	}
	return buf
}

func parseHex16(b []byte) (uint64, bool) {
	if len(b) != 16 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | uint64(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | uint64(c-'a'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

// appendUnix appends a time as "seconds.nanoseconds" since the Unix epoch:
// exact for any year, unlike a count of nanoseconds, and cheaper to parse
// than RFC 3339.
func appendUnix(buf []byte, t time.Time) []byte {
	buf = strconv.AppendInt(buf, t.Unix(), 10)
	buf = append(buf, '.')
	return strconv.AppendInt(buf, int64(t.Nanosecond()), 10)
}

// appendEscaped appends s with backslash, tab, newline and the list
// separator escaped, so that it fits in one field of one line.
func appendEscaped(buf []byte, s string) []byte {
	if !strings.ContainsAny(s, "\\\t\n\x1f") {
		return append(buf, s...)
	}
	return append(buf, escaper.Replace(s)...)
}

// appendList appends a list as one field: escaped items joined by \x1f.
func appendList(buf []byte, l []string) []byte {
	for i, s := range l {
		if i > 0 {
			buf = append(buf, '\x1f')
		}
		buf = appendEscaped(buf, s)
	}
	return buf
}

func splitFields(line string, into []string) bool {
	for i := range into {
		if i == len(into)-1 {
			into[i] = line
			return !strings.Contains(line, "\t")
		}
		var ok bool
		into[i], line, ok = strings.Cut(line, "\t")
		if !ok {
			return false
		}
	}
	return true
}

var escaper = strings.NewReplacer("\\", "\\\\", "\t", "\\t", "\n", "\\n", "\x1f", "\\u")
var unescaper = strings.NewReplacer("\\\\", "\\", "\\t", "\t", "\\n", "\n", "\\u", "\x1f")

func escape(s string) string { return string(appendEscaped(nil, s)) }

func unescape(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	return unescaper.Replace(s)
}

func joinList(l []string) string { return string(appendList(nil, l)) }

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	parts := strings.Split(s, "\x1f")
	for i, p := range parts {
		parts[i] = unescape(p)
	}
	return parts
}
