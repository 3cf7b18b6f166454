package sessions

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pickup-dev/pickup/internal/fsx"
)

// ErrBadTagFilter: a tag filter that names an empty tag, a tag with a
// comma (the tag rule of the session file: a comma separates tags, so no
// tag holds one), or the same tag as wanted and unwanted (which no session
// can match, surely a mistake).
var ErrBadTagFilter = errors.New("bad tag filter")

// TagFilter picks sessions by their tags: a session matches when it
// carries every tag of Tags and none of NotTags. The zero TagFilter
// matches every session. Tags compare exactly (case included), as the
// frontmatter writes them.
type TagFilter struct {
	Tags    []string
	NotTags []string
}

// NewTagFilter returns the filter for tags and notTags, checked against
// the tag rule (see ErrBadTagFilter). Duplicates are dropped.
func NewTagFilter(tags, notTags []string) (TagFilter, error) {
	f := TagFilter{Tags: dedup(tags), NotTags: dedup(notTags)}
	for _, t := range slices.Concat(f.Tags, f.NotTags) {
		switch {
		case strings.TrimSpace(t) == "":
			return TagFilter{}, fmt.Errorf("%w: an empty tag", ErrBadTagFilter)
		case strings.Contains(t, ","):
			return TagFilter{}, fmt.Errorf("%w: tag %q holds a comma, which separates tags", ErrBadTagFilter, t)
		case t != strings.TrimSpace(t):
			return TagFilter{}, fmt.Errorf("%w: tag %q has blanks around it, which no tag keeps", ErrBadTagFilter, t)
		}
	}
	for _, t := range f.Tags {
		if slices.Contains(f.NotTags, t) {
			return TagFilter{}, fmt.Errorf("%w: tag %q is both wanted and excluded, which no session can match", ErrBadTagFilter, t)
		}
	}
	return f, nil
}

func dedup(l []string) []string {
	var out []string
	for _, s := range l {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// Empty reports whether f matches every session.
func (f TagFilter) Empty() bool { return len(f.Tags) == 0 && len(f.NotTags) == 0 }

// Match reports whether s carries every tag of f.Tags and none of
// f.NotTags.
func (f TagFilter) Match(s Session) bool {
	for _, t := range f.Tags {
		if !slices.Contains(s.Tags, t) {
			return false
		}
	}
	for _, t := range f.NotTags {
		if slices.Contains(s.Tags, t) {
			return false
		}
	}
	return true
}

// Keep returns the sessions of list that f matches, in list's order
// (reusing list's array).
func (f TagFilter) Keep(list []Session) []Session {
	if f.Empty() {
		return list
	}
	return slices.DeleteFunc(list, func(s Session) bool { return !f.Match(s) })
}

// String writes f as the flags that give it: "--tag a --not-tag b", for
// messages and for hints that suggest a command keeping the filter.
func (f TagFilter) String() string {
	var parts []string
	for _, t := range f.Tags {
		parts = append(parts, "--tag "+flagWord(t))
	}
	for _, t := range f.NotTags {
		parts = append(parts, "--not-tag "+flagWord(t))
	}
	return strings.Join(parts, " ")
}

// flagWord quotes a tag for a shell when it holds more than letters,
// digits and . _ - / : @ +.
func flagWord(t string) string {
	for _, c := range t {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("._-/:@+", c)) {
			return "'" + strings.ReplaceAll(t, "'", `'\''`) + "'"
		}
	}
	return t
}

// afterTags is how many fields of a cache line follow its tags.
const afterTags = cacheFields - 1 - dependsField + 1

// tagsOf returns the tags field of a cache line. It looks from the end:
// the fields after the tags (depends_on, problem) are short and mostly
// empty, where a scan from the start would cross the title on every line.
func tagsOf(line []byte) []byte {
	end := len(line)
	for range afterTags {
		end = bytes.LastIndexByte(line[:max(end, 0)], '\t')
	}
	if end < 0 {
		return nil // not a line walkCache passes on
	}
	start := bytes.LastIndexByte(line[:end], '\t') + 1
	return line[start:end]
}

// lineMatcher matches cache lines against a filter without decoding them:
// it compares the filter's tags, escaped as the cache escapes them, with
// the items of the line's tags field. Escaping is one-to-one, so two tags
// are equal exactly when their escaped forms are.
type lineMatcher struct {
	want, not [][]byte
}

func (f TagFilter) lineMatcher() *lineMatcher {
	if f.Empty() {
		return nil
	}
	m := &lineMatcher{}
	for _, t := range f.Tags {
		m.want = append(m.want, appendEscaped(nil, t))
	}
	for _, t := range f.NotTags {
		m.not = append(m.not, appendEscaped(nil, t))
	}
	return m
}

// match reports whether the cache line matches (a nil matcher matches
// every line).
func (m *lineMatcher) match(line []byte) bool {
	if m == nil {
		return true
	}
	field := tagsOf(line)
	has := func(tag []byte) bool {
		for rest := field; len(rest) > 0; {
			var item []byte
			item, rest, _ = bytes.Cut(rest, []byte("\x1f"))
			if bytes.Equal(item, tag) {
				return true
			}
		}
		return false
	}
	for _, t := range m.want {
		if !has(t) {
			return false
		}
	}
	for _, t := range m.not {
		if has(t) {
			return false
		}
	}
	return true
}

// PeekMatching is Peek for the sessions that f matches: the first n of
// them in board order, how many more match, and how many sessions of the
// directory f excluded. It costs what Peek costs, plus a look at the tags
// field of each line: no session file is opened and nothing is allocated
// for a session that is not returned. An empty f is Peek (excluded 0).
func (b *Board) PeekMatching(st State, n int, f TagFilter) (first []Session, more, excluded int, ok bool) {
	if st == Doing {
		return nil, 0, 0, false
	}
	data, release, err := fsx.MapFile(b.cachePath(string(st)))
	if err != nil {
		return nil, 0, 0, false
	}
	defer release()
	dir := b.StateDir(st, "")
	m := f.lineMatcher()
	// A listing of todo/ leaves a stamp (see PeekFresh), begun before it.
	var seen *stamp
	if st == Todo {
		seen = b.beginStamp(st)
		defer seen.done()
	}
	firstAt := len(data) // where the first present line starts
	matched, ok := b.walkCache(st, data, false, func(name, line []byte) bool {
		if firstAt == len(data) {
			firstAt = cap(data) - cap(line) // line is a subslice of data
		}
		if !m.match(line) {
			excluded++
			return true
		}
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
		return nil, 0, 0, false
	}
	b.restamp(st, seen, data, firstAt)
	return first, matched - excluded - len(first), excluded, true
}

// Matching returns a test of whether f matches session i of the lineup,
// which reads only the tags field of its line.
func (l *Lineup) Matching(f TagFilter) func(i int) bool {
	m := f.lineMatcher()
	return func(i int) bool {
		_, line := l.line(i)
		return m.match(line)
	}
}
