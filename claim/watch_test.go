package claim_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/sessions"
)

// wsProbe is the prefix of the sessions the watch tests write to know that
// Watch sees todo/; their changes are left out of what a test compares.
const wsProbe = "zz-probe-"

// wsWatch runs Watch on b until the test ends and returns its changes.
func wsWatch(t *testing.T, b *sessions.Board) <-chan claim.Change {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	changes := make(chan claim.Change, 1<<14)
	errc := make(chan error, 1)
	go func() {
		errc <- claim.Watch(ctx, pkOwnBoard(b), func(c claim.Change) { changes <- c })
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("Watch: %v", err)
		}
	})
	return changes
}

// wsReady writes probe sessions to todo/ until Watch reports one: from then
// on it watches every directory it had when it started.
func wsReady(t *testing.T, b *sessions.Board, changes <-chan claim.Change) {
	t.Helper()
	deadline := time.After(waPatience)
	for i := 0; ; i++ {
		id := fmt.Sprintf("%sready-%d", wsProbe, i)
		pkPut(t, b, sessions.Todo, "", id, sessions.Meta{})
		tick := time.After(50 * time.Millisecond)
		for {
			select {
			case c := <-changes:
				if c.ID == id && c.Event == "todo" {
					return
				}
				continue
			case <-tick:
			case <-deadline:
				t.Fatal("Watch never reported a session written to todo/")
			}
			break
		}
	}
}

var wsSentinels atomic.Int64

// wsUntilSentinel writes one more probe session and returns every change
// reported before it, probes left out, with Time checked and zeroed.
func wsUntilSentinel(t *testing.T, b *sessions.Board, changes <-chan claim.Change) []claim.Change {
	t.Helper()
	sentinel := fmt.Sprintf("%ssentinel-%d", wsProbe, wsSentinels.Add(1))
	pkPut(t, b, sessions.Todo, "", sentinel, sessions.Meta{})
	var got []claim.Change
	deadline := time.After(waPatience)
	for {
		select {
		case c := <-changes:
			if c.ID == sentinel && c.Event == "todo" {
				return got
			}
			if strings.HasPrefix(c.ID, wsProbe) {
				continue
			}
			if c.Time.IsZero() || c.Time.Location() != time.UTC {
				t.Errorf("change %+v: time is zero or not UTC", c)
			}
			c.Time = time.Time{}
			got = append(got, c)
		case <-deadline:
			t.Fatalf("Watch never reported the sentinel; got so far: %+v", got)
		}
	}
}

