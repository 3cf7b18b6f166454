package claim_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/sessions"
)

// lineupBoard makes a board of n medium sessions s00, s01, … created in
// that order, and warms the listing cache, so that a Queue with a snapshot
// reads todo/ as a lineup from it.
func lineupBoard(t *testing.T, n int) (*sessions.Board, []string) {
	t.Helper()
	b := pkBoard(t)
	at := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	var ids []string
	for i := range n {
		id := fmt.Sprintf("s%02d", i)
		pkPut(t, b, sessions.Todo, "", id, sessions.Meta{Priority: sessions.Medium, CreatedAt: at.Add(time.Duration(i) * time.Minute)})
		ids = append(ids, id)
	}
	if _, err := b.ListState(sessions.Todo, true); err != nil {
		t.Fatal(err)
	}
	return b, ids
}

// drainQueue claims through q until nothing is available and returns the
// ids in the order claimed, and the error that ended it.
func drainQueue(q *claim.Queue) ([]string, error) {
	var got []string
	for {
		s, err := q.Next(context.Background())
		if err != nil {
			return got, err
		}
		got = append(got, s.ID)
	}
}

// TestQueueLineup drains boards through a Queue with a snapshot, which
// reads todo/ as a lineup from the listing cache and decodes each session
// when its turn comes, and checks that it claims exactly what and in the
// order that a full listing would.
func TestQueueLineup(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, b *sessions.Board) // before the first claim
		// change runs after the queue's first claim (s00), once it holds
		// its lineup.
		change  func(t *testing.T, b *sessions.Board)
		want    []string // claimed after s00, in order
		wantErr string
	}{
		{name: "in board order", want: seq(1, 10)},
		{name: "an edited session is put back in order", change: func(t *testing.T, b *sessions.Board) {
			// Written in place (same inode): only Refresh sees it.
			pkPut(t, b, sessions.Todo, "", "s03", sessions.Meta{Priority: sessions.Low})
			pkPut(t, b, sessions.Todo, "", "s07", sessions.Meta{Priority: sessions.High})
		}, want: append(append([]string{"s01", "s02", "s04", "s05", "s06", "s07"}, seq(8, 10)...), "s03")},
		{name: "sessions taken by others are skipped", change: func(t *testing.T, b *sessions.Board) {
			other := pkClient(t, b, "bob")
			for _, id := range []string{"s01", "s05", "s09"} {
				if _, err := other.Claim(context.Background(), id); err != nil {
					t.Fatal(err)
				}
			}
		}, want: []string{"s02", "s03", "s04", "s06", "s07", "s08"}},
		{name: "a damaged cache line is read from its file", setup: func(t *testing.T, b *sessions.Board) {
			damageCacheLine(t, b, "s04.md")
		}, want: seq(1, 10)},
		{name: "a copy in doing is left for doctor", setup: func(t *testing.T, b *sessions.Board) {
			pkPut(t, b, sessions.Doing, "alice", "s05", sessions.Meta{})
		}, want: append(seq(1, 5), seq(6, 10)...), wantErr: "1 session(s) in todo already have a copy in doing/"},
	}
	for _, tt := range tests {
		// Renewed on every call, the snapshot is brought up to date from
		// a read of todo/ (the sessions left in the lineup are matched
		// against it); kept for an hour, it is used as it is.
		for _, snapshot := range []time.Duration{time.Hour, time.Nanosecond} {
			t.Run(fmt.Sprintf("%s/snapshot=%s", tt.name, snapshot), func(t *testing.T) {
				b, _ := lineupBoard(t, 10)
				if tt.setup != nil {
					tt.setup(t, b)
				}
				q := pkClient(t, b, "alice").NewQueue(claim.NextOptions{Snapshot: snapshot})
				if s, err := q.Next(context.Background()); err != nil || s.ID != "s00" {
					t.Fatalf("first Next = %q, %v; want s00", s.ID, err)
				}
				if tt.change != nil {
					tt.change(t, b)
				}
				got, err := drainQueue(q)
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("claimed %v, want %v", got, tt.want)
				}
				if !errors.Is(err, claim.ErrNothingAvailable) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("drain ended with %v, want nothing available, saying %q", err, tt.wantErr)
				}
			})
		}
	}
}

