package claim_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/testbound"
	"github.com/pickup-dev/pickup/sessions"
)

// waNever is a safety rescan long enough never to fire during a test: a
// waiter that claims anything then did it because of an event.
const waNever = time.Hour

// waPatience bounds how long a test waits for something that should happen
// at once; it only keeps a broken waiter from hanging the test, and leaves
// room for a busy machine many times slower than a quiet one.
const waPatience = testbound.Idle

// waSpy wraps a notifier and reports each time the waiter goes to sleep:
// Wait evaluates Events() at the top of its select, which it only reaches
// after a look at the board found nothing to claim.
type waSpy struct {
	claim.Notifier
	asleep chan struct{}
}

func (s *waSpy) Events() <-chan fsnotify.Event {
	select {
	case s.asleep <- struct{}{}:
	default:
	}
	return s.Notifier.Events()
}

// waFake is a notifier that delivers only what the test sends it.
type waFake struct {
	events chan fsnotify.Event
	errors chan error
	closed atomic.Bool
}

func newWAFake() *waFake {
	return &waFake{events: make(chan fsnotify.Event), errors: make(chan error)}
}

func (f *waFake) Events() <-chan fsnotify.Event { return f.events }
func (f *waFake) Errors() <-chan error          { return f.errors }
func (f *waFake) Close() error                  { f.closed.Store(true); return nil }

type waResult struct {
	s   sessions.Session
	err error
}

// waStart runs one Wait in the background.
func waStart(ctx context.Context, q *claim.Queue, opts claim.WaitOptions) <-chan waResult {
	out := make(chan waResult, 1)
	go func() {
		s, err := q.Wait(ctx, opts)
		out <- waResult{s, err}
	}()
	return out
}

// waAsleep waits until the spy says the waiter sleeps, failing the test if
// it returns first or never gets there.
func waAsleep(t *testing.T, asleep <-chan struct{}, res <-chan waResult) {
	t.Helper()
	select {
	case <-asleep:
	case r := <-res:
		t.Fatalf("Wait returned before anything was there to claim: %+v, %v", r.s, r.err)
	case <-time.After(waPatience):
		t.Fatal("the waiter never went to sleep")
	}
}

// waClaimed checks that Wait claimed want for owner, and that the board
// agrees.
func waClaimed(t *testing.T, b *sessions.Board, r waResult, owner, want string) {
	t.Helper()
	if r.err != nil {
		t.Fatalf("Wait = %v, want it to claim %s", r.err, want)
	}
	if r.s.ID != want || r.s.State != sessions.Doing || r.s.Owner != owner {
		t.Fatalf("Wait claimed %s (%s, owner %q), want %s in doing/%s", r.s.ID, r.s.State, r.s.Owner, want, owner)
	}
	if got := pkWhere(t, b, want); got != "doing/"+owner {
		t.Fatalf("%s is in %s after Wait, want doing/%s", want, got, owner)
	}
}

