package postgres

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/pickup-dev/pickup/internal/arbiter"
	"github.com/pickup-dev/pickup/internal/boardhook"
	"github.com/pickup-dev/pickup/sessions"
)

// A waiting reader blocks in the database for a NOTIFY at most WaitMax
// before it reads the board anyway (the fallback poll), and reads it
// every PollEvery when it cannot listen.
const (
	WaitMax   = time.Second
	PollEvery = 250 * time.Millisecond
)

// Fallback is the fallback poll's period: $PICKUP_PG_POLL (a duration),
// else WaitMax.
func Fallback() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("PICKUP_PG_POLL")); err == nil && d > 0 {
		return d
	}
	return WaitMax
}

// Arbiter is a PostgreSQL database as an arbiter.Arbiter.
type Arbiter struct {
	PG *Board
	// cfg and opts are what OpenArbiter opened it with (sync's history).
	cfg  sessions.Config
	opts arbiter.Options
}

// Ready brings the board directory in line with the database (one read of
// what changed); a database read is cheap, so it never trusts a recent
// one.
func (a Arbiter) Ready(ctx context.Context, _ bool) error {
	_, err := a.PG.Refresh(ctx)
	return err
}

// AnswerAgain: Ready always read the database.
func (a Arbiter) AnswerAgain(context.Context, error, ...error) (bool, error) { return false, nil }

// Settled: the database named where it has the session already.
func (a Arbiter) Settled(context.Context, string) (sessions.State, string, bool) {
	return "", "", false
}

// Heartbeat records owner's heartbeat in the database (the server's clock
// judges it); one round trip, so every is not needed.
func (a Arbiter) Heartbeat(_ context.Context, owner string, _ time.Duration) error {
	return a.PG.Beat(owner)
}

// Where is the database's URL without its password.
func (a Arbiter) Where() string { return a.PG.URL }

// Close stops the helper and detaches the database from its board.
func (a Arbiter) Close() error {
	a.PG.Close()
	boardhook.ClearArbiter(a.PG.B)
	return nil
}

// Watch reads the database whenever a session arrives in todo on any
// board (LISTEN/NOTIFY, through a waiter of its own), and at least every
// Fallback, until ctx ends, so that a wait wakes for sessions made or
// released elsewhere: Refresh writes them into todo/, which the wait
// watches. It returns a function that stops it.
func (a Arbiter) Watch(ctx context.Context, warn func(error)) func() {
	pg := a.PG
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	var mu sync.Mutex
	var w *Waiter
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			mu.Lock()
			d := Fallback()
			if w == nil {
				w, _ = pg.NewWaiter() // nil: poll instead
				// A new waiter LISTENs and returns at once, and the
				// board is read after: a session that arrived before
				// the LISTEN is not missed.
				d = 0
			}
			cur := w
			mu.Unlock()
			if cur == nil || cur.Wait(d) != nil {
				if cur != nil {
					mu.Lock()
					w = nil
					mu.Unlock()
					cur.Close()
				}
				select {
				case <-ctx.Done():
					return
				case <-time.After(PollEvery):
				}
			}
			if ctx.Err() != nil {
				return
			}
			if _, err := pg.Refresh(ctx); err != nil && ctx.Err() == nil {
				warn(err)
			}
		}
	}()
	return func() {
		cancel()
		mu.Lock()
		if w != nil {
			w.Close() // a Wait under way returns at once
		}
		mu.Unlock()
		<-done
	}
}

// Sync imports sessions made by hand (a todo/*.md that the database does
// not have) and brings the board in line: every transition is in the
// database already. With history in git, it pushes it now.
func (a Arbiter) Sync(ctx context.Context) (arbiter.Report, error) {
	pg := a.PG
	imported, total, err := pg.Join(ctx, false)
	if err != nil {
		return arbiter.Report{}, err
	}
	history, lines := syncHistory(pg, &a.cfg, a.opts)
	return arbiter.Report{
		JSON: map[string]any{"database": pg.URL, "sessions": total, "imported": imported, "shared": true, "history": history},
		Text: append([]string{fmt.Sprintf("postgres board: in line with %s (%d sessions, %d imported)", pg.URL, total, imported)}, lines...),
	}, nil
}

// Status is pickup status's lines about the board's history in git.
func (a Arbiter) Status(context.Context) []string {
	return historyStatus(a.PG.B, a.PG, &a.cfg)
}

// Heard is what the database knows of owner, who holds no lease here:
// its lease's processes if a board of this machine shared them (it is
// judged by them), and its last heartbeat (the machine, and its age on
// the server's clock).
func (a Arbiter) Heard(owner string) (arbiter.Heard, bool) {
	var h arbiter.Heard
	found := false
	if hs := a.PG.HeardHolders(owner); len(hs) > 0 {
		h.Holders, h.Host, h.ThisMachine, found = hs, hs[0].Host, true, true
	}
	for _, b := range a.PG.Beats() {
		if b.Owner != owner {
			continue
		}
		if b.Host != "" && b.Host == a.PG.Host {
			h.ThisMachine = true
		}
		if h.Host == "" {
			h.Host = b.Host
		}
		h.Beat, h.Age = true, time.Duration(b.AgeMS)*time.Millisecond
		return h, true
	}
	return h, found
}

// Locks is the database's named locks, judged on now's clock here.
func (a Arbiter) Locks(now func() time.Time) arbiter.LockBook { return a.PG.Locks(now) }

var (
	_ arbiter.Arbiter    = Arbiter{}
	_ arbiter.LockHolder = Arbiter{}
)