// TestQueueLineupDependencies: a lineup skips the sessions that wait on
// unfinished dependencies, says how many, and a renewed snapshot looks
// again once one is done.
func TestQueueLineupDependencies(t *testing.T) {
	b, _ := lineupBoard(t, 3)
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	pkPut(t, b, sessions.Todo, "", "waits", sessions.Meta{Priority: sessions.High, CreatedAt: at, DependsOn: []string{"s02"}})
	if _, err := b.ListState(sessions.Todo, true); err != nil {
		t.Fatal(err)
	}
	c := pkClient(t, b, "alice")
	q := c.NewQueue(claim.NextOptions{Snapshot: time.Hour})
	got, err := drainQueue(q)
	if want := seq(0, 3); !reflect.DeepEqual(got, want) {
		t.Errorf("claimed %v, want %v", got, want)
	}
	if !errors.Is(err, claim.ErrNothingAvailable) || !strings.Contains(err.Error(), "1 session(s) in todo wait on unfinished dependencies") {
		t.Errorf("drain ended with %v; want nothing available, 1 waiting on dependencies", err)
	}
	if _, err := c.Done(context.Background(), "s02"); err != nil {
		t.Fatal(err)
	}
	if s, err := q.Next(context.Background()); err != nil || s.ID != "waits" {
		t.Errorf("Next once s02 is done = %q, %v; want waits", s.ID, err)
	}
}

