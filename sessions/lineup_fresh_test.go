package sessions

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// freshTestBoard is peekBoard with a stamp: a full listing (PeekMatching)
// was made a moment ago and is trusted for an hour.
func freshTestBoard(t *testing.T) (*Board, []Session) {
	t.Helper()
	b, list := peekBoard(t)
	b.LineupAge = time.Hour
	if _, _, _, ok := b.PeekMatching(Todo, 1, TagFilter{}); !ok {
		t.Fatal("PeekMatching could not answer")
	}
	return b, list
}

// TestPeekFreshAgreesWithTheListing: the lineup gives the listing's first
// sessions, in order, without reading todo/.
func TestPeekFreshAgreesWithTheListing(t *testing.T) {
	b, list := freshTestBoard(t)
	for n := 1; n <= len(list); n++ {
		first, ok := b.PeekFresh(Todo, n, TagFilter{})
		if !ok {
			t.Fatalf("PeekFresh(%d) could not answer", n)
		}
		if got, want := peekIDs(first), peekIDs(list[:n]); got != want {
			t.Fatalf("PeekFresh(%d) = %s, want %s", n, got, want)
		}
	}
}

// TestPeekFreshStampRemovedWhileListing: a stamp removed while its listing
// ran (an arrival by pickup) is not written back when the listing ends: the
// listing may have missed the arrival.
func TestPeekFreshStampRemovedWhileListing(t *testing.T) {
	b, _ := peekBoard(t)
	b.LineupAge = time.Hour
	seen := b.beginStamp(Todo)
	if seen == nil {
		t.Fatal("no pending stamp")
	}
	if _, ok := b.PeekFresh(Todo, 1, TagFilter{}); ok {
		t.Fatal("PeekFresh trusts a pending stamp")
	}
	b.MarkChanged(Todo) // a session arrives during the listing
	data, _ := os.ReadFile(b.cachePath(string(Todo)))
	b.restamp(Todo, seen, data, len(data))
	seen.done()
	if _, ok := b.PeekFresh(Todo, 1, TagFilter{}); ok {
		t.Fatal("PeekFresh trusts a listing during which a session arrived")
	}
}

// TestPeekFreshCannotAnswer: cases where the lineup must not be trusted.
func TestPeekFreshCannotAnswer(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spoil func(t *testing.T, b *Board, list []Session)
	}{
		{"stamp too old", func(t *testing.T, b *Board, _ []Session) { b.LineupAge = time.Nanosecond }},
		{"lineup off", func(t *testing.T, b *Board, _ []Session) { b.LineupAge = -1 }},
		{"no stamp", func(t *testing.T, b *Board, _ []Session) { b.MarkChanged(Todo) }},
		{"stamp torn", func(t *testing.T, b *Board, _ []Session) {
			if err := os.WriteFile(b.stampPath(Todo), []byte(stampMagic), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"stamp cut short", func(t *testing.T, b *Board, _ []Session) {
			data, err := os.ReadFile(b.stampPath(Todo))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(b.stampPath(Todo), data[:len(data)-3], 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"cache rewritten since", func(t *testing.T, b *Board, _ []Session) {
			if _, err := b.ListState(Todo, true); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(b.cachePath(string(Todo))); err != nil {
				t.Fatal(err)
			}
			if _, err := b.ListState(Todo, true); err != nil { // a new token
				t.Fatal(err)
			}
		}},
		{"first session replaced by another file", func(t *testing.T, b *Board, list []Session) {
			data, err := os.ReadFile(list[0].Path)
			if err != nil {
				t.Fatal(err)
			}
			// Written beside it, then renamed over it: a new inode.
			if err := os.WriteFile(list[0].Path+".new", data, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(list[0].Path+".new", list[0].Path); err != nil {
				t.Fatal(err)
			}
		}},
		{"every session gone", func(t *testing.T, b *Board, list []Session) {
			for _, s := range list {
				if err := os.Remove(s.Path); err != nil {
					t.Fatal(err)
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, list := freshTestBoard(t)
			tc.spoil(t, b, list)
			if first, ok := b.PeekFresh(Todo, 1, TagFilter{}); ok {
				t.Fatalf("PeekFresh answered %s", peekIDs(first))
			}
		})
	}
}

// TestArrivedKeepsTheStampOnlyForWhatItDescribes: a session put back in
// todo/ unchanged is in the lineup already; one changed, or new, is not,
// and the stamp goes.
func TestArrivedKeepsTheStampOnlyForWhatItDescribes(t *testing.T) {
	for _, tc := range []struct {
		name string
		put  func(t *testing.T, b *Board, s Session) string
		keep bool
	}{
		{"back unchanged", func(t *testing.T, b *Board, s Session) string {
			tmp := filepath.Join(b.Dir, "done", filepath.Base(s.Path))
			if err := os.Rename(s.Path, tmp); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, s.Path); err != nil {
				t.Fatal(err)
			}
			return s.Path
		}, true},
		{"back edited in place", func(t *testing.T, b *Board, s Session) string {
			if err := os.WriteFile(s.Path, []byte(cacheSession("low", "edited title")), 0o644); err != nil {
				t.Fatal(err)
			}
			return s.Path
		}, false},
		{"new", func(t *testing.T, b *Board, s Session) string {
			p := filepath.Join(b.Dir, "todo", "2031-01-01_00-00-00.md")
			cachePut(t, b, "todo/2031-01-01_00-00-00.md", cacheSession("high", "new"))
			return p
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, list := freshTestBoard(t)
			b.Arrived(tc.put(t, b, list[2]))
			_, ok := b.PeekFresh(Todo, 1, TagFilter{})
			if ok != tc.keep {
				t.Fatalf("after the arrival the lineup is trusted: %v, want %v", ok, tc.keep)
			}
		})
	}
}

// TestPeekFreshDropsLeadingGoneLines: after many sessions at the front of
// the lineup were claimed, the next full listing drops their lines, so
// that later walks do not pass them again.
func TestPeekFreshDropsLeadingGoneLines(t *testing.T) {
	b := cacheTestBoard(t)
	b.LineupAge = time.Hour
	// Not so many gone that the cache is mostly stale (then a listing
	// rewrites it anyway).
	n := 2*leadingStale + 4*leadingStale
	for i := range n {
		cachePut(t, b, fmt.Sprintf("todo/2026-01-01_00-%02d-%02d.md", i/60, i%60), cacheSession("medium", "s"))
	}
	list, err := b.ListState(Todo, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range list[:2*leadingStale] {
		if err := os.Remove(s.Path); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, _, ok := b.PeekMatching(Todo, 1, TagFilter{}); !ok {
		t.Fatal("PeekMatching could not answer")
	}
	data, err := os.ReadFile(b.cachePath(string(Todo)))
	if err != nil {
		t.Fatal(err)
	}
	if got := countLines(data) - 1; got != n-2*leadingStale {
		t.Fatalf("the cache holds %d lines, want %d", got, n-2*leadingStale)
	}
	first, ok := b.PeekFresh(Todo, 1, TagFilter{})
	if !ok || first[0].ID != list[2*leadingStale].ID {
		t.Fatalf("PeekFresh = %v, %v; want %s", peekIDs(first), ok, list[2*leadingStale].ID)
	}
}

func countLines(data []byte) int {
	n := 0
	for _, c := range data {
		if c == '\n' {
			n++
		}
	}
	return n
}
