package claim_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/sessions"
)

// ftBoard is a board whose 20 best sessions carry neither docs nor
// frontend, so that a filtered next has to look past the first lines of
// the listing cache; g waits on c, which is never done.
func ftBoard(t *testing.T) *sessions.Board {
	t.Helper()
	b := pkBoard(t)
	at := func(min int) time.Time { return time.Date(2026, 11, 22, 9, min, 0, 0, time.UTC) }
	put := func(id string, p sessions.Priority, min int, tags []string, deps ...string) {
		pkPut(t, b, sessions.Todo, "", id, sessions.Meta{Priority: p, CreatedAt: at(min), Tags: tags, DependsOn: deps})
	}
	for i := range 20 {
		put(fmt.Sprintf("n%02d", i), sessions.High, i, []string{"backend"})
	}
	put("a", sessions.High, 30, []string{"docs"})
	put("b", sessions.Low, 0, []string{"docs", "frontend"})
	put("c", sessions.Medium, 32, []string{"frontend"})
	put("d", sessions.High, 33, []string{"docs", "wip"})
	put("e", sessions.Medium, 34, []string{"docs"})
	put("f", sessions.Medium, 35, nil)
	put("g", sessions.Medium, 36, []string{"docs"}, "c")
	return b
}

// TestNextFilter: a filtered queue hands out the sessions that carry every
// wanted tag and no excluded one, in next's order, and then says how many
// the filter excluded; whichever way it lists todo/.
func TestNextFilter(t *testing.T) {
	var backend []string
	for i := range 20 {
		backend = append(backend, fmt.Sprintf("n%02d", i))
	}
	tests := []struct {
		name          string
		tags, notTags []string
		want          []string
		blocked       int // sessions left that wait on dependencies
		excluded      int
	}{
		{"one tag", []string{"docs"}, nil, []string{"a", "d", "e", "b"}, 1, 22},
		{"every tag, not any", []string{"docs", "frontend"}, nil, []string{"b"}, 0, 26},
		{"tag and not-tag", []string{"docs"}, []string{"wip"}, []string{"a", "e", "b"}, 1, 23},
		{"not-tag alone", nil, []string{"backend"}, []string{"a", "d", "c", "e", "f", "b"}, 1, 20},
		{"no session matches", []string{"nope"}, nil, nil, 0, 27},
		{"no filter", nil, nil, append(slices.Clone(backend), "a", "d", "c", "e", "f", "b"), 1, 0},
	}
	modes := []struct {
		name string
		// prepare runs before each Next: "scan" removes the listing cache,
		// so each listing reads every file; the others list once first, so
		// that Next answers from the cache (Peek, or the snapshot's Lineup).
		snapshot time.Duration
		scan     bool
	}{
		{name: "scan", scan: true},
		{name: "peek"},
		{name: "lineup", snapshot: time.Hour},
		{name: "renewed snapshot", snapshot: time.Nanosecond},
	}
	for _, tt := range tests {
		for _, mode := range modes {
			t.Run(tt.name+"/"+mode.name, func(t *testing.T) {
				b := ftBoard(t)
				if _, err := b.ScanState(sessions.Todo); err != nil {
					t.Fatal(err)
				}
				f, err := sessions.NewTagFilter(tt.tags, tt.notTags)
				if err != nil {
					t.Fatal(err)
				}
				c := pkClient(t, b, "alice")
				q := c.NewQueue(claim.NextOptions{Filter: f, Snapshot: mode.snapshot})
				var got []string
				for {
					if mode.scan {
						if err := os.RemoveAll(filepath.Join(b.RuntimeDir(), "cache")); err != nil {
							t.Fatal(err)
						}
					}
					s, err := q.Next(context.Background())
					if err != nil {
						err = c.Explain(err)
						ftCheckNothing(t, err, f, tt.blocked, tt.excluded)
						break
					}
					got = append(got, s.ID)
					if len(got) > 40 {
						t.Fatal("Next never ran out")
					}
				}
				if !slices.Equal(got, tt.want) {
					t.Errorf("claimed %v, want %v", got, tt.want)
				}
			})
		}
	}
}

// ftCheckNothing checks the error of a filtered queue that ran out.
func ftCheckNothing(t *testing.T, err error, f sessions.TagFilter, blocked, excluded int) {
	t.Helper()
	if !errors.Is(err, claim.ErrNothingAvailable) {
		t.Fatalf("Next = %v, want ErrNothingAvailable", err)
	}
	var be *claim.BlockedError
	switch {
	case blocked == 0 && errors.As(err, &be):
		t.Errorf("Next = %v, want no BlockedError", err)
	case blocked > 0 && !errors.As(err, &be):
		t.Errorf("Next = %v, want a BlockedError", err)
	case blocked > 0 && (be.Blocked != blocked || len(be.Why) != 1 || !strings.HasPrefix(be.Why[0], "g waits on c")):
		t.Errorf("BlockedError = %+v, want %d blocked, explained as g waiting on c", be, blocked)
	}
	var fe *claim.FilterError
	if f.Empty() {
		if errors.As(err, &fe) {
			t.Errorf("Next without a filter = %v, a FilterError", err)
		}
		return
	}
	if !errors.As(err, &fe) || fe.Excluded != excluded {
		t.Fatalf("Next = %v (%+v), want a FilterError with %d excluded", err, fe, excluded)
	}
	if want := fmt.Sprintf("%d", excluded); !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), f.String()) {
		t.Errorf("error %q does not say %s sessions do not match %s", err, want, f)
	}
}

