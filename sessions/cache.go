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
// fields: name, inode, mtime (ns), size, priority, created_at (RFC 3339,
// nanoseconds: unix nanoseconds only cover 1678 to 2262),
// attempts, title, tags, depends_on, problem. Text fields escape backslash,
// tab and newline; lists are joined with \x1f.
const cacheHeader = "pickup-cache 2"

func (b *Board) cachePath(key string) string {
	return filepath.Join(b.RuntimeDir(), "cache", key)
}

func (b *Board) loadCache(key string) map[string]Session {
	data, err := os.ReadFile(b.cachePath(key))
	if err != nil {
		return nil
	}
	header, rest, ok := bytes.Cut(data, []byte("\n"))
	if !ok || string(header) != cacheHeader {
		return nil
	}
	cache := make(map[string]Session, bytes.Count(rest, []byte("\n")))
	var fields [11]string
	for len(rest) > 0 {
		var line []byte
		line, rest, _ = bytes.Cut(rest, []byte("\n"))
		if !splitFields(string(line), fields[:]) {
			continue
		}
		var s Session
		var err1, err2, err3, err4, err5, err6 error
		s.ino, err1 = strconv.ParseUint(fields[1], 10, 64)
		s.mtime, err2 = strconv.ParseInt(fields[2], 10, 64)
		s.size, err3 = strconv.ParseInt(fields[3], 10, 64)
		prio, err4 := strconv.Atoi(fields[4])
		created, err5 := time.Parse(time.RFC3339Nano, fields[5])
		s.Attempts, err6 = strconv.Atoi(fields[6])
		if err1 != nil || err2 != nil || err3 != nil || err4 != nil || err5 != nil || err6 != nil || prio < int(High) || prio > int(Low) {
			continue
		}
		s.Priority = Priority(prio)
		s.CreatedAt = created.UTC()
		s.Title = unescape(fields[7])
		s.Tags = splitList(fields[8])
		s.DependsOn = splitList(fields[9])
		s.Problem = unescape(fields[10])
		cache[fields[0]] = s
	}
	return cache
}

// saveCache writes the cache for key; failures only cost speed later.
func (b *Board) saveCache(key string, list []Session) {
	var buf bytes.Buffer
	buf.Grow(len(list)*96 + len(cacheHeader) + 1)
	buf.WriteString(cacheHeader)
	buf.WriteByte('\n')
	for _, s := range list {
		buf.WriteString(filepath.Base(s.Path))
		for _, f := range []string{
			strconv.FormatUint(s.ino, 10), strconv.FormatInt(s.mtime, 10), strconv.FormatInt(s.size, 10),
			strconv.Itoa(int(s.Priority)), s.CreatedAt.UTC().Format(time.RFC3339Nano), strconv.Itoa(s.Attempts),
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
