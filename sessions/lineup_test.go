package sessions

import (
	"bytes"
	"os"
	"reflect"
	"testing"
)

// lineupIDs is the ids of a lineup, in its order.
func lineupIDs(l *Lineup) []string {
	var ids []string
	for i := range l.Len() {
		ids = append(ids, l.ID(i))
	}
	return ids
}

func TestLineupAgreesWithTheListing(t *testing.T) {
	b, _ := peekBoard(t)
	// Dependencies and text that the cache escapes, decoded field by field.
	cachePut(t, b, "todo/2026-03-01_00-00-00.md", "---\npriority: high\ncreated_at: 2026-01-01T00:00:00Z\ntitle: \"tab\\there\"\ntags: [a, b]\ndepends_on: [x, \"y\\tz\"]\n---\n")
	all, err := b.ListState(Todo, true)
	if err != nil {
		t.Fatal(err)
	}
	l, ok := b.Lineup(Todo)
	if !ok {
		t.Fatal("Lineup: cache cannot answer after a listing")
	}
	if got, want := lineupIDs(l), idsOf(all); !reflect.DeepEqual(got, want) {
		t.Fatalf("Lineup ids = %v, want %v", got, want)
	}
	for i, want := range all {
		got, ok := l.Session(i)
		if !ok {
			t.Fatalf("Session(%d) does not decode", i)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Session(%d) = %+v, want %+v", i, got, want)
		}
		if deps := l.DependsOn(i); !reflect.DeepEqual(deps, want.DependsOn) {
			t.Errorf("DependsOn(%d) = %q, want %q", i, deps, want.DependsOn)
		}
	}
	if _, ok := b.Lineup(Doing); ok {
		t.Error("Lineup answered for doing/, which has one directory per owner")
	}
}

func idsOf(list []Session) []string {
	var ids []string
	for _, s := range list {
		ids = append(ids, s.ID)
	}
	return ids
}

// TestLineupCompactsAStaleCache: over a cache that is mostly lines of
// sessions gone since, the lineup holds what is left and rewrites the
// cache with only that, so that Peek, which will not wade through a mostly
// stale cache, answers again without a full listing.
func TestLineupCompactsAStaleCache(t *testing.T) {
	b := staleCacheBoard(t)
	if _, _, ok := b.Peek(Todo, 1); ok {
		t.Fatal("Peek answered from a mostly stale cache; this test needs it not to")
	}
	l, ok := b.Lineup(Todo)
	if !ok {
		t.Fatal("Lineup cannot answer after removals")
	}
	if l.Len() != 10 || l.ID(0) != "2026-01-01_00-00-30" {
		t.Fatalf("Lineup = %v, want the last 10", lineupIDs(l))
	}
	data, err := os.ReadFile(b.cachePath("todo"))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(data, []byte("\n")); n != 11 {
		t.Errorf("cache has %d lines after the lineup, want a header and 10", n)
	}
	first, more, ok := b.Peek(Todo, 1)
	if !ok || len(first) != 1 || first[0].ID != "2026-01-01_00-00-30" || more != 9 {
		t.Errorf("Peek after the lineup = %s, %d, %v; want 2026-01-01_00-00-30, 9 more", peekIDs(first), more, ok)
	}
}
