package claim_test

// Waiting under load and against the clock: --wait timeouts, and bursts of
// new sessions among many waiters (wait_test.go has the wake-ups).

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/testbound"
	"github.com/pickup-dev/pickup/sessions"
	"golang.org/x/sync/errgroup"
)

// TestWaitTimeout: at the context's deadline Wait reports ErrNothingAvailable
// and leaves the board as it was.
func TestWaitTimeout(t *testing.T) {
	tests := []struct {
		name    string
		place   map[string]sessions.State // id -> state (doing: owner "other")
		blocked bool                      // the error tells of sessions waiting on dependencies
	}{
		{name: "empty board"},
		{name: "everything claimed or done", place: map[string]sessions.State{"a": sessions.Doing, "b": sessions.Done}},
		{name: "set aside in failed/", place: map[string]sessions.State{"a": sessions.Failed}},
		{name: "todo waits on an unfinished dependency", place: map[string]sessions.State{"a": sessions.Doing, "b": sessions.Todo}, blocked: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := pkBoard(t)
			b.NoSync = true
			for id, st := range tt.place {
				var m sessions.Meta
				owner := ""
				if st == sessions.Doing {
					owner = "other"
				}
				if st == sessions.Todo {
					m.DependsOn = []string{"a"}
				}
				pkPut(t, b, st, owner, id, m)
			}
			before, err := pkWalk(b)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			s, err := pkClient(t, pkOwnBoard(b), "waiter").NewQueue(claim.NextOptions{}).Wait(ctx, claim.WaitOptions{})
			if !errors.Is(err, claim.ErrNothingAvailable) {
				t.Fatalf("Wait = %+v, %v; want ErrNothingAvailable", s, err)
			}
			if got := strings.Contains(err.Error(), "dependencies"); got != tt.blocked {
				t.Errorf("error %q mentions dependencies: %v, want %v", err, got, tt.blocked)
			}
			after, err := pkWalk(b)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(before) != fmt.Sprint(after) {
				t.Errorf("the board changed: %v, was %v", after, before)
			}
		})
	}
}

// TestWaitBurst: sessions created in a burst (Board.Create, NoSync) while
// 4 waiters wait, each its own Client and Queue calling Wait in a loop:
// every session is claimed exactly once (PICKUP_TEST_SCALE scales the
// bursts). The safety rescan is an hour, so
// the waiters live on events and on the rescans that overflows and
// "nothing available" listings cause.
func TestWaitBurst(t *testing.T) {
	tests := []struct {
		name     string
		sessions int
		snapshot time.Duration // the waiters' NextOptions.Snapshot
	}{
		// work --wait: a Queue with a snapshot, invalidated by events.
		{name: "10000 sessions, 1s snapshot", sessions: 10000, snapshot: time.Second},
		// next --wait: every Next lists todo/ (and its cache) again, so a
		// claim costs O(backlog): 10,000 this way took 140 s without -race
		// and did not finish in 3 minutes with it. 1,000 keep it short.
		{name: "1000 sessions, no snapshot", sessions: 1000},
	}
	const waiters = 4
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := testbound.Scaled(t, tt.sessions, 100)
			if testing.Short() {
				n = min(n, 1000)
			}
			b := pkBoard(t)
			b.NoSync = true
			// The creator's clock moves one second per session, so that each
			// id is a plain timestamp (Create tries suffixes in order within
			// one second).
			var tick atomic.Int64
			epoch := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
			creator := &sessions.Board{Dir: b.Dir, NoSync: true, Now: func() time.Time {
				return epoch.Add(time.Duration(tick.Add(1)) * time.Second)
			}}
			// The test ends when everything is claimed, or when no session
			// was claimed for testbound.Idle (a busy machine claims slowly;
			// a broken waiter not at all).
			bound := testbound.New(t, 0)
			all, allClaimed := context.WithCancel(bound.Context())
			defer allClaimed()
			var claimed atomic.Int64
			created := make([]string, 0, n)
			wins := make([][]string, waiters)
			t0 := time.Now()
			var g errgroup.Group
			g.Go(func() error {
				for i := 0; i < n && all.Err() == nil; i++ {
					s, err := creator.Create(sessions.Meta{Title: fmt.Sprintf("burst %d", i)}, nil)
					if err != nil {
						return err
					}
					created = append(created, s.ID)
				}
				return nil
			})
			for w := 0; w < waiters; w++ {
				g.Go(func() error {
					c, err := claim.New(pkOwnBoard(b), fmt.Sprintf("w%d", w))
					if err != nil {
						return err
					}
					q := c.NewQueue(claim.NextOptions{Snapshot: tt.snapshot})
					opts := claim.WaitOptions{Rescan: waNever}
					for all.Err() == nil {
						ctx, cancel := context.WithTimeout(all, 10*time.Second)
						s, err := q.Wait(ctx, opts)
						cancel()
						if errors.Is(err, claim.ErrNothingAvailable) {
							continue // the deadline or the end: the loop decides
						}
						if err != nil {
							return fmt.Errorf("waiter %d: %w", w, err)
						}
						wins[w] = append(wins[w], s.ID)
						bound.Progress("waiter %d claimed %s", w, s.ID)
						if claimed.Add(1) == int64(n) {
							allClaimed()
						}
					}
					return nil
				})
			}
			if err := g.Wait(); err != nil {
				t.Fatal(err)
			}
			t.Logf("%d sessions created and claimed by %d waiters in %s (claims per waiter: %d %d %d %d)",
				n, waiters, time.Since(t0).Round(time.Millisecond), len(wins[0]), len(wins[1]), len(wins[2]), len(wins[3]))
			if got := claimed.Load(); got != int64(n) {
				t.Fatalf("%d of %d sessions claimed before the waiters stalled (%d created): %v", got, n, len(created), bound.Err())
			}
			byOwner := map[string][]string{}
			for w, list := range wins {
				byOwner[fmt.Sprintf("w%d", w)] = list
			}
			pkCheckClaimedOnce(t, b, created, byOwner)
		})
	}
}