// TestWaitWakesUp: a waiter that found nothing claims the session that
// becomes claimable, and only through the event: the safety rescan is an
// hour away.
func TestWaitWakesUp(t *testing.T) {
	dep := func(ids ...string) sessions.Meta { return sessions.Meta{DependsOn: ids} }
	tests := []struct {
		name  string
		setup func(t *testing.T, b *sessions.Board, other *claim.Client)
		// act makes a session claimable once the waiter sleeps; it returns
		// the id the waiter must claim.
		act func(t *testing.T, b *sessions.Board, other *claim.Client) string
	}{
		{
			name: "new session (Board.Create)",
			act: func(t *testing.T, b *sessions.Board, _ *claim.Client) string {
				s, err := b.Create(sessions.Meta{Title: "fresh"}, []byte("body\n"))
				if err != nil {
					t.Fatal(err)
				}
				return s.ID
			},
		},
		{
			name: "session file written in place by hand",
			act: func(t *testing.T, b *sessions.Board, _ *claim.Client) string {
				pkPut(t, b, sessions.Todo, "", "hand", sessions.Meta{})
				return "hand"
			},
		},
		{
			name: "release",
			setup: func(t *testing.T, b *sessions.Board, _ *claim.Client) {
				pkPut(t, b, sessions.Doing, "other", "x", sessions.Meta{})
			},
			act: func(t *testing.T, _ *sessions.Board, other *claim.Client) string {
				if _, err := other.Release(context.Background(), "x"); err != nil {
					t.Fatal(err)
				}
				return "x"
			},
		},
		{
			name: "reopen",
			setup: func(t *testing.T, b *sessions.Board, _ *claim.Client) {
				pkPut(t, b, sessions.Done, "", "x", sessions.Meta{})
			},
			act: func(t *testing.T, _ *sessions.Board, other *claim.Client) string {
				if _, err := other.Reopen(context.Background(), "x"); err != nil {
					t.Fatal(err)
				}
				return "x"
			},
		},
		{
			name: "requeue from failed",
			setup: func(t *testing.T, b *sessions.Board, _ *claim.Client) {
				pkPut(t, b, sessions.Failed, "", "x", sessions.Meta{Attempts: 3})
			},
			act: func(t *testing.T, _ *sessions.Board, other *claim.Client) string {
				if _, err := other.Requeue(context.Background(), "x"); err != nil {
					t.Fatal(err)
				}
				return "x"
			},
		},
		{
			name: "reap of a dead owner by someone else",
			setup: func(t *testing.T, b *sessions.Board, _ *claim.Client) {
				// No lease and a fresh claim: nobody may reap it yet.
				pkPut(t, b, sessions.Doing, "gone", "x", sessions.Meta{})
			},
			act: func(t *testing.T, b *sessions.Board, _ *claim.Client) string {
				l := &claim.Leases{Board: &sessions.Board{Dir: b.Dir, NoSync: true}}
				if _, err := l.Heartbeat("gone", claim.Holder(deadProcess(t))); err != nil {
					t.Fatal(err)
				}
				if r, err := l.Reap(claim.ReapOptions{OnlyDead: true}); err != nil || len(r) != 1 {
					t.Fatalf("Reap = %+v, %v; want x reaped", r, err)
				}
				return "x"
			},
		},
		{
			name: "its only dependency finishes",
			setup: func(t *testing.T, b *sessions.Board, _ *claim.Client) {
				pkPut(t, b, sessions.Doing, "other", "a", sessions.Meta{})
				pkPut(t, b, sessions.Todo, "", "b", dep("a"))
			},
			act: func(t *testing.T, _ *sessions.Board, other *claim.Client) string {
				if _, err := other.Done(context.Background(), "a"); err != nil {
					t.Fatal(err)
				}
				return "b"
			},
		},
		{
			name: "the last of two dependencies finishes",
			setup: func(t *testing.T, b *sessions.Board, _ *claim.Client) {
				pkPut(t, b, sessions.Done, "", "a1", sessions.Meta{})
				pkPut(t, b, sessions.Doing, "other", "a2", sessions.Meta{})
				pkPut(t, b, sessions.Todo, "", "b", dep("a1", "a2"))
			},
			act: func(t *testing.T, _ *sessions.Board, other *claim.Client) string {
				if _, err := other.Done(context.Background(), "a2"); err != nil {
					t.Fatal(err)
				}
				return "b"
			},
		},
		{
			name: "two unblocked at once: the best by priority",
			setup: func(t *testing.T, b *sessions.Board, _ *claim.Client) {
				pkPut(t, b, sessions.Doing, "other", "a", sessions.Meta{})
				pkPut(t, b, sessions.Todo, "", "b-low", sessions.Meta{Priority: sessions.Low, DependsOn: []string{"a"}})
				pkPut(t, b, sessions.Todo, "", "c-high", sessions.Meta{Priority: sessions.High, DependsOn: []string{"a"}})
			},
			act: func(t *testing.T, _ *sessions.Board, other *claim.Client) string {
				if _, err := other.Done(context.Background(), "a"); err != nil {
					t.Fatal(err)
				}
				return "c-high"
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := pkBoard(t)
			b.NoSync = true
			other := pkClient(t, pkOwnBoard(b), "other")
			if tt.setup != nil {
				tt.setup(t, b, other)
			}
			asleep := make(chan struct{}, 1)
			opts := claim.WaitOptionsWith(waNever, func(dirs ...string) (claim.Notifier, error) {
				n, err := claim.NewFSWatcher(dirs...)
				if err != nil {
					return nil, err
				}
				return &waSpy{Notifier: n, asleep: asleep}, nil
			})
			ctx, cancel := context.WithTimeout(context.Background(), waPatience)
			defer cancel()
			q := pkClient(t, pkOwnBoard(b), "waiter").NewQueue(claim.NextOptions{})
			res := waStart(ctx, q, opts)
			waAsleep(t, asleep, res)
			want := tt.act(t, b, other)
			waClaimed(t, b, <-res, "waiter", want)
		})
	}
}

