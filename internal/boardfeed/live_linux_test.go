package boardfeed

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/boardview"
	"github.com/pickup-dev/pickup/internal/claimhook"
	"github.com/pickup-dev/pickup/internal/proc"
	"github.com/pickup-dev/pickup/sessions"
)

// heldBoard is a board with one session and a process of the test's (a
// child it kills) that the tests make an owner's holder, a lock's, or both.
type heldBoard struct {
	b      *sessions.Board
	s      sessions.Session
	holder proc.Process
	// kill kills the holder and reaps it, once.
	kill func()
}

func newHeldBoard(t *testing.T) heldBoard {
	t.Helper()
	_, b, s := newTestBoard(t, "the first")
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var reap sync.Once
	kill := func() { reap.Do(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }) }
	t.Cleanup(kill)
	p, err := proc.Env{}.Lookup(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	return heldBoard{b: b, s: s, holder: p, kill: kill}
}

// own makes the holder the holder of owner's lease, and owner claim the
// session.
func (h heldBoard) own(t *testing.T, owner string) {
	t.Helper()
	if _, err := (&claim.Leases{Board: h.b}).Heartbeat(owner, claim.Holder(h.holder)); err != nil {
		t.Fatal(err)
	}
	c, err := claim.New(h.b, owner)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Claim(context.Background(), h.s.ID); err != nil {
		t.Fatal(err)
	}
}

// lock makes the holder hold the lock on key, without a TTL: only its
// exit ends the lock.
func (h heldBoard) lock(t *testing.T, key string) {
	t.Helper()
	locks := claim.BoardLocks(h.b)
	claimhook.HoldLocksFor(locks, h.holder)
	if _, err := locks.Lock(context.Background(), key); err != nil {
		t.Fatal(err)
	}
}

// run opens the board's feed, lets set it up (the test hooks, which see
// what it reports), and runs it until the test ends.
func (h heldBoard) run(t *testing.T, set func(*Feed, *events)) *events {
	t.Helper()
	f, err := Open(context.Background(), h.b.Dir)
	if err != nil {
		t.Fatal(err)
	}
	got := &events{}
	set(f, got)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go f.Run(ctx, got.add)
	return got
}

// within fails the test unless c is closed within 5 s.
func within(t *testing.T, what string, c <-chan struct{}) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: not within 5 s", what)
	}
}

func ownerDead(owner string) func(boardview.Event) bool {
	return func(e boardview.Event) bool {
		j, ok := e.(boardview.Judged)
		return ok && j.Owner.Name == owner && j.Owner.State == claim.OwnerDead
	}
}

func lockDead(key string) func(boardview.Event) bool {
	return func(e boardview.Event) bool {
		l, ok := e.(boardview.LocksListed)
		return ok && len(l.Locks) == 1 && l.Locks[0].Key == key && l.Locks[0].State == claim.LockDead
	}
}

// TestFeedExitJustAfterJudged: the owner's process exits (killed and
// reaped) the moment after the live board judged it alive, before
// anything else happens on the board. Its exit is still seen: the
// judgment was made with the process's pidfd already open, so the dead
// owner is reported without waiting for another change.
func TestFeedExitJustAfterJudged(t *testing.T) {
	h := newHeldBoard(t)
	h.own(t, "agent")
	judgedAlive := make(chan struct{})
	var once sync.Once
	got := h.run(t, func(f *Feed, _ *events) {
		f.afterJudge = func(owner string, o boardview.Owner, _ bool) {
			if owner == "agent" && o.State == claim.OwnerAlive {
				h.kill() // gone before the board changes again
				once.Do(func() { close(judgedAlive) })
			}
		}
	})
	within(t, "the owner judged alive", judgedAlive)
	got.await(t, "the owner dead", ownerDead("agent"))
}

// TestFeedLockHolderExitJustAfterListed: a lock's holder exits (killed and
// reaped) the moment after the live board listed its lock alive, before
// anything else happens on the board. The lock is still reported dead:
// the holder's pidfd was open before the listing judged it.
func TestFeedLockHolderExitJustAfterListed(t *testing.T) {
	h := newHeldBoard(t)
	h.lock(t, "deploy")
	listedAlive := make(chan struct{})
	var once sync.Once
	got := h.run(t, func(f *Feed, _ *events) {
		f.afterLocks = func(locks []boardview.Lock, _ bool) {
			if len(locks) == 1 && locks[0].State == claim.LockAlive {
				h.kill() // gone before the board changes again
				once.Do(func() { close(listedAlive) })
			}
		}
	})
	within(t, "the lock listed alive", listedAlive)
	got.await(t, "the lock dead", lockDead("deploy"))
}

