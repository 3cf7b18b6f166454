package sessions

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
)

// cacheTestBoard initializes a board in a temporary directory.
func cacheTestBoard(t *testing.T) *Board {
	t.Helper()
	b, err := Init(filepath.Join(t.TempDir(), "board"))
	if err != nil {
		t.Fatal(err)
	}
	b.Now = func() time.Time { return time.Date(2026, 11, 22, 9, 15, 3, 0, time.UTC) }
	return b
}

// cachePut writes a session file at <board>/rel.
func cachePut(t *testing.T, b *Board, rel, content string) string {
	t.Helper()
	p := filepath.Join(b.Dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func cacheSession(prio, title string) string {
	return fmt.Sprintf("---\npriority: %s\ncreated_at: 2026-01-01T00:00:00Z\ntitle: %q\n---\nbody\n", prio, title)
}

func cacheIno(t *testing.T, path string) uint64 {
	t.Helper()
	info, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return uint64(info.Sys().(*syscall.Stat_t).Ino)
}

// cacheMustList lists states with validation and fails the test on error.
func cacheMustList(t *testing.T, b *Board, states ...State) []Session {
	t.Helper()
	list, err := b.List(states...)
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// cacheDiff describes how two listings differ, unexported fields included.
func cacheDiff(got, want []Session) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d sessions, want %d", len(got), len(want))
	}
	var diffs []string
	for i := range got {
		g, w := got[i], want[i]
		if !g.CreatedAt.Equal(w.CreatedAt) {
			diffs = append(diffs, fmt.Sprintf("%s: created_at %v, want %v", w.ID, g.CreatedAt, w.CreatedAt))
		}
		g.CreatedAt, w.CreatedAt = time.Time{}, time.Time{}
		if len(g.Tags) == 0 && len(w.Tags) == 0 {
			g.Tags, w.Tags = nil, nil
		}
		if len(g.DependsOn) == 0 && len(w.DependsOn) == 0 {
			g.DependsOn, w.DependsOn = nil, nil
		}
		if !reflect.DeepEqual(g, w) {
			diffs = append(diffs, fmt.Sprintf("session %d:\n got %+v\nwant %+v", i, g, w))
		}
	}
	return strings.Join(diffs, "\n")
}

func TestCacheIsWritten(t *testing.T) {
	b := cacheTestBoard(t)
	cachePut(t, b, "todo/a.md", cacheSession("high", "a"))
	cachePut(t, b, "doing/alice/b.md", cacheSession("low", "b"))
	cacheMustList(t, b)
	for _, key := range []string{"todo", "doing.alice"} {
		data, err := os.ReadFile(filepath.Join(b.RuntimeDir(), "cache", key))
		if err != nil {
			t.Fatalf("no cache for %s after List: %v", key, err)
		}
		if !bytes.HasPrefix(data, []byte(cacheHeader+"\n")) {
			t.Errorf("cache %s does not start with the header: %q", key, data)
		}
	}
	// Nothing but the cache files in the cache directory: no temporary
	// files left behind.
	entries, err := os.ReadDir(filepath.Join(b.RuntimeDir(), "cache"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{"doing.alice", "todo"}; !reflect.DeepEqual(names, want) {
		t.Errorf("cache directory holds %q, want %q", names, want)
	}
}

// cacheBoardWithEverything puts sessions exercising every cached field.
func cacheBoardWithEverything(t *testing.T, b *Board) {
	t.Helper()
	cachePut(t, b, "todo/plain.md", cacheSession("medium", "plain"))
	cachePut(t, b, "todo/full.md", "---\npriority: high\ncreated_at: 2026-02-03T04:05:06.789Z\ntitle: \"tab\\there, newline\\nthere, backslash \\\\ and \\x1f unit\"\n"+
		"tags: [\"a\\tb\", \"c\\x1fd\", \"e\\\\\", plain]\ndepends_on: [x.1, y-2]\nattempts: 3\n---\nbody\n")
	cachePut(t, b, "todo/escapes.md", "---\npriority: low\ntitle: \"\\\\t is not a tab, \\\\n is not a newline, \\\\u is not a unit, trailing \\\\\"\n---\n")
	cachePut(t, b, "todo/nometa.md", "# Just a heading\n")
	cachePut(t, b, "todo/broken.md", "---\ntitle: x\npriority: [a]\ncreated_at: never\n---\n")
	cachePut(t, b, "todo/twoproblems.md", "---\npriority: urgent\ncreated_at: never\n---\n")
	cachePut(t, b, "todo/unicode.md", cacheSession("low", "é 世界 🙂"))
	cachePut(t, b, "doing/alice/claimed.md", cacheSession("high", "claimed"))
	cachePut(t, b, "done/finished.md", cacheSession("low", "finished"))
}

func TestCacheSecondListIdentical(t *testing.T) {
	b := cacheTestBoard(t)
	cacheBoardWithEverything(t, b)
	first := cacheMustList(t, b)
	if len(first) != 9 {
		t.Fatalf("listed %d sessions, want 9", len(first))
	}
	for _, validate := range []bool{true, false} {
		var second []Session
		for _, st := range States {
			list, err := b.ListState(st, validate)
			if err != nil {
				t.Fatal(err)
			}
			second = append(second, list...)
		}
		if d := cacheDiff(second, first); d != "" {
			t.Errorf("listing from the cache (validate %v) differs from the first listing:\n%s", validate, d)
		}
	}
	// And every entry came back from the cache file as it was listed.
	for _, s := range first {
		key := string(s.State)
		if s.Owner != "" {
			key += "." + s.Owner
		}
		cp, ok := b.loadCache(key).get(filepath.Base(s.Path))
		if !ok {
			t.Errorf("%s: not in the cache %s", s.ID, key)
			continue
		}
		c := *cp
		c.ID, c.State, c.Owner, c.Path = s.ID, s.State, s.Owner, s.Path
		if d := cacheDiff([]Session{c}, []Session{s}); d != "" {
			t.Errorf("%s: cache entry differs:\n%s", s.ID, d)
		}
	}
}

// TestCacheIsUsed checks that a second listing reads the cache rather than
// the files: an entry whose inode, size and modification time match is
// trusted, so a title changed only in the cache shows.
func TestCacheIsUsed(t *testing.T) {
	b := cacheTestBoard(t)
	cachePut(t, b, "todo/a.md", cacheSession("high", "from the file"))
	first := cacheMustList(t, b, Todo)
	path := b.cachePath("todo")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.Replace(data, []byte("from the file"), []byte("from the cache"), 1)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, validate := range []bool{true, false} {
		list, err := b.ListState(Todo, validate)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 1 || list[0].Title != "from the cache" {
			t.Errorf("ListState(todo, %v) = %+v, want the cached title (first listing: %+v)", validate, list, first)
		}
	}
}

func TestCacheFarDates(t *testing.T) {
	tests := []struct {
		name    string
		created string
	}{
		{name: "far future", created: "2300-01-02T03:04:05Z"},
		{name: "far past", created: "1500-01-02T03:04:05Z"},
		{name: "year 1", created: "0001-01-01T00:00:01Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := cacheTestBoard(t)
			cachePut(t, b, "todo/a.md", "---\ncreated_at: "+tt.created+"\n---\n")
			want, _ := time.Parse(time.RFC3339, tt.created)
			for round := range 2 { // the second round comes from the cache
				list := cacheMustList(t, b, Todo)
				if len(list) != 1 {
					t.Fatalf("round %d: %d sessions, want 1", round, len(list))
				}
				if !list[0].CreatedAt.Equal(want) {
					t.Errorf("round %d: CreatedAt = %v, want %v", round, list[0].CreatedAt, want)
				}
			}
		})
	}
}

// editInPlace rewrites path through the same inode.
func editInPlace(t *testing.T, path, content string, mtime time.Time) {
	t.Helper()
	before := cacheIno(t, path)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(content); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	if after := cacheIno(t, path); after != before {
		t.Fatalf("the in-place edit changed the inode from %d to %d", before, after)
	}
}

func TestCacheNoticesInPlaceEdit(t *testing.T) {
	orig := cacheSession("high", "title")
	old := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		content string
		mtime   time.Time
	}{
		{name: "same size, newer mtime", content: strings.Replace(orig, "high", "low ", 1), mtime: old.Add(time.Second)},
		{name: "same size, mtime one nanosecond newer", content: strings.Replace(orig, "high", "low ", 1), mtime: old.Add(time.Nanosecond)},
		{name: "other size, same mtime", content: strings.Replace(orig, "high", "low", 1), mtime: old},
		{name: "other size, older mtime", content: strings.Replace(orig, "high", "low", 1), mtime: old.Add(-time.Hour)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.content) == len(orig) && tt.mtime.Equal(old) {
				t.Fatal("bad test: nothing a cache could notice")
			}
			b := cacheTestBoard(t)
			path := cachePut(t, b, "todo/a.md", orig)
			if err := os.Chtimes(path, old, old); err != nil {
				t.Fatal(err)
			}
			list := cacheMustList(t, b, Todo)
			if len(list) != 1 || list[0].Priority != High {
				t.Fatalf("first List = %+v, want one high session", list)
			}
			listed := list[0]
			editInPlace(t, path, tt.content, tt.mtime)

			// Without validation the cache may be trusted, but Refresh
			// must see the edit.
			unvalidated, err := b.ListState(Todo, false)
			if err != nil || len(unvalidated) != 1 {
				t.Fatalf("ListState(todo, false) = %+v, %v", unvalidated, err)
			}
			for _, s := range []Session{listed, unvalidated[0]} {
				fresh, err := b.Refresh(s)
				if err != nil {
					t.Fatal(err)
				}
				if fresh.Priority != Low || fresh.ID != "a" || fresh.State != Todo {
					t.Errorf("Refresh = %+v, want the edited (low) session a in todo", fresh)
				}
			}

			list = cacheMustList(t, b, Todo)
			if len(list) != 1 || list[0].Priority != Low {
				t.Errorf("List after an in-place edit = %+v, want priority low", list)
			}
			// The cache was updated: a later unvalidated listing is right.
			unvalidated, err = b.ListState(Todo, false)
			if err != nil || len(unvalidated) != 1 || unvalidated[0].Priority != Low {
				t.Errorf("ListState(todo, false) after List = %+v, %v; want priority low", unvalidated, err)
			}
		})
	}
}

