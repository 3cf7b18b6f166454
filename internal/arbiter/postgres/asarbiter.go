package postgres

import (
	"context"
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
type Arbiter struct{ PG *Board }

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

var _ arbiter.Arbiter = Arbiter{}
