package cli

// A board that PostgreSQL arbitrates (pickup init --shared postgres://…):
// the transitions go through the database, whose conditional UPDATE is
// the compare-and-swap. See internal/pgboard.

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/pickup-dev/pickup/internal/pgboard"
	"github.com/pickup-dev/pickup/sessions"
)

// pgWaitMax is how long next --wait blocks in the database for a
// NOTIFY before it reads the board anyway (the fallback poll), and
// pgPollEvery how often it reads it when it cannot listen.
const (
	pgWaitMax   = time.Second
	pgPollEvery = 250 * time.Millisecond
)

// pgFallback is the fallback poll's period: $PICKUP_PG_POLL (a duration),
// else pgWaitMax.
func pgFallback() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("PICKUP_PG_POLL")); err == nil && d > 0 {
		return d
	}
	return pgWaitMax
}

// readyPG opens b's database (config.yaml's shared: URL), makes it b's
// arbiter and brings the board directory in line with it; m.mu is held.
func (m *sharedMode) readyPG(b *sessions.Board) error {
	pg, err := pgboard.OpenWith(context.Background(), b, m.cfg.Shared, pgOptions(m.cfg, b.Dir))
	if err != nil {
		return err
	}
	if _, err := pg.Refresh(context.Background()); err != nil {
		b.Arbiter = nil
		pg.Close()
		return err
	}
	m.pg = pg
	return nil
}

// pgBoard returns the PostgreSQL board, or nil if the board is not one
// (or ready has not run).
func (m *sharedMode) pgBoard() *pgboard.Board {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.pg
}

// pgPoll reads the database whenever a session arrives in todo on any
// board (LISTEN/NOTIFY, through a waiter of its own), and at least every
// pgWaitMax, until ctx ends, so that next --wait wakes for sessions made
// or released elsewhere: Refresh writes them into todo/, which the wait
// watches. It returns a function that stops it.
func (r *run) pgPoll(ctx context.Context, pg *pgboard.Board) func() {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	var mu sync.Mutex
	var w *pgboard.Waiter
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			mu.Lock()
			if w == nil {
				w, _ = pg.NewWaiter() // nil: poll instead
			}
			cur := w
			mu.Unlock()
			if cur == nil || cur.Wait(pgFallback()) != nil {
				if cur != nil {
					mu.Lock()
					w = nil
					mu.Unlock()
					cur.Close()
				}
				select {
				case <-ctx.Done():
					return
				case <-time.After(pgPollEvery):
				}
			}
			if ctx.Err() != nil {
				return
			}
			if _, err := pg.Refresh(ctx); err != nil && ctx.Err() == nil {
				fmt.Fprintf(r.env.Stderr, "pickup: warning: %s\n", sanitize(err.Error()))
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

// initPG is `pickup init --shared postgres://…`: it connects (creating or
// migrating the schema), records the URL without its password in
// config.yaml, and puts the board's sessions into the database.
func (r *run) initPG(url string) error {
	redacted, hadPassword := pgboard.Redact(url)
	dir, err := r.boardDir()
	if err != nil {
		return err
	}
	b, err := sessions.Init(dir)
	if err != nil {
		return err
	}
	cfg, err := b.Config()
	if err != nil {
		return err
	}
	if cfg.Shared != "" && cfg.Shared != redacted {
		return refuse(fmt.Errorf("init --shared %s: the board is shared through %s already (config.yaml)", redacted, cfg.Shared), "edit shared: in config.yaml if the database moved")
	}
	r.noSync = r.noSync || b.NoSync
	ctx := context.Background()
	pg, err := pgboard.Open(ctx, b, url)
	if err != nil {
		return err
	}
	defer pg.Close()
	b.Arbiter = nil // joining is not a transition
	if cfg.Shared == "" {
		if err := appendConfig(b, "shared: "+redacted+"\n"); err != nil {
			return err
		}
	}
	imported, total, err := pg.Join(ctx, true)
	if err != nil {
		return err
	}
	historyLine, err := r.initHistory(b) // pghistory.go
	if err != nil {
		return err
	}
	if hadPassword {
		fmt.Fprintf(r.env.Stderr, "pickup: warning: the password in the URL was not written to config.yaml; give it to later commands in ~/.pgpass or $PGPASSWORD\n")
	}
	if r.json {
		return r.printJSON(map[string]any{"dir": b.Dir, "database": redacted, "sessions": total, "imported": imported})
	}
	r.printf("postgres board ready at %s: %s (%d sessions, %d imported from this board)\n%s\n", b.Dir, redacted, total, imported, historyLine)
	return nil
}

// syncPG is `pickup sync` on a PostgreSQL board: every transition is in
// the database already; it imports sessions made by hand (a todo/*.md
// that the database does not have) and brings the board in line.
func (r *run) syncPG(pg *pgboard.Board) error {
	imported, total, err := pg.Join(context.Background(), false)
	if err != nil {
		return err
	}
	history, line := r.syncHistory(pg) // pghistory.go
	if r.json {
		return r.printJSON(map[string]any{"database": pg.URL, "sessions": total, "imported": imported, "shared": true, "history": history})
	}
	r.printf("postgres board: in line with %s (%d sessions, %d imported)\n", pg.URL, total, imported)
	if line != "" {
		r.printf("%s\n", sanitize(line))
	}
	return nil
}

// viewBoard is board for commands that only show it (list, show, status):
// on a PostgreSQL board it first brings the board directory in line with
// the database, so that owners on every machine are shown. A database
// that does not answer is a warning: the board's last view is shown.
func (r *run) viewBoard() (*sessions.Board, error) {
	b, err := r.board()
	if err != nil || !r.shared.isPG() {
		return b, err
	}
	if err := r.shared.ready(b); err != nil {
		fmt.Fprintf(r.env.Stderr, "pickup: warning: showing this board's last view of the database: %s\n", sanitize(err.Error()))
	}
	return b, nil
}

// isPG reports whether config.yaml names a PostgreSQL database.
func (m *sharedMode) isPG() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cfg != nil && pgboard.IsURL(m.cfg.Shared)
}
