package boardfeed

import (
	"errors"
	"io/fs"
	"slices"
	"time"

	"github.com/pickup-dev/pickup/internal/boardview"
)

// A shared board's directory is this machine's view of its arbiter,
// which pickup brings in line before each command. The live board keeps
// it in line itself, through the arbiter's follower (location.Follow,
// as every front end opens a board): a database wakes it on any
// transition on any machine (LISTEN/NOTIFY), and is read at least every
// PGPoll anyway (heartbeats of other machines move no session); a git
// remote is fetched every shared_fetch. What a refresh moves in the
// board directory the watchers see like any change. An arbiter that does
// not answer is said on the board's status line, which keeps showing the
// last view, until it answers again.

// DefaultPGPoll is how often the live board reads a PostgreSQL board's
// database without a transition to wake it ($PICKUP_PG_POLL sets it, as
// for next --wait).
const DefaultPGPoll = time.Second

// pgRetry is how often the live board tries a database that does not
// answer.
const pgRetry = time.Second

// pgReport is how often a database that answers and does not move says
// so (its "updated" time): more often would redraw an idle board.
const pgReport = 30 * time.Second

// setDBErr keeps why the database did not answer ("" when it did).
func (f *Feed) setDBErr(err error) {
	text := ""
	if err != nil {
		text = f.follow.Say(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dbErr = text
}

func (f *Feed) dbError() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.dbErr
}

// follow keeps the board directory in line with its arbiter until the
// live board ends, and reports the arbiter's state: every fetch of a git
// remote; a database's when it changes (answering or not), when a
// refresh moved something, or every pgReport.
func (l *live) follow() {
	f := l.f
	fl := f.follow
	defer fl.Close()
	lastErr, lastReport := f.dbError(), f.now()
	wait := time.Duration(0) // the first refresh at once
	for l.ctx.Err() == nil {
		err := fl.Wait(l.ctx, wait)
		if l.ctx.Err() != nil {
			return
		}
		moved, heard := false, []string(nil)
		if err == nil {
			moved, heard, err = fl.Refresh(l.ctx)
		}
		if l.ctx.Err() != nil {
			return
		}
		now := f.now()
		wait = fl.Every()
		switch {
		case err != nil && !fl.Listens():
			l.emit(boardview.FeedStatus{At: now, FetchErr: err.Error()})
		case err != nil:
			f.setDBErr(err)
			if text := f.dbError(); text != lastErr {
				l.emit(boardview.FeedStatus{At: now, DBErr: text})
				lastErr = text
			}
			// Not answering: try again in a moment, then read at once.
			select {
			case <-l.ctx.Done():
				return
			case <-time.After(min(fl.Every(), pgRetry)):
			}
			wait = 0
		case !fl.Listens() || moved || lastErr != "" || now.Sub(lastReport) >= pgReport:
			f.setDBErr(nil)
			// Owners of other clones or machines: their heartbeats (and
			// hosts) came with the refresh.
			if owners, err := f.ownerNames(); err == nil {
				for _, n := range owners {
					if slices.Contains(heard, n) && f.heldElsewhere(n) {
						l.rejudge(n, true)
					}
				}
			}
			l.emit(boardview.FeedStatus{At: now, Fetched: now})
			lastErr, lastReport = "", now
		}
	}
}

// heldElsewhere reports whether no process here holds a lease of owner
// (it has none here, or one with no holder): its judgment rests on what
// the arbiter heard.
func (f *Feed) heldElsewhere(owner string) bool {
	l, err := f.leases.Get(owner)
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	return err == nil && len(l.Holders) == 0
}