// TestWatch: each change on the board is reported once, as the arrival in
// its new state, with the owner for a claim, including a claim that makes
// the owner's directory.
func TestWatch(t *testing.T) {
	put := func(st sessions.State, owner, id string) func(*testing.T, *sessions.Board) {
		return func(t *testing.T, b *sessions.Board) { pkPut(t, b, st, owner, id, sessions.Meta{}) }
	}
	as := func(owner string, op func(*claim.Client, context.Context, string) (sessions.Session, error), id string) func(*testing.T, *sessions.Board) string {
		return func(t *testing.T, b *sessions.Board) string {
			if _, err := op(pkClient(t, pkOwnBoard(b), owner), context.Background(), id); err != nil {
				t.Fatal(err)
			}
			return id
		}
	}
	tests := []struct {
		name  string
		setup func(*testing.T, *sessions.Board)
		act   func(*testing.T, *sessions.Board) string // returns the id it changed
		want  claim.Change                             // ID: the one act returned
	}{
		{
			name: "new session (Board.Create)",
			act: func(t *testing.T, b *sessions.Board) string {
				s, err := b.Create(sessions.Meta{Title: "new"}, nil)
				if err != nil {
					t.Fatal(err)
				}
				return s.ID
			},
			want: claim.Change{Event: "todo", State: sessions.Todo},
		},
		{
			name: "new session written in place (create, then write)",
			act: func(t *testing.T, b *sessions.Board) string {
				put(sessions.Todo, "", "x")(t, b)
				return "x"
			},
			want: claim.Change{Event: "todo", State: sessions.Todo},
		},
		{
			name: "claimed by an owner whose directory exists",
			setup: func(t *testing.T, b *sessions.Board) {
				put(sessions.Todo, "", "x")(t, b)
				if err := os.MkdirAll(b.StateDir(sessions.Doing, "alice"), 0o755); err != nil {
					t.Fatal(err)
				}
			},
			act:  as("alice", (*claim.Client).Claim, "x"),
			want: claim.Change{Event: "claimed", State: sessions.Doing, Owner: "alice"},
		},
		{
			name:  "claimed by a new owner: the claim makes its directory",
			setup: put(sessions.Todo, "", "x"),
			act:   as("bob", (*claim.Client).Claim, "x"),
			want:  claim.Change{Event: "claimed", State: sessions.Doing, Owner: "bob"},
		},
		{
			// Deterministic form of the case above: the sessions are in the
			// owner's directory before Watch can watch it (a git pull or a
			// sync tool bringing doing/erin/ with its sessions).
			name: "an owner's directory arriving with a session in it",
			act: func(t *testing.T, b *sessions.Board) string {
				staged := filepath.Join(b.Dir, "staged-erin")
				if err := os.MkdirAll(staged, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(staged, "x.md"), pkContent("x", sessions.Meta{}), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(staged, b.StateDir(sessions.Doing, "erin")); err != nil {
					t.Fatal(err)
				}
				return "x"
			},
			want: claim.Change{Event: "claimed", State: sessions.Doing, Owner: "erin"},
		},
		{
			name:  "done",
			setup: put(sessions.Doing, "alice", "x"),
			act:   as("alice", (*claim.Client).Done, "x"),
			want:  claim.Change{Event: "done", State: sessions.Done},
		},
		{
			name:  "released",
			setup: put(sessions.Doing, "alice", "x"),
			act:   as("alice", (*claim.Client).Release, "x"),
			want:  claim.Change{Event: "todo", State: sessions.Todo},
		},
		{
			name:  "reopened",
			setup: put(sessions.Done, "", "x"),
			act:   as("alice", (*claim.Client).Reopen, "x"),
			want:  claim.Change{Event: "todo", State: sessions.Todo},
		},
		{
			name:  "removed from todo",
			setup: put(sessions.Todo, "", "x"),
			act: func(t *testing.T, b *sessions.Board) string {
				if err := os.Remove(b.Path(sessions.Todo, "", "x")); err != nil {
					t.Fatal(err)
				}
				return "x"
			},
			want: claim.Change{Event: "removed", State: sessions.Todo},
		},
		{
			name:  "removed from an owner's directory",
			setup: put(sessions.Doing, "alice", "x"),
			act: func(t *testing.T, b *sessions.Board) string {
				if err := os.Remove(b.Path(sessions.Doing, "alice", "x")); err != nil {
					t.Fatal(err)
				}
				return "x"
			},
			want: claim.Change{Event: "removed", State: sessions.Doing, Owner: "alice"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := pkBoard(t)
			b.NoSync = true
			if tt.setup != nil {
				tt.setup(t, b)
			}
			changes := wsWatch(t, b)
			wsReady(t, b, changes)
			want := tt.want
			want.ID = tt.act(t, b)
			got := wsUntilSentinel(t, b, changes)
			if !slices.Equal(got, []claim.Change{want}) {
				t.Errorf("changes = %+v, want exactly %+v", got, want)
			}
		})
	}
}

// TestWatchNewOwnerLater: once Watch has seen an owner's directory appear,
// it reports that owner's later claims too.
func TestWatchNewOwnerLater(t *testing.T) {
	b := pkBoard(t)
	b.NoSync = true
	pkPut(t, b, sessions.Todo, "", "x", sessions.Meta{})
	changes := wsWatch(t, b)
	wsReady(t, b, changes)
	if err := os.MkdirAll(b.StateDir(sessions.Doing, "dave"), 0o755); err != nil {
		t.Fatal(err)
	}
	wsUntilSentinel(t, b, changes) // Watch has handled the directory's creation
	if _, err := pkClient(t, pkOwnBoard(b), "dave").Claim(context.Background(), "x"); err != nil {
		t.Fatal(err)
	}
	got := wsUntilSentinel(t, b, changes)
	want := claim.Change{Event: "claimed", ID: "x", State: sessions.Doing, Owner: "dave"}
	if !slices.Equal(got, []claim.Change{want}) {
		t.Errorf("changes = %+v, want exactly %+v", got, want)
	}
}