// damageCacheLine makes the mtime field of name's line in the todo/
// listing cache unreadable.
func damageCacheLine(t *testing.T, b *sessions.Board, name string) {
	t.Helper()
	path := b.RuntimeDir() + "/cache/todo.v5" // sessions.cachePath
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	for i, l := range lines {
		if fields := strings.Split(l, "\t"); fields[0] == name {
			fields[2] = "soon"
			lines[i] = strings.Join(fields, "\t")
		}
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
}

// seq returns s<from> … s<to-1>.
func seq(from, to int) []string {
	var ids []string
	for i := from; i < to; i++ {
		ids = append(ids, fmt.Sprintf("s%02d", i))
	}
	return ids
}

// TestQueueSnapshotRenewal: a Queue with a snapshot takes sessions in board
// order across the expiries of its snapshot, and what happened to todo/
// meanwhile counts as if it listed todo/ again each time: sessions taken by
// others are skipped, a new or returned session is taken in its turn, a
// session whose dependency is no longer done is not taken, and one edited
// since the listing is taken in its new place.
func TestQueueSnapshotRenewal(t *testing.T) {
	const snapshot = 30 * time.Millisecond
	b := pkBoard(t)
	b.NoSync = true
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	// q00..q29 in that order: more than a heap's worth, so the queue also
	// orders what is left of its snapshot by sorting.
	for i := 0; i < 30; i++ {
		m := sessions.Meta{CreatedAt: t0.Add(time.Duration(i) * time.Second)}
		if i == 9 {
			m.DependsOn = []string{"dep"}
		}
		pkPut(t, b, sessions.Todo, "", fmt.Sprintf("q%02d", i), m)
	}
	pkPut(t, b, sessions.Done, "", "dep", sessions.Meta{})
	q := pkClient(t, b, "queue").NewQueue(claim.NextOptions{Snapshot: snapshot})
	other := pkClient(t, b, "other")
	next := func(want string) {
		t.Helper()
		s, err := q.Next(context.Background())
		if err != nil {
			t.Fatalf("Next: %v, want %s", err, want)
		}
		if s.ID != want {
			t.Fatalf("Next took %s, want %s", s.ID, want)
		}
	}
	expire := func() { time.Sleep(snapshot + 10*time.Millisecond) }

	next("q00")
	next("q01")
	for _, id := range []string{"q02", "q03", "q04", "q05", "q12"} {
		if _, err := other.Claim(context.Background(), id); err != nil {
			t.Fatal(err)
		}
	}
	next("q06") // the snapshot, as it is
	expire()
	next("q07") // renewed: what others took is gone from it
	expire()
	pkPut(t, b, sessions.Todo, "", "new", sessions.Meta{Priority: sessions.High, CreatedAt: t0.Add(time.Hour)})
	next("new") // arrived after the listing: seen, and first
	if _, err := other.Release(context.Background(), "q02"); err != nil {
		t.Fatal(err)
	}
	expire()
	next("q02") // back in todo/: before q08 again
	// q09's dependency is not done any more (moved aside by hand): a
	// listing would leave q09 out, and so must the renewed snapshot.
	if err := os.Rename(b.Path(sessions.Done, "", "dep"), filepath.Join(b.Dir, "dep.md")); err != nil {
		t.Fatal(err)
	}
	expire()
	next("q08")
	for i := 10; i <= 20; i++ {
		if i != 12 {
			next(fmt.Sprintf("q%02d", i))
		}
	}
	// Edited in place, now low: taken last (what is left of the snapshot
	// is sorted by now).
	pkPutRaw(t, b, sessions.Todo, "", "q26", pkContent("q26", sessions.Meta{Priority: sessions.Low, CreatedAt: t0}))
	for _, id := range []string{"q21", "q22", "q23", "q24", "q25", "q27", "q28", "q29", "q26"} {
		next(id)
	}
	_, err := q.Next(context.Background())
	if !errors.Is(err, claim.ErrNothingAvailable) || !strings.Contains(err.Error(), "1 session(s) in todo wait") {
		t.Fatalf("Next at the end: %v, want nothing available with one waiting on dependencies", err)
	}
}

// TestQueueShared: goroutines sharing one Queue, with other owners'
// queues racing them, claim every session exactly once.
func TestQueueShared(t *testing.T) {
	const n, shared, others = 400, 6, 3
	b := pkBoard(t)
	b.NoSync = true
	for i := 0; i < n; i++ {
		pkPut(t, b, sessions.Todo, "", fmt.Sprintf("s%03d", i), sessions.Meta{Priority: sessions.Priority(1 + i%3)})
	}
	q := pkClient(t, pkOwnBoard(b), "shared").NewQueue(claim.NextOptions{Snapshot: time.Second})
	var (
		mu      sync.Mutex
		claimed = map[string]string{}
		wg      sync.WaitGroup
	)
	drain := func(owner string, q *claim.Queue) {
		defer wg.Done()
		for {
			s, err := q.Next(context.Background())
			if errors.Is(err, claim.ErrNothingAvailable) {
				return
			}
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			if prev, ok := claimed[s.ID]; ok {
				t.Errorf("%s claimed by %s and %s", s.ID, prev, owner)
			}
			claimed[s.ID] = owner
			mu.Unlock()
		}
	}
	for g := 0; g < shared; g++ {
		wg.Add(1)
		go drain("shared", q)
	}
	for g := 0; g < others; g++ {
		wg.Add(1)
		owner := fmt.Sprintf("other%d", g)
		go drain(owner, pkClient(t, pkOwnBoard(b), owner).NewQueue(claim.NextOptions{Snapshot: time.Second}))
	}
	wg.Wait()
	if len(claimed) != n {
		t.Fatalf("%d sessions claimed, want %d", len(claimed), n)
	}
	for id, owner := range claimed {
		if got, want := pkWhere(t, b, id), "doing/"+owner; got != want {
			t.Errorf("%s is in %s, want %s", id, got, want)
		}
	}
}