// TestWaitFilter: a filtered waiter is not woken by a session it does not
// want (it does not even list todo/ again), and is by one it wants.
func TestWaitFilter(t *testing.T) {
	b := pkBoard(t)
	pkPut(t, b, sessions.Todo, "", "fe1", sessions.Meta{Tags: []string{"frontend"}})
	c := pkClient(t, b, "alice")
	f, err := sessions.NewTagFilter([]string{"docs"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	q := c.NewQueue(claim.NextOptions{Filter: f})
	var listings atomic.Int64
	claim.CountListings(q, &listings)
	fake := newWAFake()
	ctx, cancel := context.WithTimeout(context.Background(), waPatience)
	defer cancel()
	res := waStart(ctx, q, claim.WaitOptionsWith(waNever, func(...string) (claim.Notifier, error) { return fake, nil }))
	send := func(id string) {
		t.Helper()
		ev := fsnotify.Event{Name: b.Path(sessions.Todo, "", id), Op: fsnotify.Create}
		select {
		case fake.events <- ev:
		case r := <-res:
			t.Fatalf("Wait returned before %s's event: %+v, %v", id, r.s, r.err)
		case <-ctx.Done():
			t.Fatal("the waiter never took the event")
		}
	}
	// A send completes once the waiter sleeps in its select: after its
	// first look at the board, and after it handled the event before.
	send("fe1")
	before := listings.Load()
	pkPut(t, b, sessions.Todo, "", "fe2", sessions.Meta{Tags: []string{"frontend"}})
	send("fe2")
	send("fe2") // taken only once the first fe2 event was handled
	if n := listings.Load(); n != before {
		t.Errorf("a session without docs made the waiter list todo/ %d more time(s)", n-before)
	}
	pkPut(t, b, sessions.Todo, "", "doc", sessions.Meta{Tags: []string{"docs"}})
	send("doc")
	select {
	case r := <-res:
		waClaimed(t, b, r, "alice", "doc")
	case <-ctx.Done():
		t.Fatal("a session with docs did not wake the waiter")
	}
	if got := pkWhere(t, b, "fe2"); got != "todo" {
		t.Errorf("fe2 is in %s, want todo", got)
	}
}

// TestNextFilterSeesEdits: a session whose tags were edited since the
// listing cache saw it is judged by its file, as next judges its priority.
func TestNextFilterSeesEdits(t *testing.T) {
	b := pkBoard(t)
	pkPut(t, b, sessions.Todo, "", "was-docs", sessions.Meta{Priority: sessions.High, Tags: []string{"docs"}})
	pkPut(t, b, sessions.Todo, "", "docs", sessions.Meta{Priority: sessions.Low, Tags: []string{"docs"}})
	if _, err := b.ScanState(sessions.Todo); err != nil { // the cache says was-docs has docs
		t.Fatal(err)
	}
	// Edited in place (same inode): the cache line stands, the file says
	// otherwise.
	path := b.Path(sessions.Todo, "", "was-docs")
	data := pkContent("was-docs", sessions.Meta{Priority: sessions.High, Tags: []string{"frontend", "more"}})
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := sessions.NewTagFilter([]string{"docs"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := pkClient(t, b, "alice")
	s, err := c.NewQueue(claim.NextOptions{Filter: f}).Next(context.Background())
	if err != nil || s.ID != "docs" {
		t.Fatalf("Next --tag docs = %s, %v; want docs (was-docs lost the tag)", s.ID, err)
	}
	if got := pkWhere(t, b, "was-docs"); got != "todo" {
		t.Errorf("was-docs is in %s, want todo", got)
	}
}

// TestFilteredSnapshotRenews: a queue whose snapshot expired keeps it
// without listing todo/ again when nothing arrived, though todo/ holds the
// sessions its filter excluded: they are not new.
func TestFilteredSnapshotRenews(t *testing.T) {
	for _, cached := range []bool{true, false} {
		t.Run(fmt.Sprintf("cache=%v", cached), func(t *testing.T) {
			b := ftBoard(t)
			if cached {
				if _, err := b.ScanState(sessions.Todo); err != nil {
					t.Fatal(err)
				}
			}
			// Not docs: g, which waits on dependencies (a renewal has to
			// list then), is excluded.
			f, err := sessions.NewTagFilter(nil, []string{"docs"})
			if err != nil {
				t.Fatal(err)
			}
			q := pkClient(t, b, "alice").NewQueue(claim.NextOptions{Filter: f, Snapshot: time.Nanosecond})
			var listings atomic.Int64
			claim.CountListings(q, &listings)
			for _, want := range []string{"n00", "n01", "n02"} {
				s, err := q.Next(context.Background())
				if err != nil || s.ID != want {
					t.Fatalf("Next = %s, %v; want %s", s.ID, err, want)
				}
			}
			if n := listings.Load(); n != 1 {
				t.Errorf("3 claims listed todo/ %d times, want once (then renewed)", n)
			}
		})
	}
}