func TestRefreshUnchanged(t *testing.T) {
	b := cacheTestBoard(t)
	cachePut(t, b, "todo/a.md", cacheSession("high", "title"))
	list := cacheMustList(t, b, Todo)
	got, err := b.Refresh(list[0])
	if err != nil {
		t.Fatal(err)
	}
	if d := cacheDiff([]Session{got}, list); d != "" {
		t.Errorf("Refresh of an unchanged session: %s", d)
	}
}

func TestRefreshGone(t *testing.T) {
	b := cacheTestBoard(t)
	path := cachePut(t, b, "todo/a.md", cacheSession("high", "title"))
	list := cacheMustList(t, b, Todo)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Refresh(list[0]); !os.IsNotExist(err) {
		t.Errorf("Refresh of a removed session = %v, want fs.ErrNotExist", err)
	}
}

// TestCacheNoticesReplacement replaces a file by rename with one of the same
// size and modification time: only the inode tells, and even an unvalidated
// listing must notice.
func TestCacheNoticesReplacement(t *testing.T) {
	b := cacheTestBoard(t)
	orig := cacheSession("high", "title")
	path := cachePut(t, b, "todo/a.md", orig)
	mtime := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	list := cacheMustList(t, b, Todo)
	if len(list) != 1 || list[0].Priority != High {
		t.Fatalf("first List = %+v", list)
	}
	listed := list[0]
	before := cacheIno(t, path)
	tmp := cachePut(t, b, "todo/.a.md.tmp", strings.Replace(orig, "high", "low ", 1))
	if err := os.Chtimes(tmp, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	if cacheIno(t, path) == before {
		t.Fatal("the replacement kept the inode")
	}
	for _, validate := range []bool{false, true} {
		list, err := b.ListState(Todo, validate)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 1 || list[0].Priority != Low {
			t.Errorf("ListState(todo, %v) after a replacement = %+v, want priority low", validate, list)
		}
	}
	t.Run("Refresh", func(t *testing.T) {
		fresh, err := b.Refresh(listed)
		if err != nil {
			t.Fatal(err)
		}
		if fresh.Priority != Low {
			t.Errorf("Refresh after a replacement by rename (same size and mtime, new inode) = priority %v, want low", fresh.Priority)
		}
	})
}

// TestCacheMove moves a session between states by rename (same inode, as a
// transition does): each state lists it where it is now.
func TestCacheMove(t *testing.T) {
	b := cacheTestBoard(t)
	cachePut(t, b, "todo/a.md", cacheSession("high", "a"))
	cachePut(t, b, "todo/b.md", cacheSession("low", "b"))
	cacheMustList(t, b)
	if err := os.MkdirAll(b.StateDir(Doing, "alice"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(b.Path(Todo, "", "a"), b.Path(Doing, "alice", "a")); err != nil {
		t.Fatal(err)
	}
	for _, validate := range []bool{false, true} {
		todo, err := b.ListState(Todo, validate)
		if err != nil {
			t.Fatal(err)
		}
		doing, err := b.ListState(Doing, validate)
		if err != nil {
			t.Fatal(err)
		}
		if len(todo) != 1 || todo[0].ID != "b" {
			t.Errorf("todo (validate %v) = %+v, want only b", validate, todo)
		}
		if len(doing) != 1 || doing[0].ID != "a" || doing[0].Owner != "alice" || doing[0].Path != b.Path(Doing, "alice", "a") || doing[0].Priority != High {
			t.Errorf("doing (validate %v) = %+v, want a held by alice", validate, doing)
		}
	}
}

func TestCacheCorrupt(t *testing.T) {
	// header and line are a valid cache for todo/a.md as the board below
	// lists it, but with another title and priority: a test that gets
	// "from the cache" back knows the corrupt file was read.
	tests := []struct {
		name    string
		corrupt func(valid []byte) []byte
		perm    bool // keep the valid cache's entry usable
	}{
		{name: "empty", corrupt: func([]byte) []byte { return nil }},
		{name: "garbage", corrupt: func([]byte) []byte { return []byte("\x00\xff garbage\n\t\t\t\n\\\\\\") }},
		{name: "only a header", corrupt: func([]byte) []byte { return []byte(cacheHeader + "\n") }},
		{name: "header without newline", corrupt: func([]byte) []byte { return []byte(cacheHeader) }},
		{name: "wrong header", corrupt: func(v []byte) []byte { return bytes.Replace(v, []byte(cacheHeader), []byte("pickup-cache 0"), 1) }},
		{name: "no header", corrupt: func(v []byte) []byte { _, rest, _ := bytes.Cut(v, []byte("\n")); return rest }},
		{name: "truncated line", corrupt: func(v []byte) []byte { return v[:len(v)-len("\tfrom the cache\t\t\t\n")-2] }},
		{name: "truncated in the last field", corrupt: func(v []byte) []byte { return v[:len(v)-1] }, perm: true},
		{name: "three fields", corrupt: func([]byte) []byte { return []byte(cacheHeader + "\na.md\t1\t2\n") }},
		{name: "twelve fields", corrupt: func(v []byte) []byte { return append(bytes.TrimSuffix(v, []byte("\n")), "\textra\n"...) }},
		{name: "eleven empty fields", corrupt: func([]byte) []byte { return []byte(cacheHeader + "\n" + strings.Repeat("\t", 10) + "\n") }},
		{name: "bad numbers", corrupt: func(v []byte) []byte {
			return []byte(cacheHeader + "\na.md\tx\ty\tz\t1\t0\t0\tfrom the cache\t\t\t\n")
		}},
		{name: "priority out of range", corrupt: func(v []byte) []byte { return replaceField(v, 4, "9") }},
		{name: "priority below range", corrupt: func(v []byte) []byte { return replaceField(v, 4, "-5") }},
		{name: "huge numbers", corrupt: func(v []byte) []byte { return replaceField(v, 5, "99999999999999999999999") }},
		{name: "wrong inode", corrupt: func(v []byte) []byte { return replaceField(v, 1, "1") }},
		{name: "wrong size", corrupt: func(v []byte) []byte { return replaceField(v, 3, "1") }},
		{name: "CRLF", corrupt: func(v []byte) []byte { return bytes.ReplaceAll(v, []byte("\n"), []byte("\r\n")) }},
		{name: "duplicate lines", corrupt: func(v []byte) []byte {
			_, rest, _ := bytes.Cut(v, []byte("\n"))
			return append(append([]byte(nil), v...), rest...)
		}, perm: true},
		{name: "lone backslashes", corrupt: func(v []byte) []byte { return bytes.Replace(v, []byte("from the cache"), []byte(`\\\q\`), 1) }, perm: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := cacheTestBoard(t)
			cachePut(t, b, "todo/a.md", cacheSession("high", "from the file"))
			cachePut(t, b, "todo/b.md", cacheSession("low", "other"))
			want := cacheMustList(t, b, Todo)
			// Make the valid cache say something else about a.md, so
			// that whether the corrupt file was trusted shows.
			valid, err := os.ReadFile(b.cachePath("todo"))
			if err != nil {
				t.Fatal(err)
			}
			valid = cacheOnly(t, valid, "a.md")
			valid = bytes.Replace(valid, []byte("from the file"), []byte("from the cache"), 1)
			if err := os.WriteFile(b.cachePath("todo"), tt.corrupt(valid), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, validate := range []bool{true, false} {
				got, err := b.ListState(Todo, validate)
				if err != nil {
					t.Fatalf("ListState(todo, %v): %v", validate, err)
				}
				if tt.perm {
					// The entry is still well formed: it may be used.
					if len(got) == 2 {
						got[0].Title = "from the file"
					}
				}
				if d := cacheDiff(got, want); d != "" {
					t.Errorf("ListState(todo, %v) with a corrupt cache:\n%s", validate, d)
				}
			}
		})
	}
}

// cacheOnly keeps the header and the line for name.
func cacheOnly(t *testing.T, cache []byte, name string) []byte {
	t.Helper()
	lines := bytes.SplitAfter(cache, []byte("\n"))
	out := append([]byte(nil), lines[0]...)
	for _, l := range lines[1:] {
		if bytes.HasPrefix(l, []byte(name+"\t")) {
			return append(out, l...)
		}
	}
	t.Fatalf("no line for %s in the cache %q", name, cache)
	return nil
}

// replaceField replaces field i of the first entry line.
func replaceField(cache []byte, i int, value string) []byte {
	header, rest, _ := bytes.Cut(cache, []byte("\n"))
	line, rest, _ := bytes.Cut(rest, []byte("\n"))
	fields := strings.Split(string(line), "\t")
	fields[i] = value
	return []byte(string(header) + "\n" + strings.Join(fields, "\t") + "\n" + string(rest))
}

func TestCacheUnusable(t *testing.T) {
	tests := []struct {
		name   string
		damage func(t *testing.T, b *Board)
	}{
		{name: "cache directory removed", damage: func(t *testing.T, b *Board) {
			if err := os.RemoveAll(filepath.Join(b.RuntimeDir(), "cache")); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "runtime directory removed", damage: func(t *testing.T, b *Board) {
			if err := os.RemoveAll(b.RuntimeDir()); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "cache file is a directory", damage: func(t *testing.T, b *Board) {
			if err := os.Remove(b.cachePath("todo")); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(b.cachePath("todo"), 0o755); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "cache directory is a file", damage: func(t *testing.T, b *Board) {
			dir := filepath.Join(b.RuntimeDir(), "cache")
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dir, []byte("not a directory"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := cacheTestBoard(t)
			cacheBoardWithEverything(t, b)
			want := cacheMustList(t, b)
			tt.damage(t, b)
			for round := range 2 {
				got := cacheMustList(t, b)
				if d := cacheDiff(got, want); d != "" {
					t.Errorf("round %d: %s", round, d)
				}
			}
		})
	}
}

func TestCacheRecreated(t *testing.T) {
	b := cacheTestBoard(t)
	cachePut(t, b, "todo/a.md", cacheSession("high", "a"))
	cacheMustList(t, b)
	if err := os.RemoveAll(filepath.Join(b.RuntimeDir(), "cache")); err != nil {
		t.Fatal(err)
	}
	cacheMustList(t, b)
	if c := b.loadCache("todo"); c.len() != 1 {
		t.Errorf("after removing the cache directory, List left a cache of %d entries, want 1", c.len())
	}
}

func TestCacheForgetsRemovedFiles(t *testing.T) {
	b := cacheTestBoard(t)
	for i := range 40 {
		cachePut(t, b, fmt.Sprintf("todo/s%02d.md", i), cacheSession("medium", "s"))
	}
	cacheMustList(t, b)
	for i := range 39 {
		if err := os.Remove(b.Path(Todo, "", fmt.Sprintf("s%02d", i))); err != nil {
			t.Fatal(err)
		}
	}
	for _, validate := range []bool{false, true} {
		list, err := b.ListState(Todo, validate)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 1 || list[0].ID != "s39" {
			t.Errorf("ListState(todo, %v) = %d sessions, want only s39", validate, len(list))
		}
	}
	if c := b.loadCache("todo"); c.len() != 1 {
		t.Errorf("the cache still holds %d entries for 1 file", c.len())
	}
}

// TestCacheConcurrentLists lists one board from many goroutines while a
// file changes: every listing is complete and no cache write breaks another.
func TestCacheConcurrentLists(t *testing.T) {
	b := cacheTestBoard(t)
	for i := range 20 {
		cachePut(t, b, fmt.Sprintf("todo/s%02d.md", i), cacheSession("medium", fmt.Sprintf("s%02d", i)))
	}
	var g errgroup.Group
	for i := range 8 {
		g.Go(func() error {
			for round := range 20 {
				if i == 0 {
					// Rewrite one session by rename, as an editor would.
					tmp := filepath.Join(b.Dir, "todo", ".s00.md.tmp")
					// Each version has another size, so that a validated
					// listing tells them apart even if the file system
					// reuses an inode within one timestamp tick.
					if err := os.WriteFile(tmp, []byte(cacheSession("medium", "s00 "+strings.Repeat("v", round+1))), 0o644); err != nil {
						return err
					}
					if err := os.Rename(tmp, b.Path(Todo, "", "s00")); err != nil {
						return err
					}
				}
				list, err := b.ListState(Todo, round%2 == 0)
				if err != nil {
					return err
				}
				if len(list) != 20 {
					return fmt.Errorf("goroutine %d round %d: %d sessions, want 20", i, round, len(list))
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	list := cacheMustList(t, b, Todo)
	if want := "s00 " + strings.Repeat("v", 20); list[0].ID != "s00" || list[0].Title != want {
		t.Errorf("after the race, s00 is %+v, want title %q", list[0], want)
	}
}

func TestEscape(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{name: "plain", in: "plain title", want: "plain title"},
		{name: "unicode", in: "é 世界 🙂", want: "é 世界 🙂"},
		{name: "tab", in: "a\tb", want: `a\tb`},
		{name: "newline", in: "a\nb", want: `a\nb`},
		{name: "unit separator", in: "a\x1fb", want: `a\ub`},
		{name: "backslash", in: `a\b`, want: `a\\b`},
		{name: "escaped-looking text", in: `\t\n\u\\`, want: `\\t\\n\\u\\\\`},
		{name: "trailing backslash", in: `a\`, want: `a\\`},
		{name: "backslash before newline", in: "\\\n", want: `\\\n`},
		{name: "carriage return kept", in: "a\rb", want: "a\rb"},
		{name: "empty", in: "", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := escape(tt.in)
			if got != tt.want {
				t.Errorf("escape(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if strings.ContainsAny(got, "\t\n\x1f") {
				t.Errorf("escape(%q) = %q still holds a separator", tt.in, got)
			}
			if back := unescape(got); back != tt.in {
				t.Errorf("unescape(escape(%q)) = %q", tt.in, back)
			}
		})
	}
}

func TestJoinSplitList(t *testing.T) {
	tests := []struct {
		name string
		in   []string
	}{
		{name: "nil", in: nil},
		{name: "one", in: []string{"a"}},
		{name: "several", in: []string{"a", "b c", "d"}},
		{name: "separators inside", in: []string{"a\x1fb", "c\td", "e\nf", `g\`, `\u`}},
		{name: "empty element between", in: []string{"a", "", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			joined := joinList(tt.in)
			if strings.ContainsAny(joined, "\t\n") {
				t.Errorf("joinList(%q) = %q holds a field or line separator", tt.in, joined)
			}
			if got := splitList(joined); !reflect.DeepEqual(got, tt.in) {
				t.Errorf("splitList(joinList(%q)) = %q", tt.in, got)
			}
		})
	}
}
