package boardfeed

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/pickup-dev/pickup/internal/arbiter/dburl"
	"github.com/pickup-dev/pickup/internal/boardhook"

	"github.com/pickup-dev/pickup/internal/arbiter/postgres"
	"github.com/pickup-dev/pickup/internal/boardview"
	"github.com/pickup-dev/pickup/internal/leasebook"
)

// A board that PostgreSQL arbitrates (pickup init --shared postgres://…):
// its directory is this machine's mirror of the database, which pickup
// brings in line before each command. The live board keeps it in line
// itself: a waiter of its own blocks in the database until any transition
// on any machine (postgres.Waiter.WaitMoves), then Refresh writes the
// sessions where the database has them, which the board's watchers see
// like any change of the directory; at least every PGPoll it reads the
// database anyway (heartbeats of other machines move no session). A
// database that does not answer is said on the board's status line,
// which keeps showing the last view, until it answers again.

// DefaultPGPoll is how often the live board reads a PostgreSQL board's
// database without a transition to wake it ($PICKUP_PG_POLL sets it, as
// for next --wait).
const DefaultPGPoll = time.Second

// pgRetry is how often the live board tries a database that does not
// answer.
const pgRetry = time.Second

// pgReport is how often a PostgreSQL board that answers and does not move
// says so (its "updated" time): more often would redraw an idle board.
const pgReport = 30 * time.Second

// openPG opens the board's database; a database that does not answer
// leaves the board showing its last view (the live board retries).
func (f *Feed) openPG(ctx context.Context, url string) {
	f.pgURL = url
	f.Remote, _ = dburl.Redact(url)
	f.Fetch = DefaultPGPoll
	if d, err := time.ParseDuration(os.Getenv("PICKUP_PG_POLL")); err == nil && d > 0 {
		f.Fetch = d
	}
	if err := f.connectPG(ctx); err != nil {
		return
	}
	f.refreshPG(ctx)
}

// connectPG opens the database if it is not open; a failure is kept as
// the board's database error.
func (f *Feed) connectPG(ctx context.Context) error {
	if f.PG != nil {
		return nil
	}
	pg, err := postgres.OpenWith(ctx, f.B, f.pgURL, postgres.Options{NetworkTimeout: f.netTimeout})
	if err != nil {
		f.setDBErr(err)
		return err
	}
	boardhook.ClearArbiter(f.B) // the board only shows; Refresh needs no arbiter
	pg.Leases = leasebook.Of(f.B)
	f.PG = pg
	return nil
}

// refreshPG brings the board directory in line with the database and
// keeps the owners' heartbeats; it reports whether anything moved.
func (f *Feed) refreshPG(ctx context.Context) (bool, error) {
	moved, err := f.PG.Refresh(ctx)
	f.setDBErr(err)
	if err != nil {
		return false, err
	}
	beats := map[string]postgres.Beat{}
	for _, b := range f.PG.Beats() {
		beats[b.Owner] = b
	}
	f.mu.Lock()
	f.pgBeats = beats
	f.mu.Unlock()
	return moved, nil
}

// setDBErr keeps why the database did not answer ("" when it did).
func (f *Feed) setDBErr(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dbErr = dbErrText(err)
}

func (f *Feed) dbError() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.dbErr
}

// dbErrText is err as the status line says it: the database's own words
// (the database's URL is on the header already).
func dbErrText(err error) string {
	if err == nil {
		return ""
	}
	var de *postgres.DatabaseError
	text := err.Error()
	if errors.As(err, &de) && de.Err != nil {
		text = de.Err.Error()
	}
	// pgx names the user and database first; the cause matters most on
	// a line that may be cut.
	if rest, ok := strings.CutPrefix(text, "failed to connect to `"); ok {
		if _, cause, ok := strings.Cut(rest, "`: "); ok {
			text = cause
		}
		if _, cause, ok := strings.Cut(text, "dial error: "); ok {
			text = cause // "host:port (address): dial error: dial tcp …"
		}
	}
	return text
}

// followPG keeps the board directory in line with the database until the
// live board ends: woken by any transition in the database (or every
// f.Fetch), it refreshes and reports the database's state when it
// changes (answering or not), and what moved is seen by the watchers.
func (l *live) followPG() {
	f := l.f
	var mu sync.Mutex
	var w *postgres.Waiter
	closeWaiter := func() {
		mu.Lock()
		defer mu.Unlock()
		if w != nil {
			w.Close() // a wait under way returns at once
			w = nil
		}
	}
	stop := context.AfterFunc(l.ctx, closeWaiter)
	defer stop()
	defer closeWaiter()
	var since int64
	lastErr, lastReport := f.dbError(), f.now()
	for l.ctx.Err() == nil {
		err := f.connectPG(l.ctx)
		if err == nil {
			mu.Lock()
			if w == nil {
				w, err = f.PG.NewWaiter()
			}
			cur := w
			mu.Unlock()
			if err == nil {
				wait := f.Fetch
				if lastErr != "" {
					wait = 0 // answering again: read it at once
				}
				since, err = cur.WaitMoves(since, wait)
			}
			if err != nil {
				closeWaiter()
			}
		}
		if l.ctx.Err() != nil {
			return
		}
		moved := false
		if err == nil {
			moved, err = f.refreshPG(l.ctx)
		} else {
			f.setDBErr(err)
		}
		if err != nil && f.PG != nil {
			// Opened again at the next try: a helper (the machine's
			// daemon) that went away is started again.
			f.PG.Close()
			f.PG = nil
		}
		if l.ctx.Err() != nil {
			return
		}
		now := f.now()
		switch {
		case err != nil:
			if text := dbErrText(err); text != lastErr {
				l.emit(boardview.FeedStatus{At: now, DBErr: text})
				lastErr = text
			}
		case moved || lastErr != "" || now.Sub(lastReport) >= pgReport:
			// Owners of other machines: their heartbeats (and hosts)
			// moved with the refresh.
			if owners, err := f.ownerNames(); err == nil {
				for _, n := range owners {
					if f.elsewhere(n) {
						l.rejudge(n, true)
					}
				}
			}
			l.emit(boardview.FeedStatus{At: now, Fetched: now})
			lastErr, lastReport = "", now
		}
		if err != nil {
			// Not answering: try again in a moment.
			select {
			case <-l.ctx.Done():
				return
			case <-time.After(min(f.Fetch, pgRetry)):
			}
		}
	}
}

// elsewhere reports whether owner works on another machine of a
// PostgreSQL board: the database has its heartbeat and no process here
// holds a lease of it (it has none here, or one with no holder).
func (f *Feed) elsewhere(owner string) bool {
	f.mu.Lock()
	_, ok := f.pgBeats[owner]
	f.mu.Unlock()
	if !ok {
		return false
	}
	l, err := f.leases.Get(owner)
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	return err == nil && len(l.Holders) == 0
}

// pgHost is the machine of owner's last heartbeat in the database, if
// known.
func (f *Feed) pgHost(owner string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pgBeats[owner].Host
}
