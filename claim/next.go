package claim

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/pickup-dev/pickup/internal/fsx"
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
	// Filter, if not empty, limits the queue to the sessions it matches
	// (every tag of Filter.Tags, none of Filter.NotTags), in the same order
	// as without it. Wait then wakes only for matching sessions, and a
	// queue that finds nothing says how many sessions the filter excluded
	// (see FilterError).
	Filter sessions.TagFilter
	// Skip, if set, leaves out the sessions it names, as if they were not
	// in todo/ (a pool's sessions that its own runs gave back).
	Skip func(id string) bool
}

// Queue claims the best available sessions for one owner, one per call to
// Next. It is safe for concurrent use: the workers of a pool share one, so
// that they list todo/ once between them and never try the same candidate
// twice (each candidate of a listing goes to one caller).
type Queue struct {
	c    *Client
	opts NextOptions

	mu       sync.Mutex // guards what follows; held while listing, not while claiming
	pending  *ordered
	ownerDir bool // doing/<owner>/ was made
	listed   time.Time
	stale    bool // pending is older than opts.Snapshot: renew it before use
	blocked  int  // sessions of the last listing that wait on dependencies

	// inLine: the pool that made the queue keeps the board in line with
	// its arbiter while it serves (Pool.Serve), so a wait need not.
	inLine bool

	// miss, set by tests (export_test.go), is asked after each listing of
	// todo/; true makes that listing find nothing, as a readdir that
	// skipped the entries others were renaming would.
	miss func() bool
}

// NewQueue returns a Queue that claims as c's owner.
func (c *Client) NewQueue(opts NextOptions) *Queue { return &Queue{c: c, opts: opts} }

// Next claims the best available session (see Queue.Next). When there is
// none but sessions that wait on dependencies, its error says why (see
// Explain).
func (c *Client) Next(ctx context.Context) (sessions.Session, error) {
	s, err := c.NewQueue(NextOptions{}).Next(ctx)
	return s, c.Explain(err)
}

// invalidate drops the queue's snapshot, so the next call lists todo/ again
// (a watcher calls it when todo/ gains a session).
func (q *Queue) invalidate() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.pending = nil
}

// Next claims the best available session: priority high to low, then
// created_at oldest first, then id, skipping sessions whose depends_on are
// not all done. A lost race moves on to the next candidate. Because
// readdir(3) may skip entries while other processes rename in the same
// directory, Next reports ErrNothingAvailable only after a second listing
// finds nothing claimable either.
func (q *Queue) Next(ctx context.Context) (sessions.Session, error) {
	tries := 0
	return q.c.arbitrated(ctx, func() (sessions.Session, error) {
		if tries++; tries > 1 {
			q.invalidate() // the board was brought in line: list todo/ again
		}
		return q.next(ctx)
	}, ErrNothingAvailable)
}

// next is Next without the arbiter's steps around it.
func (q *Queue) next(ctx context.Context) (sessions.Session, error) {
	for {
		s, m, err := q.claim(ctx)
		if err != nil {
			return sessions.Session{}, err
		}
		if err := q.c.commit(m); err != nil {
			if lostAtArbiter(err) {
				continue // a shared board's remote gave it to another: take the next one
			}
			return sessions.Session{}, err
		}
		return s, nil
	}
}

// lostAtArbiter reports whether err is a claim that a board's Arbiter
// refused because someone else moved the session first (a shared board's
// remote): the claim did not happen and the local move was undone, so a
// claimer takes the next candidate.
func lostAtArbiter(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Arbiter && errors.Is(err, ErrSessionNotAvailable)
}

// claim is Next without the commit: the session is renamed into doing/,
// and the caller commits it (with another transition, say).
func (q *Queue) claim(ctx context.Context) (sessions.Session, moved, error) {
	c := q.c
	if err := q.start(); err != nil {
		return sessions.Session{}, moved{}, &Error{Op: "next", Err: err}
	}
	var l listings
	for {
		if err := ctx.Err(); err != nil {
			return sessions.Session{}, moved{}, &Error{Op: "next", Err: err}
		}
		s, err := q.takeSpread(&l)
		if err != nil {
			return sessions.Session{}, moved{}, err
		}
		fresh, err := c.Board.Refresh(s)
		if errors.Is(err, fs.ErrNotExist) {
			continue // claimed by someone else since the listing
		}
		if err == nil {
			if !q.opts.Filter.Match(fresh) {
				continue // its tags were edited since the listing: not wanted now
			}
			if sessions.Compare(fresh, s) != 0 {
				// Edited since the listing saw it: put it back in order.
				q.putBack(fresh)
				continue
			}
			s = fresh
		}
		dst := c.Board.Path(sessions.Doing, c.Owner, s.ID)
		m, err := c.rename("next", s.ID, s.Path, dst, "", false)
		if err == nil {
			s.State, s.Owner, s.Path = sessions.Doing, c.Owner, dst
			return s, m, nil
		}
		if errors.Is(err, ErrSessionNotAvailable) || errors.Is(err, ErrSessionNotFound) {
			continue // lost the race: take the next one
		}
		if errors.Is(err, ErrConflict) {
			l.conflict(s.ID) // doctor's business; another may still be claimable
			continue
		}
		return sessions.Session{}, moved{}, err
	}
}

