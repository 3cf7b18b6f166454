package claim

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/pickup-dev/pickup/sessions"
)

// NextOptions tune Next for long-lived claimers.
type NextOptions struct {
	// Snapshot lets Next reuse the ordered list of todo/ it made on an
	// earlier call for this long, instead of listing todo/ again on every
	// call. Zero (the default) lists every time, so a session created a
	// moment ago is always considered. A worker that drains a big board in a
	// loop sets it: listing 20,000 sessions costs milliseconds, a claim
	// microseconds.
	Snapshot time.Duration
}

// Queue claims the best available sessions for one owner, one per call to
// Next. It is not safe for concurrent use; give each goroutine its own.
type Queue struct {
	c        *Client
	opts     NextOptions
	pending  *ordered
	ownerDir bool // doing/<owner>/ was made
	listed   time.Time
}

// NewQueue returns a Queue that claims as c's owner.
func (c *Client) NewQueue(opts NextOptions) *Queue { return &Queue{c: c, opts: opts} }

// Next claims the best available session (see Client.Next).
func (c *Client) Next(ctx context.Context) (sessions.Session, error) {
	return c.NewQueue(NextOptions{}).Next(ctx)
}

// Invalidate drops the queue's snapshot, so the next call lists todo/ again
// (a watcher calls it when todo/ gains a session).
func (q *Queue) Invalidate() { q.pending = nil }

// Next claims the best available session: priority high to low, then
// created_at oldest first, then id, skipping sessions whose depends_on are
// not all done. A lost race moves on to the next candidate. Because
// readdir(3) may skip entries while other processes rename in the same
// directory, Next reports ErrNothingAvailable only after a second listing
// finds nothing claimable either.
func (q *Queue) Next(ctx context.Context) (sessions.Session, error) {
	c := q.c
	if !q.ownerDir {
		// Once per queue: move recreates the directory should it vanish.
		if err := os.MkdirAll(c.Board.StateDir(sessions.Doing, c.Owner), 0o755); err != nil {
			return sessions.Session{}, &Error{Op: "next", Err: err}
		}
		q.ownerDir = true
	}
	if q.opts.Snapshot <= 0 || time.Since(q.listed) > q.opts.Snapshot {
		q.pending = nil
	}
	emptyListings := 0
	var blocked int
	// Sessions whose destination already holds a copy (after a merge) can
	// never be claimed until doctor repairs them: skip them for this call.
	conflicts := map[string]bool{}
	for {
		if err := ctx.Err(); err != nil {
			return sessions.Session{}, &Error{Op: "next", Err: err}
		}
		if q.pending.empty() {
			list, nblocked, err := q.candidates(func(id string) bool { return conflicts[id] })
			if err != nil {
				return sessions.Session{}, &Error{Op: "next", Err: err}
			}
			q.pending, q.listed, blocked = newOrdered(list), time.Now(), nblocked
			if len(list) == 0 {
				if emptyListings++; emptyListings >= 2 {
					err := ErrNothingAvailable
					if blocked > 0 {
						err = fmt.Errorf("%w: %d session(s) in todo wait on unfinished dependencies", ErrNothingAvailable, blocked)
					}
					if len(conflicts) > 0 {
						err = fmt.Errorf("%w: %d session(s) in todo already have a copy in doing/ (run pickup doctor)", err, len(conflicts))
					}
					return sessions.Session{}, &Error{Op: "next", Err: err}
				}
				continue
			}
			emptyListings = 0
		}
		s := q.pending.next()
		fresh, err := c.Board.Refresh(s)
		if errors.Is(err, fs.ErrNotExist) {
			continue // claimed by someone else since the listing
		}
		if err == nil {
			if sessions.Compare(fresh, s) != 0 {
				// Edited since the listing saw it: put it back in order.
				q.pending.add(fresh)
				continue
			}
			s = fresh
		}
		err = c.move("next", s.ID, s.Path, c.Board.Path(sessions.Doing, c.Owner, s.ID), false)
		if err == nil {
			s.State, s.Owner, s.Path = sessions.Doing, c.Owner, c.Board.Path(sessions.Doing, c.Owner, s.ID)
			return s, nil
		}
		if errors.Is(err, ErrSessionNotAvailable) || errors.Is(err, ErrSessionNotFound) {
			continue // lost the race: take the next one
		}
		if errors.Is(err, ErrConflict) {
			conflicts[s.ID] = true // doctor's business; another may still be claimable
			continue
		}
		return sessions.Session{}, err
	}
}
