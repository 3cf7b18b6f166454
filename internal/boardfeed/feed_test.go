package boardfeed

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
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
	dir, b, s := newTestBoard(t, "the first")
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
	if _, err := (&claim.Leases{Board: b}).Heartbeat("agent", claim.Holder(p)); err != nil {
		t.Fatal(err)
	}
	c, err := claim.New(b, "agent")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Claim(context.Background(), s.ID); err != nil {
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

// newTestBoard makes a board (unsynced) in a temporary folder with one
// session in todo/.
func newTestBoard(t *testing.T, title string) (string, *sessions.Board, sessions.Session) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "board")
	b, err := sessions.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	b.NoSync = true
	s, err := b.Create(sessions.Meta{Title: title}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return dir, b, s
}
