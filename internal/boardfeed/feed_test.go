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
	"github.com/pickup-dev/pickup/internal/proc"
	"github.com/pickup-dev/pickup/sessions"
)

// events collects what Run reports, for waiting on one.
type events struct {
	mu  sync.Mutex
	got []boardview.Event
}

func (e *events) add(batch []boardview.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.got = append(e.got, batch...)
}

// await waits up to 5 s for an event that ok accepts.
func (e *events) await(t *testing.T, what string, ok func(boardview.Event) bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		e.mu.Lock()
		for _, ev := range e.got {
			if ok(ev) {
				e.mu.Unlock()
				return
			}
		}
		e.mu.Unlock()
	}
	t.Fatalf("%s: not reported in 5 s; got %#v", what, e.got)
}

// TestFeed: a snapshot, then the events of a real board as the library
// moves it: a claim (the session, its owner judged alive, the log line),
// and the owner's process killed (judged dead at once, through its pidfd).
func TestFeed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "board")
	b, err := sessions.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	b.NoSync = true
	s, err := b.Create(sessions.Meta{Title: "the first"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Items) != 1 || snap.Items[0].ID != s.ID || len(snap.History) != 1 {
		t.Fatalf("snapshot: %d items, %d events", len(snap.Items), len(snap.History))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got events
	go f.Run(ctx, got.add)
	time.Sleep(200 * time.Millisecond) // the watchers are set up

	// The owner's process: a child that the test kills.
	holder := exec.Command("sleep", "60")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Process.Kill(); _ = holder.Wait() }()
	p, err := proc.Env{}.Lookup(holder.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&claim.Leases{Board: b}).Register("agent", p); err != nil {
		t.Fatal(err)
	}
	c, err := claim.New(b, "agent")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Claim(s.ID); err != nil {
		t.Fatal(err)
	}
	got.await(t, "the claim", func(e boardview.Event) bool {
		a, ok := e.(boardview.Arrived)
		return ok && a.Item.ID == s.ID && a.Item.State == sessions.Doing && a.Item.Owner == "agent" && !a.Item.Since.IsZero()
	})
	got.await(t, "the owner alive", func(e boardview.Event) bool {
		j, ok := e.(boardview.Judged)
		return ok && j.Owner.Name == "agent" && j.Owner.State == claim.OwnerAlive
	})
	got.await(t, "the claim's log line", func(e boardview.Event) bool {
		l, ok := e.(boardview.Logged)
		return ok && len(l.Events) > 0 && l.Events[len(l.Events)-1].Op == "claim"
	})

	if err := holder.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = holder.Wait()
	got.await(t, "the owner dead", func(e boardview.Event) bool {
		j, ok := e.(boardview.Judged)
		return ok && j.Owner.Name == "agent" && j.Owner.State == claim.OwnerDead
	})

	d := f.Read(s.ID)
	if d.Err != "" || len(d.History) != 2 || d.History[1].Op != "claim" {
		t.Errorf("detail: %+v", d)
	}
	if _, err := os.Stat(b.Path(sessions.Doing, "agent", s.ID)); err != nil {
		t.Errorf("the board moved a session: %v", err) // read-only: the dead keep theirs
	}
}

// TestFeedExitJustAfterJudged: the owner's process exits (killed and
// reaped) in the moment after the live board judged it alive, before
// anything else happens on the board. Its exit is still seen: the judgment
// was made with the process's pidfd already open, so the dead owner is
// reported without waiting for another change.
func TestFeedExitJustAfterJudged(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "board")
	b, err := sessions.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	b.NoSync = true
	s, err := b.Create(sessions.Meta{Title: "the first"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	holder := exec.Command("sleep", "60")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	var reap sync.Once
	kill := func() { reap.Do(func() { _ = holder.Process.Kill(); _ = holder.Wait() }) }
	defer kill()
	p, err := proc.Env{}.Lookup(holder.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&claim.Leases{Board: b}).Register("agent", p); err != nil {
		t.Fatal(err)
	}
	c, err := claim.New(b, "agent")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Claim(s.ID); err != nil {
		t.Fatal(err)
	}

	f, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	judgedAlive := make(chan struct{})
	var once sync.Once
	f.afterJudge = func(owner string, o boardview.Owner, _ bool) {
		if owner == "agent" && o.State == claim.OwnerAlive {
			kill() // gone before the board changes again
			once.Do(func() { close(judgedAlive) })
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got events
	go f.Run(ctx, got.add)
	select {
	case <-judgedAlive:
	case <-time.After(5 * time.Second):
		t.Fatal("the owner was never judged alive")
	}
	got.await(t, "the owner dead", func(e boardview.Event) bool {
		j, ok := e.(boardview.Judged)
		return ok && j.Owner.Name == "agent" && j.Owner.State == claim.OwnerDead
	})
}

// TestFeedReportsInOrder: the owner's process exits while the live board
// is between judging it alive and reporting that. The judgment its exit
// wakes is reported after that one, never before: the last word on the
// owner is that it is dead.
func TestFeedReportsInOrder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "board")
	b, err := sessions.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	b.NoSync = true
	s, err := b.Create(sessions.Meta{Title: "the first"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := claim.New(b, "agent")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Claim(s.ID); err != nil {
		t.Fatal(err)
	}
	holder := exec.Command("sleep", "60")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	var reap sync.Once
	kill := func() { reap.Do(func() { _ = holder.Process.Kill(); _ = holder.Wait() }) }
	defer kill()
	p, err := proc.Env{}.Lookup(holder.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	leases := &claim.Leases{Board: b}
	f, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(f.leasesDir(), 0o755); err != nil {
		t.Fatal(err) // watched from the start: the lease's arrival is seen
	}
	var got events
	judgedAlive := make(chan struct{})
	var once sync.Once
	f.afterJudge = func(owner string, o boardview.Owner, report bool) {
		if owner != "agent" || o.State != claim.OwnerAlive || !report {
			return
		}
		once.Do(func() {
			close(judgedAlive)
			kill()
			// Give the judgment that the exit wakes the time to
			// overtake this one's report, if it could.
			for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				if len(judged(&got, "agent")) > 0 {
					return
				}
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go f.Run(ctx, got.add)
	// The lease arrives (again, until the board has seen it): the owner
	// is judged alive, and that judgment is reported.
	for registered := false; !registered; {
		if _, err := leases.Register("agent", p); err != nil {
			t.Fatal(err)
		}
		select {
		case <-judgedAlive:
			registered = true
		case <-time.After(100 * time.Millisecond):
		}
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		states := judged(&got, "agent")
		alive := slices.Index(states, claim.OwnerAlive)
		if alive >= 0 && slices.Contains(states[alive:], claim.OwnerDead) {
			break // reported alive, then dead
		}
		if time.Now().After(deadline) {
			t.Fatalf("the owner's judgments as reported: %v; want alive, then dead", states)
		}
	}
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
