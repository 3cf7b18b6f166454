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
		data, err := os.ReadFile(b.cachePath(key))
		if err != nil {
			t.Fatalf("no cache for %s after List: %v", key, err)
		}
		if !bytes.HasPrefix(data, []byte(cacheHeader+" ")) {
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
	if want := []string{"doing.alice" + cacheVersion, "todo" + cacheVersion}; !reflect.DeepEqual(names, want) {
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
		for _, st := range States() {
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
