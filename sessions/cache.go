package sessions

import (
	"bytes"
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
// Format: a header line, then one line per session with tab-separated
// fields: name, inode, mtime (ns), size, priority, created_at (Unix
// "seconds.nanoseconds": a count of nanoseconds only covers 1678 to 2262),
// attempts, title, tags, depends_on, problem. Text fields escape backslash,
// tab and newline; lists are joined with \x1f. Lines are in board order
// (Compare), so that next can take the first present entries without
// decoding the rest (see Peek).
const cacheHeader = "pickup-cache 4"

// cacheFields is the number of tab-separated fields of an entry line.
const cacheFields = 11

func (b *Board) cachePath(key string) string {
	return filepath.Join(b.RuntimeDir(), "cache", key)
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
	data, err := os.ReadFile(b.cachePath(key))
	if err != nil {
		return nil
	}
	// One string for the whole file: every field is a substring of it.
	text := string(data)
	header, rest, ok := strings.Cut(text, "\n")
	if !ok || header != cacheHeader {
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
	s.DependsOn = splitList(fields[9])
	s.Problem = unescape(fields[10])
	return fields[0], s, true
}

// formatUnix writes a time as "seconds.nanoseconds" since the Unix epoch:
// exact for any year, unlike a count of nanoseconds, and cheaper to parse
// than RFC 3339.
func formatUnix(t time.Time) string {
	return strconv.FormatInt(t.Unix(), 10) + "." + strconv.Itoa(t.Nanosecond())
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
	Sort(list)
	var buf bytes.Buffer
	buf.Grow(len(list)*96 + len(cacheHeader) + 1)
	buf.WriteString(cacheHeader)
	buf.WriteByte('\n')
	for _, s := range list {
		buf.WriteString(filepath.Base(s.Path))
		for _, f := range []string{
			strconv.FormatUint(s.ino, 10), strconv.FormatInt(s.mtime, 10), strconv.FormatInt(s.size, 10),
			strconv.Itoa(int(s.Priority)), formatUnix(s.CreatedAt), strconv.Itoa(s.Attempts),
			escape(s.Title), joinList(s.Tags), joinList(s.DependsOn), escape(s.Problem),
		} {
			buf.WriteByte('\t')
			buf.WriteString(f)
		}
		buf.WriteByte('\n')
	}
	dir := filepath.Dir(b.cachePath(key))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return
	}
	_ = fsx.WriteReplace(b.cachePath(key), buf.Bytes(), 0o644, false)
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

func escape(s string) string {
	if !strings.ContainsAny(s, "\\\t\n\x1f") {
		return s
	}
	return escaper.Replace(s)
}

func unescape(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	return unescaper.Replace(s)
}

func joinList(l []string) string {
	parts := make([]string, len(l))
	for i, s := range l {
		parts[i] = escape(s)
	}
	return strings.Join(parts, "\x1f")
}

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