// TestWaitLostEvents: with a notifier that never delivers the event of a
// new session, the waiter still claims it: at once on an overflow or a
// watcher error, and within the safety rescan when nothing is delivered.
func TestWaitLostEvents(t *testing.T) {
	tests := []struct {
		name    string
		rescan  time.Duration
		deliver error // sent on Errors after the session is in todo/; nil: nothing
	}{
		{name: "event queue overflow", rescan: waNever, deliver: fsnotify.ErrEventOverflow},
		{name: "watcher error", rescan: waNever, deliver: errors.New("read inotify: input/output error")},
		{name: "nothing delivered: the safety rescan", rescan: 50 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := pkBoard(t)
			b.NoSync = true
			fake := newWAFake()
			asleep := make(chan struct{}, 1)
			var dirs []string
			opts := claim.WaitOptionsWith(tt.rescan, func(d ...string) (claim.Notifier, error) {
				dirs = d
				return &waSpy{Notifier: fake, asleep: asleep}, nil
			})
			ctx, cancel := context.WithTimeout(context.Background(), waPatience)
			defer cancel()
			q := pkClient(t, pkOwnBoard(b), "waiter").NewQueue(claim.NextOptions{})
			res := waStart(ctx, q, opts)
			waAsleep(t, asleep, res)
			pkPut(t, b, sessions.Todo, "", "x", sessions.Meta{})
			if tt.deliver != nil {
				select {
				case fake.errors <- tt.deliver:
				case r := <-res:
					t.Fatalf("Wait returned before the error was delivered: %+v, %v", r.s, r.err)
				}
			}
			waClaimed(t, b, <-res, "waiter", "x")
			if !fake.closed.Load() {
				t.Error("Wait did not close its notifier")
			}
			if want := []string{b.StateDir(sessions.Todo, ""), b.StateDir(sessions.Done, "")}; !slices.Equal(dirs, want) {
				t.Errorf("Wait watched %q, want %q", dirs, want)
			}
		})
	}
}

// TestWaitWithoutWatcher: a machine whose inotify limits refuse a watcher
// (too many instances, too many watches) still waits: the session made
// meanwhile is claimed at the next listing, within a second, however
// long the safety rescan; any other failure to watch is an error.
func TestWaitWithoutWatcher(t *testing.T) {
	for _, refused := range []error{
		fmt.Errorf("inotify_init1: %w", syscall.EMFILE),
		syscall.ENFILE,
		fmt.Errorf("watch todo: %w", syscall.ENOSPC),
	} {
		t.Run(refused.Error(), func(t *testing.T) {
			b := pkBoard(t)
			b.NoSync = true
			looked := make(chan struct{}, 1)
			opts := claim.WaitOptionsWith(waNever, func(...string) (claim.Notifier, error) {
				looked <- struct{}{}
				return nil, refused
			})
			ctx, cancel := context.WithTimeout(context.Background(), waPatience)
			defer cancel()
			q := pkClient(t, pkOwnBoard(b), "waiter").NewQueue(claim.NextOptions{})
			res := waStart(ctx, q, opts)
			<-looked
			time.Sleep(100 * time.Millisecond) // most often after its first look: then only a poll finds x
			pkPut(t, b, sessions.Todo, "", "x", sessions.Meta{})
			waClaimed(t, b, <-res, "waiter", "x")
		})
	}
	b := pkBoard(t)
	other := errors.New("inotify: permission denied")
	opts := claim.WaitOptionsWith(waNever, func(...string) (claim.Notifier, error) { return nil, other })
	ctx, cancel := context.WithTimeout(context.Background(), waPatience)
	defer cancel()
	if _, err := pkClient(t, b, "waiter").NewQueue(claim.NextOptions{}).Wait(ctx, opts); !errors.Is(err, other) {
		t.Fatalf("Wait with a watcher that failed otherwise = %v, want %v", err, other)
	}
}

// TestWaitWatchesBeforeItLooks: the notifier exists before the first look
// at todo/, so that nothing arriving in between goes unseen.
func TestWaitWatchesBeforeItLooks(t *testing.T) {
	b := pkBoard(t)
	b.NoSync = true
	pkPut(t, b, sessions.Todo, "", "x", sessions.Meta{})
	var inTodo atomic.Bool
	opts := claim.WaitOptionsWith(waNever, func(d ...string) (claim.Notifier, error) {
		_, err := os.Lstat(b.Path(sessions.Todo, "", "x"))
		inTodo.Store(err == nil)
		return newWAFake(), nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), waPatience)
	defer cancel()
	s, err := pkClient(t, pkOwnBoard(b), "waiter").NewQueue(claim.NextOptions{}).Wait(ctx, opts)
	waClaimed(t, b, waResult{s, err}, "waiter", "x")
	if !inTodo.Load() {
		t.Error("the notifier was made after the session was claimed: Wait looked before it watched")
	}
}

// TestWaitClosedNotifier: a notifier whose Events channel closes ends Wait
// with an error, not a hang and not "nothing available".
func TestWaitClosedNotifier(t *testing.T) {
	b := pkBoard(t)
	fake := newWAFake()
	close(fake.events)
	opts := claim.WaitOptionsWith(waNever, func(...string) (claim.Notifier, error) { return fake, nil })
	ctx, cancel := context.WithTimeout(context.Background(), waPatience)
	defer cancel()
	_, err := pkClient(t, b, "waiter").NewQueue(claim.NextOptions{}).Wait(ctx, opts)
	if err == nil || errors.Is(err, claim.ErrNothingAvailable) {
		t.Fatalf("Wait with a closed notifier = %v, want a watcher error", err)
	}
	if ctx.Err() != nil {
		t.Fatalf("Wait returned only at the deadline: %v", err)
	}
}
