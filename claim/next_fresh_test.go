package claim_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/sessions"
)

// freshBoard is a board of n normal sessions (n00, n01, …, in that order)
// whose one-shot next trusts a full listing for an hour, with a stamp
// already in place: alice's first Next listed todo/ (and took n00).
func freshBoard(t *testing.T, n int, tags ...string) (*sessions.Board, *claim.Client) {
	t.Helper()
	b := pkBoard(t)
	b.LineupAge = time.Hour
	for i := range n {
		id := fmt.Sprintf("n%02d", i)
		pkPut(t, b, sessions.Todo, "", id, sessions.Meta{Tags: tags, CreatedAt: time.Date(2026, 1, 2, 3, 4, i, 0, time.UTC)})
	}
	if _, err := b.List(sessions.Todo); err != nil { // the cache, as any listing writes it
		t.Fatal(err)
	}
	c := pkClient(t, b, "alice")
	if s, err := c.Next(context.Background()); err != nil || s.ID != "n00" {
		t.Fatalf("first Next = %v, %v; want n00", s.ID, err)
	}
	if data, err := os.ReadFile(filepath.Join(b.RuntimeDir(), "cache", "todo.seen.v5")); err != nil || len(data) == 0 {
		t.Fatalf("no stamp after a full listing (%v): the tests below would not test the lineup", err)
	}
	return b, c
}

func pkNext(t *testing.T, c *claim.Client, f sessions.TagFilter) string {
	t.Helper()
	s, err := c.NewQueue(claim.NextOptions{Filter: f}).Next(context.Background())
	if err != nil {
		t.Fatalf("Next: %v", err)
	}
	return s.ID
}

// TestNextFreshSeesPickupArrivals: a session that pickup itself puts in
// todo/ is taken by the very next next, in priority order, although that
// next trusts a listing made before it arrived.
func TestNextFreshSeesPickupArrivals(t *testing.T) {
	high := sessions.Meta{Priority: sessions.High, Tags: []string{"x"}, CreatedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	for _, tc := range []struct {
		name   string
		filter sessions.TagFilter
		arrive func(t *testing.T, b *sessions.Board, c *claim.Client) string // returns the id next must take
	}{
		{"new", sessions.TagFilter{}, func(t *testing.T, b *sessions.Board, c *claim.Client) string {
			s, err := b.Create(high, []byte("# new\n"))
			if err != nil {
				t.Fatal(err)
			}
			return s.ID
		}},
		{"new, tag filter", sessions.TagFilter{Tags: []string{"x"}}, func(t *testing.T, b *sessions.Board, c *claim.Client) string {
			s, err := b.Create(high, []byte("# new\n"))
			if err != nil {
				t.Fatal(err)
			}
			return s.ID
		}},
		{"release unchanged", sessions.TagFilter{}, func(t *testing.T, b *sessions.Board, c *claim.Client) string {
			if _, err := c.Release(context.Background(), "n00"); err != nil {
				t.Fatal(err)
			}
			return "n00"
		}},
		{"release edited", sessions.TagFilter{}, func(t *testing.T, b *sessions.Board, c *claim.Client) string {
			// n05 claimed, made high priority while held, released: it
			// now comes first although its line says otherwise.
			if _, err := c.Claim(context.Background(), "n05"); err != nil {
				t.Fatal(err)
			}
			// Rewritten as pickup and editors do: a new file renamed
			// over the old one (a new inode).
			p := b.Path(sessions.Doing, "alice", "n05")
			if err := os.WriteFile(p+".tmp", pkContent("n05", sessions.Meta{Priority: sessions.High, CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(p+".tmp", p); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Release(context.Background(), "n05"); err != nil {
				t.Fatal(err)
			}
			return "n05"
		}},
		{"reopen", sessions.TagFilter{}, func(t *testing.T, b *sessions.Board, c *claim.Client) string {
			pkPut(t, b, sessions.Done, "", "d1", high)
			if _, err := c.Reopen(context.Background(), "d1"); err != nil {
				t.Fatal(err)
			}
			return "d1"
		}},
		{"requeue", sessions.TagFilter{}, func(t *testing.T, b *sessions.Board, c *claim.Client) string {
			pkPut(t, b, sessions.Failed, "", "f1", high)
			if _, err := c.Requeue(context.Background(), "f1"); err != nil {
				t.Fatal(err)
			}
			return "f1"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, c := freshBoard(t, 20, "x")
			want := tc.arrive(t, b, c)
			if got := pkNext(t, pkClient(t, b, "bob"), tc.filter); got != want {
				t.Fatalf("next took %s, want %s, which pickup put in todo/ before it", got, want)
			}
		})
	}
}

// TestNextFreshHandCopy: a file copied into todo/ by hand (or by a plain
// git pull) is not seen while the listing is trusted, and is taken once
// the listing is older than the board's LineupAge.
func TestNextFreshHandCopy(t *testing.T) {
	b, c := freshBoard(t, 20)
	pkPut(t, b, sessions.Todo, "", "hand", sessions.Meta{Priority: sessions.High})
	if got := pkNext(t, c, sessions.TagFilter{}); got != "n01" {
		t.Fatalf("next took %s, want n01 from the trusted listing (is the lineup used at all?)", got)
	}
	b.LineupAge = 50 * time.Millisecond
	time.Sleep(60 * time.Millisecond)
	if got := pkNext(t, c, sessions.TagFilter{}); got != "hand" {
		t.Fatalf("next took %s, want hand: the listing is older than LineupAge", got)
	}
}

// TestNextFreshNothingNeedsTwoListings: a trusted listing that holds no
// claimable session is no listing: "nothing available" still takes two full
// listings in a row. Here the lineup holds only a session that waits on a
// dependency, a session copied by hand waits too, and the first full
// listing misses it (as readdir may): the second finds it.
func TestNextFreshNothingNeedsTwoListings(t *testing.T) {
	b := pkBoard(t)
	b.LineupAge = time.Hour
	pkPut(t, b, sessions.Todo, "", "first", sessions.Meta{Priority: sessions.High})
	pkPut(t, b, sessions.Todo, "", "waits", sessions.Meta{DependsOn: []string{"never"}})
	if _, err := b.List(sessions.Todo); err != nil {
		t.Fatal(err)
	}
	c := pkClient(t, b, "alice")
	if s, err := c.Next(context.Background()); err != nil || s.ID != "first" {
		t.Fatalf("first Next = %v, %v; want first", s.ID, err)
	}
	pkPut(t, b, sessions.Todo, "", "hand", sessions.Meta{})
	q := pkClient(t, b, "bob").NewQueue(claim.NextOptions{})
	claim.MissListings(q, 1)
	s, err := q.Next(context.Background())
	if err != nil || s.ID != "hand" {
		t.Fatalf("Next = %v, %v; want hand, which the second full listing sees", s.ID, err)
	}
	claim.MissListings(q, 0)
	if _, err := q.Next(context.Background()); !errors.Is(err, claim.ErrNothingAvailable) {
		t.Fatalf("Next with only a waiting session = %v, want ErrNothingAvailable", err)
	}
}