// TestFeedReportsInOrder: the owner's process exits while the live board
// is between judging it alive and reporting that. The judgment its exit
// wakes is reported after that one, never before: the last word on the
// owner is that it is dead.
func TestFeedReportsInOrder(t *testing.T) {
	h := newHeldBoard(t)
	c, err := claim.New(h.b, "agent")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Claim(context.Background(), h.s.ID); err != nil {
		t.Fatal(err)
	}
	// Watched from the start: the lease's arrival is seen.
	if err := os.MkdirAll(filepath.Join(h.b.RuntimeDir(), "leases"), 0o755); err != nil {
		t.Fatal(err)
	}
	judgedAlive := make(chan struct{})
	var once sync.Once
	got := h.run(t, func(f *Feed, got *events) {
		f.afterJudge = func(owner string, o boardview.Owner, report bool) {
			if owner != "agent" || o.State != claim.OwnerAlive || !report {
				return
			}
			once.Do(func() {
				close(judgedAlive)
				h.kill()
				// Give the judgment that the exit wakes the time to
				// overtake this one's report, if it could.
				for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
					if len(judged(got, "agent")) > 0 {
						return
					}
				}
			})
		}
	})
	// The lease arrives (again, until the board has seen it): the owner
	// is judged alive, and that judgment is reported.
	leases := &claim.Leases{Board: h.b}
	for registered := false; !registered; {
		if _, err := leases.Heartbeat("agent", claim.Holder(h.holder)); err != nil {
			t.Fatal(err)
		}
		select {
		case <-judgedAlive:
			registered = true
		case <-time.After(100 * time.Millisecond):
		}
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		states := judged(got, "agent")
		alive := slices.Index(states, claim.OwnerAlive)
		if alive >= 0 && slices.Contains(states[alive:], claim.OwnerDead) {
			break // reported alive, then dead
		}
		if time.Now().After(deadline) {
			t.Fatalf("the owner's judgments as reported: %v; want alive, then dead", states)
		}
	}
}

// has reports whether an event that ok accepts was reported.
func (e *events) has(ok func(boardview.Event) bool) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.ContainsFunc(e.got, ok)
}

// judged is how owner was judged in each Judged event, in order.
func judged(e *events, owner string) []claim.OwnerState {
	e.mu.Lock()
	defer e.mu.Unlock()
	var states []claim.OwnerState
	for _, ev := range e.got {
		if j, ok := ev.(boardview.Judged); ok && j.Owner.Name == owner {
			states = append(states, j.Owner.State)
		}
	}
	return states
}

// TestFeedHolderOfLeaseAndLock: one process keeps an owner alive and
// holds a lock. Its exit is reported for both: awaited for the owner, it
// is awaited for the locks too.
func TestFeedHolderOfLeaseAndLock(t *testing.T) {
	h := newHeldBoard(t)
	h.own(t, "agent")
	h.lock(t, "deploy")
	// Run's first judgments: the owner and the locks, both alive.
	ownerAlive, lockAlive := make(chan struct{}), make(chan struct{})
	var ownerOnce, lockOnce sync.Once
	got := h.run(t, func(f *Feed, _ *events) {
		f.afterJudge = func(owner string, o boardview.Owner, _ bool) {
			if owner == "agent" && o.State == claim.OwnerAlive {
				ownerOnce.Do(func() { close(ownerAlive) })
			}
		}
		f.afterLocks = func(locks []boardview.Lock, _ bool) {
			if len(locks) == 1 && locks[0].State == claim.LockAlive {
				lockOnce.Do(func() { close(lockAlive) })
			}
		}
	})
	within(t, "the owner judged alive", ownerAlive)
	within(t, "the lock listed alive", lockAlive)
	h.kill()
	got.await(t, "the owner dead", ownerDead("agent"))
	got.await(t, "the lock dead", lockDead("deploy"))
}

// TestFeedRuntimeDirsMadeWhole: the leases and locks directories appear
// with a lease and a lock already in them (made elsewhere and renamed in,
// or written before the board's watch on the new directory was added).
// Neither makes an event of its own, and both are reported.
func TestFeedRuntimeDirsMadeWhole(t *testing.T) {
	h := newHeldBoard(t)
	elsewhere, err := sessions.Init(filepath.Join(t.TempDir(), "elsewhere"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&claim.Leases{Board: elsewhere}).Heartbeat("agent", claim.Holder(h.holder)); err != nil {
		t.Fatal(err)
	}
	locks := claim.BoardLocks(elsewhere)
	claimhook.HoldLocksFor(locks, h.holder)
	if _, err := locks.Lock(context.Background(), "deploy"); err != nil {
		t.Fatal(err)
	}
	got := h.run(t, func(*Feed, *events) {})
	// The watchers are set up once a change of events.log is reported:
	// sessions are made until one is.
	logged := func(e boardview.Event) bool { _, ok := e.(boardview.Logged); return ok }
	for deadline := time.Now().Add(5 * time.Second); !got.has(logged); {
		if time.Now().After(deadline) {
			t.Fatal("no change of events.log reported in 5 s")
		}
		if _, err := h.b.Create(sessions.Meta{Title: "another"}, nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, d := range []string{"leases", claim.LocksDirName} {
		if err := os.Rename(filepath.Join(elsewhere.RuntimeDir(), d), filepath.Join(h.b.RuntimeDir(), d)); err != nil {
			t.Fatal(err)
		}
	}
	got.await(t, "the owner alive", func(e boardview.Event) bool {
		j, ok := e.(boardview.Judged)
		return ok && j.Owner.Name == "agent" && j.Owner.State == claim.OwnerAlive
	})
	got.await(t, "the lock alive", func(e boardview.Event) bool {
		l, ok := e.(boardview.LocksListed)
		return ok && len(l.Locks) == 1 && l.Locks[0].Key == "deploy" && l.Locks[0].State == claim.LockAlive
	})
	h.kill()
	got.await(t, "the owner dead", ownerDead("agent"))
	got.await(t, "the lock dead", lockDead("deploy"))
}
