package sessions

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// peekBoard makes a board whose todo/ holds sessions of mixed priorities
// and a warm listing cache, and returns the full ordered listing.
func peekBoard(t *testing.T) (*Board, []Session) {
	t.Helper()
	b := cacheTestBoard(t)
	for i, prio := range []string{"low", "high", "medium", "high", "low", "medium", "high"} {
		cachePut(t, b, "todo/2026-01-0"+string(rune('1'+i))+"_00-00-00.md", cacheSession(prio, "s"+prio))
	}
	cachePut(t, b, "todo/.tmp.md123", "not a session")
	cachePut(t, b, "todo/notes.txt", "not a session")
	if err := os.Mkdir(filepath.Join(b.Dir, "todo", "x.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(b.Dir, "todo", "2030-01-01_00-00-00.md")); err != nil {
		t.Fatal(err)
	}
	list, err := b.ListState(Todo, true)
	if err != nil {
		t.Fatal(err)
	}
	return b, list
}

func peekIDs(list []Session) string {
	var out []string
	for _, s := range list {
		out = append(out, s.ID)
	}
	return strings.Join(out, " ")
}

func TestPeekAgreesWithTheListing(t *testing.T) {
	b, all := peekBoard(t)
	if len(all) != 7 {
		t.Fatalf("listing has %d sessions, want 7: %s", len(all), peekIDs(all))
	}
	for _, n := range []int{0, 1, 3, 7, 20} {
		first, more, ok := b.Peek(Todo, n)
		if !ok {
			t.Fatalf("Peek(%d): cache cannot answer after a listing", n)
		}
		want := all[:min(n, len(all))]
		if got := peekIDs(first); got != peekIDs(want) {
			t.Errorf("Peek(%d) = %s, want %s", n, got, peekIDs(want))
		}
		if more != len(all)-len(want) {
			t.Errorf("Peek(%d): more = %d, want %d", n, more, len(all)-len(want))
		}
		for i, s := range first {
			w := all[i]
			if s.Path != w.Path || s.State != Todo || s.Title != w.Title || s.Priority != w.Priority || !s.CreatedAt.Equal(w.CreatedAt) || s.ino != w.ino || s.size != w.size || s.mtime != w.mtime {
				t.Errorf("Peek(%d)[%d] = %+v, want %+v", n, i, s, w)
			}
		}
	}
}

func TestPeekSkipsSessionsGoneSinceTheListing(t *testing.T) {
	b, all := peekBoard(t)
	for _, s := range all[:2] {
		if err := os.Remove(s.Path); err != nil {
			t.Fatal(err)
		}
	}
	first, more, ok := b.Peek(Todo, 2)
	if !ok {
		t.Fatal("cache cannot answer after removals")
	}
	if got, want := peekIDs(first), peekIDs(all[2:4]); got != want {
		t.Errorf("Peek = %s, want %s", got, want)
	}
	if more != 3 {
		t.Errorf("more = %d, want 3", more)
	}
}

func TestPeekCannotAnswer(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, b *Board, all []Session)
		// The lineup reads only each line's name and inode up front: a
		// line whose other fields are damaged is found when decoded.
		lineupAnswers bool
	}{
		{name: "a new session", change: func(t *testing.T, b *Board, _ []Session) {
			cachePut(t, b, "todo/2026-02-01_00-00-00.md", cacheSession("low", "new"))
		}},
		{name: "a session replaced under its name", change: func(t *testing.T, b *Board, all []Session) {
			p := all[3].Path
			if err := os.WriteFile(p+".new", []byte(cacheSession("high", "edited")), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(p+".new", p); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "no cache", change: func(t *testing.T, b *Board, _ []Session) {
			if err := os.Remove(b.cachePath("todo")); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "an older cache format", change: func(t *testing.T, b *Board, _ []Session) {
			data, err := os.ReadFile(b.cachePath("todo"))
			if err != nil {
				t.Fatal(err)
			}
			data = []byte(strings.Replace(string(data), cacheHeader, "pickup-cache 3", 1))
			if err := os.WriteFile(b.cachePath("todo"), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "a cache line cut short", change: func(t *testing.T, b *Board, all []Session) {
			data, err := os.ReadFile(b.cachePath("todo"))
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(string(data), "\n")
			for i, l := range lines {
				if strings.HasPrefix(l, all[5].ID+".md\t") {
					lines[i] = l[:strings.LastIndex(l, "\t")]
				}
			}
			if err := os.WriteFile(b.cachePath("todo"), []byte(strings.Join(lines, "\n")), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "a first entry that does not decode", change: func(t *testing.T, b *Board, all []Session) {
			data, err := os.ReadFile(b.cachePath("todo"))
			if err != nil {
				t.Fatal(err)
			}
			name := all[0].ID + ".md\t"
			i := strings.Index(string(data), name)
			fields := strings.Split(string(data[i:]), "\t")
			bad := strings.Replace(string(data), name+fields[1]+"\t"+fields[2], name+fields[1]+"\tsoon", 1)
			if err := os.WriteFile(b.cachePath("todo"), []byte(bad), 0o644); err != nil {
				t.Fatal(err)
			}
		}, lineupAnswers: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, all := peekBoard(t)
			tt.change(t, b, all)
			if first, _, ok := b.Peek(Todo, 3); ok {
				t.Fatalf("Peek answered %s; want it to defer to a listing", peekIDs(first))
			}
			l, ok := b.Lineup(Todo)
			switch {
			case ok && !tt.lineupAnswers:
				t.Fatalf("Lineup answered %v; want it to defer to a listing", lineupIDs(l))
			case !ok && tt.lineupAnswers:
				t.Fatal("Lineup cannot answer")
			case ok:
				if s, ok := l.Session(0); ok {
					t.Errorf("Session(0) of a damaged line = %+v; want it not to decode", s)
				}
			}
			// The listing repairs the cache, and Peek agrees with it again.
			list, err := b.ScanState(Todo)
			if err != nil {
				t.Fatal(err)
			}
			sortSessions(list)
			first, _, ok := b.Peek(Todo, 3)
			if !ok {
				t.Fatal("Peek cannot answer after a listing rewrote the cache")
			}
			if got, want := peekIDs(first), peekIDs(list[:3]); got != want {
				t.Errorf("Peek after the listing = %s, want %s", got, want)
			}
		})
	}
}

func TestPeekEmptyTodo(t *testing.T) {
	b := cacheTestBoard(t)
	p := cachePut(t, b, "todo/2026-01-01_00-00-00.md", cacheSession("high", "only"))
	if _, err := b.ListState(Todo, true); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	first, more, ok := b.Peek(Todo, 3)
	if !ok || len(first) != 0 || more != 0 {
		t.Errorf("Peek on an emptied todo/ = %v, %d, %v; want nothing, 0, true", first, more, ok)
	}
	if _, _, ok := b.Peek(Doing, 3); ok {
		t.Error("Peek answered for doing/, which has one directory per owner")
	}
}

func TestPeekCountsARepeatedCacheLineOnce(t *testing.T) {
	b, all := peekBoard(t)
	data, err := os.ReadFile(b.cachePath("todo"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	// Repeat the best entry's line in place of the second one: the cache
	// then lacks a present file, and must not pass for complete.
	lines[2] = lines[1]
	if err := os.WriteFile(b.cachePath("todo"), []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	if first, _, ok := b.Peek(Todo, 3); ok {
		t.Fatalf("Peek answered %s from a cache missing %s", peekIDs(first), all[1].ID)
	}
}

func TestSaveCacheWritesBoardOrder(t *testing.T) {
	b, all := peekBoard(t)
	data, err := os.ReadFile(b.cachePath("todo"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")[1:] {
		names = append(names, strings.TrimSuffix(l[:strings.IndexByte(l, '\t')], ".md"))
	}
	if want := strings.Fields(peekIDs(all)); !slices.Equal(names, want) {
		t.Errorf("cache lines in order %v, want %v", names, want)
	}
}

func TestNameSetFull(t *testing.T) {
	s := newNameSet(2)
	s.add([]byte("a.md"), 1)
	s.add([]byte("b.md"), 2)
	if s.overflow {
		t.Fatal("overflow at capacity")
	}
	s.add([]byte("c.md"), 3)
	if !s.overflow {
		t.Error("a third pair in a set for two did not overflow")
	}
	if !s.take([]byte("a.md"), 1) || s.take([]byte("a.md"), 1) {
		t.Error("take should succeed once")
	}
	if s.take([]byte("a.md"), 2) || s.take([]byte("c.md"), 3) {
		t.Error("take found a pair that was never added")
	}
}

// staleCacheBoard makes a board of 40 sessions in todo/ and a warm listing
// cache, then removes the first 30 behind the cache's back (as claimers
// draining it do): most lines of the cache are stale.
func staleCacheBoard(t *testing.T) *Board {
	t.Helper()
	b := cacheTestBoard(t)
	var paths []string
	for i := range 40 {
		paths = append(paths, cachePut(t, b, fmt.Sprintf("todo/2026-01-01_00-00-%02d.md", i), cacheSession("low", "s")))
	}
	if _, err := b.ListState(Todo, true); err != nil {
		t.Fatal(err)
	}
	for _, p := range paths[:30] {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

func TestPeekDefersToAListingWhenMostLinesAreStale(t *testing.T) {
	b := staleCacheBoard(t)
	if _, _, ok := b.Peek(Todo, 3); ok {
		t.Fatal("Peek answered from a cache of 40 lines for 10 files")
	}
	if _, err := b.ScanState(Todo); err != nil {
		t.Fatal(err)
	}
	if first, more, ok := b.Peek(Todo, 3); !ok || len(first) != 3 || more != 7 {
		t.Errorf("after the listing compacted the cache: Peek = %d, %d, %v; want 3, 7, true", len(first), more, ok)
	}
}