// start makes the owner's directory on the queue's first call, and drops
// a snapshot older than the queue may keep it.
func (q *Queue) start() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.ownerDir {
		// Once per queue: move recreates the directory should it vanish.
		if err := os.MkdirAll(q.c.Board.StateDir(sessions.Doing, q.c.Owner), 0o755); err != nil {
			return err
		}
		q.ownerDir = true
	}
	switch {
	case q.opts.Snapshot <= 0:
		q.pending = nil
	case time.Since(q.listed) > q.opts.Snapshot:
		q.stale = true
	}
	return nil
}

// listings is what one call of Next knows about its listings.
type listings struct {
	empty   int // listings in a row that found nothing claimable
	blocked int // sessions of the last listing that wait on dependencies
	// excluded counts the sessions of the last listing that the queue's
	// filter did not match.
	excluded int
	// Sessions whose destination already holds a copy (after a merge) can
	// never be claimed until doctor repairs them: skipped for this call.
	conflicts map[string]bool
	full      bool // the listing cache failed this call: read todo/ in full
	fresh     bool // a fresh stamp's lineup was tried (see sessions.PeekFresh)
	// fromLineup: the last candidates came from that lineup, not from
	// reading todo/ (which the tests' miss hook stands for).
	fromLineup bool
}

func (l *listings) conflict(id string) {
	if l.conflicts == nil {
		l.conflicts = map[string]bool{}
	}
	l.conflicts[id] = true
}

// take removes the next candidate from the queue, listing todo/ when
// nothing is left, and fails with ErrNothingAvailable once two listings in
// a row found nothing.
func (q *Queue) take(l *listings) (sessions.Session, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.stale {
		q.stale = false
		if !q.renew() {
			q.pending = nil
		}
	}
	for {
		if !q.pending.empty() {
			s, ok := q.pending.next()
			if ok {
				return s, nil
			}
			q.pending, l.full = nil, true // a damaged cache line
		}
		pending, nblocked, nexcluded, err := q.candidates(l)
		if err != nil {
			return sessions.Session{}, &Error{Op: "next", Err: err}
		}
		if q.miss != nil && !l.fromLineup && q.miss() {
			pending = nil
		}
		q.pending, q.listed, q.blocked, l.blocked, l.excluded = pending, time.Now(), nblocked, nblocked, nexcluded
		if !pending.empty() {
			l.empty = 0
			continue
		}
		if l.empty++; l.empty >= 2 {
			err := ErrNothingAvailable
			if l.blocked > 0 {
				err = &BlockedError{Blocked: l.blocked}
			}
			if !q.opts.Filter.Empty() {
				err = &FilterError{Filter: q.opts.Filter, Excluded: l.excluded, Err: err}
			}
			if len(l.conflicts) > 0 {
				err = fmt.Errorf("%w: %d session(s) in todo already have a copy in doing/ (run pickup doctor)", err, len(l.conflicts))
			}
			return sessions.Session{}, &Error{Op: "next", Err: err}
		}
	}
}

// renew brings an expired snapshot up to date without listing todo/ again
// when it can: if every session in todo/ is one the snapshot still holds
// (nothing new arrived, nothing came back), a new listing would hold
// exactly those sessions, in the same order, so the snapshot keeps them
// and drops the ones that are gone. That costs one read of the directory,
// against reading the listing cache and building every session anew. It
// reports false, and changes nothing, when a listing is needed: a name it
// does not hold, sessions that waited on dependencies last time (one may be
// ready now) or whose dependencies are no longer done (reopened), or
// sessions that the healing every listing starts with returned to todo/.
func (q *Queue) renew() bool {
	if q.pending.empty() || q.blocked > 0 {
		return false
	}
	b := q.c.Board
	if reaped, err := (&Leases{Board: b}).Reap(ReapOptions{OnlyDead: true, Except: q.c.Owner}); err != nil || len(reaped) > 0 {
		return false
	}
	held := map[string]int32{}
	q.pending.left(func(ref int32, id string) { held[id] = ref })
	// The sessions the filter excluded are not new either: a listing
	// would exclude them again. (One edited to match since is seen at the
	// next listing, as an edit of a held session's priority is.)
	q.pending.excludedIDs(func(id string) { held[id] = -1 })
	entries, err := fsx.ReadDirIno(b.StateDir(sessions.Todo, ""))
	if err != nil {
		return false
	}
	present := make([]bool, q.pending.refs())
	for _, e := range entries {
		id, ok := sessions.IsSessionName(e.Name)
		if !ok || e.Type&(fs.ModeDir|fs.ModeSymlink|fs.ModeDevice) != 0 {
			continue // not a session: a listing skips it too
		}
		i, ok := held[id]
		if !ok || e.Type != 0 {
			return false // new, back, or of a type a listing has to look at
		}
		if i >= 0 {
			present[i] = true
		}
	}
	ready := q.depsDone()
	for _, ref := range held {
		if ref >= 0 && present[ref] && !ready(q.pending.dependsOn(ref)) {
			return false
		}
	}
	q.pending.keep(func(ref int32) bool { return present[ref] })
	q.listed = time.Now()
	return true
}

// putBack returns an edited candidate to the order.
func (q *Queue) putBack(s sessions.Session) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.pending == nil {
		return // dropped: the next listing sees it
	}
	q.pending.add(s)
}
