package claim

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/pickup-dev/pickup/internal/arbiter"
	"github.com/pickup-dev/pickup/internal/boardhook"
	"github.com/pickup-dev/pickup/internal/fsx"
	"github.com/pickup-dev/pickup/sessions"
	"golang.org/x/sys/unix"
)

// Client performs transitions on a board as one owner. It is safe for
// concurrent use: the goroutines of a worker pool share one.
type Client struct {
	Board *sessions.Board
	Owner string

	// What a client keeps between transitions, made on first use: the
	// event log, kept open, and the directory fsyncs its goroutines share.
	once  sync.Once
	log   *sessions.EventLog
	syncs dirSyncs

	// The arbiter New attached, or the caller lent (nil: none; see
	// attach.go), and config.yaml's shared: (checkArbiter).
	arbMu sync.Mutex
	arb   arbiter.Arbiter
	// lent: the caller opened arb and closes it (lendArbiter); inLine:
	// it brought the board in line just before, so the next arbiter step
	// trusts that view; warn takes what a wait survives (nil: dropped).
	lent       bool
	inLine     bool
	warn       func(error)
	sharedOnce sync.Once
	sharedAt   string
}

// New returns a client for owner on board b.
//
// On a shared board (config.yaml says shared: REMOTE or shared:
// postgres://…) New attaches the board's arbiter, as pickup's commands do:
// every transition then stands only once the git remote or the database
// took it, and a claim lost there fails with ErrSessionNotAvailable, as
// a claim lost here does. Each transition brings the board in line with
// the arbiter first. Call Close when done (it releases the connection);
// on a board that is not shared Close does nothing.
//
// The owner's directory, doing/<owner>/, must be a real directory of the
// board (or missing): every claim lands there, so a link in its place
// would move sessions out of the board. New refuses one with an
// *sessions.UnsafePathError, once for the client's life: one lstat.
func New(b *sessions.Board, owner string) (*Client, error) {
	if err := sessions.ValidateOwner(owner); err != nil {
		return nil, err
	}
	if err := b.CheckDir(string(sessions.Doing) + "/" + owner); err != nil {
		return nil, err
	}
	c := &Client{Board: b, Owner: owner}
	if err := c.attach(); err != nil {
		return nil, err
	}
	return c, nil
}

// Claim moves session id from todo/ to doing/<owner>/. Claiming a session
// this owner already holds succeeds and changes nothing.
func (c *Client) Claim(ctx context.Context, id string) (sessions.Session, error) {
	return c.arbitrated(ctx, func() (sessions.Session, error) {
		return c.transition("claim", id, sessions.Todo, "", sessions.Doing, c.Owner)
	}, ErrSessionNotFound, ErrSessionNotAvailable, ErrClaimLost)
}

// Release moves session id from doing/<owner>/ back to todo/.
func (c *Client) Release(ctx context.Context, id string) (sessions.Session, error) {
	return c.arbitrated(ctx, func() (sessions.Session, error) {
		return c.transition("release", id, sessions.Doing, c.Owner, sessions.Todo, "")
	}, ErrSessionNotFound, ErrSessionNotAvailable, ErrClaimLost)
}

// ReleaseAll releases every session this owner holds and removes the
// owner's directory if it is then empty. It returns what it released; the
// error is the first failure (the other sessions are still released).
func (c *Client) ReleaseAll(ctx context.Context) ([]sessions.Session, error) {
	list, err := c.Board.ListOwner(c.Owner)
	if err != nil {
		return nil, err
	}
	var out []sessions.Session
	var first error
	for _, s := range list {
		r, err := c.Release(ctx, s.ID)
		if err != nil {
			if first == nil {
				first = err
			}
			continue
		}
		out = append(out, r)
	}
	_ = os.Remove(c.Board.StateDir(sessions.Doing, c.Owner)) // only if empty
	return out, first
}

// Done moves session id from doing/<owner>/ to done/.
func (c *Client) Done(ctx context.Context, id string) (sessions.Session, error) {
	return c.arbitrated(ctx, func() (sessions.Session, error) {
		return c.transition("done", id, sessions.Doing, c.Owner, sessions.Done, "")
	}, ErrSessionNotFound, ErrSessionNotAvailable, ErrClaimLost)
}

// Reopen moves session id from done/ back to todo/. Reopening a session that
// is already in todo succeeds and changes nothing.
func (c *Client) Reopen(ctx context.Context, id string) (sessions.Session, error) {
	return c.arbitrated(ctx, func() (sessions.Session, error) {
		return c.transition("reopen", id, sessions.Done, "", sessions.Todo, "")
	}, ErrSessionNotFound, ErrSessionNotAvailable, ErrClaimLost)
}

func (c *Client) transition(op, id string, from sessions.State, fromOwner string, to sessions.State, toOwner string) (sessions.Session, error) {
	m, err := c.shift(op, id, from, fromOwner, to, toOwner)
	if err == nil {
		err = c.commit(m)
	}
	if err != nil {
		var e *Error
		if errors.As(err, &e) && errors.Is(err, ErrSessionNotAvailable) && e.State == to && e.Holder == toOwner &&
			(op == "claim" || op == "reopen") {
			// Already where the caller wants it (a repeated claim or
			// reopen, or one that another process of this owner made
			// first, here or at a shared board's remote).
			return c.read(to, toOwner, id)
		}
		if op == "done" && errors.As(err, &e) && (errors.Is(err, ErrSessionNotAvailable) || errors.Is(err, ErrClaimLost)) && e.State == sessions.Done && c.lastDoneBy(id) {
			// A repeated done: this owner's own done is the session's last
			// transition (run again after an answer that was lost, as
			// exit 8's hint says: the first push had landed).
			return c.read(sessions.Done, "", id)
		}
		return sessions.Session{}, err
	}
	return c.read(to, toOwner, id)
}

// lastDoneBy reports whether the board's history ends, for session id,
// with this owner's done. The log lists each session's moves in the order
// of their renames (see rename), and the order lock, held while it reads,
// waits out a move of the session whose line is not written yet: the last
// line is the last move.
func (c *Client) lastDoneBy(id string) bool {
	leave, err := boardhook.EnterMoveOf(c.Board, id)
	if err != nil {
		return false // in doubt, refused
	}
	events, _, err := c.Board.Events(id)
	leave()
	if err != nil || len(events) == 0 {
		return false
	}
	last := events[len(events)-1]
	return last.Op == "done" && last.Owner == c.Owner
}

// shift is the rename of a transition: it moves the session, fences a
// reaped owner's release or done, and leaves the rest to commit.
func (c *Client) shift(op, id string, from sessions.State, fromOwner string, to sessions.State, toOwner string) (moved, error) {
	if err := sessions.ValidateID(id); err != nil {
		return moved{}, &Error{Op: op, ID: id, Err: err}
	}
	src := c.Board.Path(from, fromOwner, id)
	dst := c.Board.Path(to, toOwner, id)
	m, err := c.rename(op, id, src, dst, "", true)
	var e *Error
	if (op == "release" || op == "done") && errors.As(err, &e) &&
		(errors.Is(err, ErrSessionNotAvailable) || errors.Is(err, ErrSessionNotFound)) {
		if r, reaped := (&Leases{Board: c.Board}).wasReaped(c.Owner, id); reaped {
			e.Err = ErrClaimLost // fenced: this owner was reaped
			if r.State == ownerSuperseded {
				e.Err = ErrLostToEarlierClaim
			}
		}
	}
	return m, err
}

// Holds checks that this owner still holds session id. It fails with
// ErrClaimLost if the owner's claim was reaped, ErrSessionNotAvailable if
// someone else has it or it is not claimed, ErrSessionNotFound if it exists
// nowhere.
func (c *Client) Holds(id string) error {
	if err := sessions.ValidateID(id); err != nil {
		return &Error{Op: "heartbeat", ID: id, Err: err}
	}
	p := c.Board.Path(sessions.Doing, c.Owner, id)
	if info, err := os.Lstat(p); err == nil && info.Mode().IsRegular() {
		return nil
	}
	e := &Error{Op: "heartbeat", ID: id}
	e.State, e.Holder, e.Err = c.whereIs(id)
	if _, reaped := (&Leases{Board: c.Board}).wasReaped(c.Owner, id); reaped {
		e.Err = ErrClaimLost
	}
	return e
}

func (c *Client) read(st sessions.State, owner, id string) (sessions.Session, error) {
	s, _, err := c.Board.Read(sessions.Place{State: st, Owner: owner, Path: c.Board.Path(st, owner, id)})
	if err != nil {
		// The transition happened; someone moved the session on since.
		return sessions.Session{ID: id, State: st, Owner: owner, Path: c.Board.Path(st, owner, id)}, nil
	}
	return s, nil
}

// move renames src to dst without replacing, creating dst's directory if it
// is missing, makes the transition durable and records it (rename, then
// commit), and turns failures into *Error.
func (c *Client) move(op, id, src, dst string, locate bool) error {
	m, err := c.rename(op, id, src, dst, "", locate)
	if err != nil {
		return err
	}
	return c.commit(m)
}

// moved is a transition whose rename has happened, waiting for commit to
// make it durable and record it.
type moved struct {
	op, id, src, dst string
	reason           string // why, for the event log (a reap's)
	dstSync, srcSync syncPoint
	// logged makes the transition's line durable (written at the rename,
	// see rename); nil on a board whose arbiter keeps the log.
	logged func() error
}

// rename is move without the commit. With locate, a missing source is told
// apart as not found or not available (with where the session is now);
// without, it is ErrSessionNotAvailable: next and reap, which lose races
// all the time, skip that look-up. reason is the event log's why (a
// reap's).
//
// On a board without an arbiter the transition's line is written here,
// before the move guard is left: the guard then holds the session's order
// lock too (boardhook.EnterMoveOf), so the next move of the session, which
// can only rename after this one, writes its line after this one's, and
// the log lists each session's moves in the order they happened. Were the
// line written later (after commit's fsyncs), a release could be logged
// after the done of the owner that claimed the session next, and a
// repeated done, which asks the log whether it was the last move, would be
// refused. commit makes the line durable after the directories. A crash
// before that loses no reported transition and no line of one. On a
// filesystem that journals metadata in the order it changed (ext4, XFS,
// Btrfs) the line, an append made after the rename, persists only with it;
// elsewhere a crash could keep the line of a move it undid: the history
// then does not end where the session is, which doctor finds and mends
// with a line of its own, as it does for a line a crash lost.
func (c *Client) rename(op, id, src, dst, reason string, locate bool) (moved, error) {
	// Only regular files are sessions (Locate and List skip symlinks and
	// special files): never move anything else. Callers without locate
	// (next, reap) move what a listing just found to be a regular file.
	if locate {
		if info, lerr := os.Lstat(src); lerr == nil && !info.Mode().IsRegular() {
			return moved{}, &Error{Op: op, ID: id, From: src, To: dst, Err: ErrSessionNotFound}
		}
	}
	if err := c.checkArbiter(); err != nil {
		return moved{}, &Error{Op: op, ID: id, From: src, To: dst, Err: err}
	}
	// Never while a sync rewrites the work tree, nor on a work tree left
	// half-rebased (see sessions.Board.EnterMove).
	leave, err := boardhook.EnterMoveOf(c.Board, id)
	if err != nil {
		return moved{}, &Error{Op: op, ID: id, From: src, To: dst, Err: err}
	}
	err = fsx.RenameNoReplace(src, dst)
	if errors.Is(err, fs.ErrNotExist) {
		// Either the source is gone (lost race) or dst's directory (an
		// owner's directory in doing/) does not exist yet.
		dstDir := filepath.Dir(dst)
		if _, serr := os.Lstat(dstDir); errors.Is(serr, fs.ErrNotExist) && exists(src) {
			if merr := os.MkdirAll(dstDir, 0o755); merr != nil {
				leave()
				return moved{}, &Error{Op: op, ID: id, From: src, To: dst, Err: merr}
			}
			// The new directory's entry in its parent must survive too.
			if serr := c.syncDirs(c.changed(filepath.Dir(dstDir))); serr != nil {
				leave()
				return moved{}, &Error{Op: op, ID: id, From: src, To: dst, Err: serr}
			}
			err = fsx.RenameNoReplace(src, dst)
		}
	}
	if err == nil {
		m := moved{op: op, id: id, src: src, dst: dst, reason: reason}
		if boardArbiter(c.Board) == nil {
			m.logged = c.writeLine(m.event(c.Owner))
		}
		leave()
		c.Board.Arrived(dst) // into todo/: the next next must see it (see sessions.PeekFresh)
		m.dstSync, m.srcSync = c.changed(filepath.Dir(dst)), c.changed(filepath.Dir(src))
		return m, nil
	}
	leave()
	e := &Error{Op: op, ID: id, From: src, To: dst, Err: err}
	switch {
	case errors.Is(err, fs.ErrNotExist) && !locate:
		e.Err = ErrSessionNotAvailable
	case errors.Is(err, fs.ErrNotExist):
		e.Err = ErrSessionNotFound
		e.State, e.Holder, e.Err = c.whereIs(id)
	case errors.Is(err, fs.ErrExist):
		e.Err = ErrConflict
	case errors.Is(err, syscall.EXDEV):
		e.Err = ErrCrossDevice
	}
	return moved{}, e
}

// commit makes transitions durable, then records them, in order. Unless
// the board is NoSync, each transition needs three fsyncs before it is
// reported (or, for a claim, worked on):
//
//   - the destination directory: the session's new place survives a crash
//     (else the session may be found back where it was, or, on a
//     filesystem without a journal, nowhere);
//   - then the source directory: its old place is gone for good (else a
//     crash may leave a second copy, which next refuses until doctor
//     repairs it); destination first, so that a crash between the two
//     leaves two copies, never none;
//   - the event log, whose line was written at the rename (see rename, for
//     why then): history is never lost.
//
// Transitions committed together share the fsyncs of the directories they
// have in common, and their event log lines share one fsync; goroutines of
// the client share them too (see syncDirs, sessions.EventLog). The error
// is the first fsync's that failed; every transition is recorded
// regardless, as it happened.
func (c *Client) commit(ms ...moved) error {
	for _, err := range c.commitEach(ms...) {
		if err != nil {
			return err
		}
	}
	return nil
}

// commitEach is commit with each transition's own error.
func (c *Client) commitEach(ms ...moved) []error {
	errs := make([]error, len(ms))
	events := make([]sessions.Event, 0, len(ms))
	for i, m := range ms {
		if err := c.syncDirs(m.dstSync, m.srcSync); err != nil {
			errs[i] = &Error{Op: m.op, ID: m.id, From: m.src, To: m.dst, Err: fmt.Errorf("sync: %w", err)}
		}
	}
	// History: each line was written at its rename; one fsync of the log
	// covers them all (and in commit mode each makes one git commit,
	// through Board.OnEvent). The transitions stand whatever becomes of
	// their lines; the CLI reports their failures.
	for _, m := range ms {
		if m.logged != nil {
			_ = m.logged()
		} else {
			events = append(events, m.event(c.Owner))
		}
	}
	if len(events) == 0 {
		return errs
	}
	if boardArbiter(c.Board) != nil {
		// A shared board: the transition stands only once the remote took
		// it; the arbiter undoes a refused one and keeps the event log.
		for i, m := range ms {
			if m.logged != nil {
				continue
			}
			if err := boardArbiter(c.Board)(c.Board.NewEvent(m.event(c.Owner))); err != nil {
				errs[i] = fromArbiter(err)
			}
		}
		return errs
	}
	_ = c.record(events...) // an arbiter went since the rename: recorded here
	return errs
}

// event is m's line in the event log, made by owner.
func (m moved) event(owner string) sessions.Event {
	return sessions.Event{Op: m.op, ID: m.id, Owner: owner, Reason: m.reason, Src: m.src, Dst: m.dst}
}

// locateTries is how many scans of the board must all miss a session before
// it is reported as not found.
const locateTries = 5

// whereIs finds a session that a transition did not find at its source.
// A session is in exactly one place at any instant, but it may move while
// we look: each try therefore looks in todo/, doing/*/, done/, failed/ and
// then back in the reverse order. To slip past both passes the session
// must move twice during them (into a place already looked at, and back),
// and to be reported missing it must do so on every one of a few tries.
func (c *Client) whereIs(id string) (sessions.State, string, error) {
	for try := 1; try <= locateTries; try++ {
		owners, err := c.Board.Owners()
		if err != nil {
			return "", "", err
		}
		places := []sessions.Place{{State: sessions.Todo}}
		for _, o := range owners {
			places = append(places, sessions.Place{State: sessions.Doing, Owner: o})
		}
		places = append(places, sessions.Place{State: sessions.Done}, sessions.Place{State: sessions.Failed})
		for k := 0; k < 2*len(places); k++ {
			p := places[k%len(places)]
			if k >= len(places) {
				p = places[2*len(places)-1-k] // the way back
			}
			if info, err := os.Lstat(c.Board.Path(p.State, p.Owner, id)); err == nil && info.Mode().IsRegular() {
				return p.State, p.Owner, ErrSessionNotAvailable
			}
		}
		if try < locateTries {
			time.Sleep(time.Duration(try) * 100 * time.Microsecond)
		}
	}
	return "", "", ErrSessionNotFound
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// writeLine writes a transition's line to the board's event log through
// the client's open log, and returns what makes it durable and passes it
// to OnEvent (see boardhook.WriteEvents).
func (c *Client) writeLine(e sessions.Event) (commit func() error) {
	c.once.Do(func() { c.log = c.Board.OpenEventLog() })
	if c.log.Board() != c.Board {
		// The caller gave the client another board.
		l := c.Board.OpenEventLog()
		write := boardhook.WriteEvents(l, []sessions.Event{e})
		return func() error { defer l.Close(); return write() }
	}
	return boardhook.WriteEvents(c.log, []sessions.Event{e})
}

// record appends transitions to the board's event log through the
// client's open log (see sessions.EventLog), and passes each to OnEvent.
func (c *Client) record(events ...sessions.Event) error {
	c.once.Do(func() { c.log = c.Board.OpenEventLog() })
	if c.log.Board() != c.Board {
		// The caller gave the client another board.
		var first error
		for _, e := range events {
			if err := c.Board.Record(e); err != nil && first == nil {
				first = err
			}
		}
		return first
	}
	return c.log.Record(events...)
}

// syncPoint is a directory just changed, and how many of its fsyncs had
// started by then: any fsync that starts later covers the change.
type syncPoint struct {
	dir   string
	s     *dirSync
	after uint64
}

// changed returns the sync point of a change just made in dir (nothing to
// sync if the board is NoSync).
func (c *Client) changed(dir string) syncPoint {
	if c.Board.NoSync {
		return syncPoint{}
	}
	s := c.syncs.get(dir)
	s.mu.Lock()
	defer s.mu.Unlock()
	return syncPoint{dir: dir, s: s, after: s.started}
}

// syncDirs makes the changes of the given sync points durable, in order.
// Goroutines of one client share fsyncs: a change is covered by any fsync
// of its directory that started after it, so one fsync serves every
// goroutine that changed the directory before it started, and one that
// finds such an fsync done (another goroutine's, while it was syncing
// another directory) needs none of its own.
func (c *Client) syncDirs(points ...syncPoint) error {
	for _, p := range points {
		if p.s == nil {
			continue
		}
		if err := p.s.sync(p.dir, p.after); err != nil {
			return err
		}
	}
	return nil
}

// dirSyncs holds a client's directories being fsynced.
type dirSyncs struct {
	mu sync.Mutex
	m  map[string]*dirSync
}

func (d *dirSyncs) get(dir string) *dirSync {
	d.mu.Lock()
	defer d.mu.Unlock()
	s, ok := d.m[dir]
	if !ok {
		if d.m == nil {
			d.m = map[string]*dirSync{}
		}
		s = &dirSync{}
		s.cond.L = &s.mu
		d.m[dir] = s
	}
	return s
}

// dirSync numbers the fsyncs of one directory, one at a time.
type dirSync struct {
	mu       sync.Mutex
	cond     sync.Cond
	running  bool
	started  uint64 // fsyncs started
	finished uint64 // the last fsync finished
	err      error  // its error
}

// sync returns once an fsync numbered above after has finished: it starts
// one if none is running, else waits for the running one and, if that one
// started too early, for the next.
func (s *dirSync) sync(dir string, after uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.finished <= after {
		if s.running {
			s.cond.Wait()
			continue
		}
		s.running = true
		s.started++
		n := s.started
		s.mu.Unlock()
		err := syncDir(dir)
		s.mu.Lock()
		s.running = false
		s.finished, s.err = n, err
		s.cond.Broadcast()
	}
	// The last fsync finished started after the change: its outcome is
	// the change's.
	return s.err
}

// syncDir fsyncs a directory with raw system calls: an os.File would
// register the descriptor with the poller and set it non-blocking and back
// (five more system calls), four times per session for pickup work.
func syncDir(dir string) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: dir, Err: err}
	}
	err = unix.Fsync(fd)
	if cerr := unix.Close(fd); err == nil && cerr != nil {
		return &os.PathError{Op: "close", Path: dir, Err: cerr}
	}
	if err != nil {
		return &os.PathError{Op: "fsync", Path: dir, Err: err}
	}
	return nil
}

// HandOver moves session id, which this owner holds, to owner to in one
// no-replace rename (doing/<owner>/ to doing/<to>/): the session is never
// in todo/ on the way, so no other claimer can take it meanwhile. For one
// agent that goes on under a new name (Claude Code's /clear).
func (c *Client) HandOver(ctx context.Context, id, to string) (sessions.Session, error) {
	if err := sessions.ValidateOwner(to); err != nil {
		return sessions.Session{}, &Error{Op: "hand over", ID: id, Err: err}
	}
	if err := c.Board.CheckDir(string(sessions.Doing) + "/" + to); err != nil {
		return sessions.Session{}, &Error{Op: "hand over", ID: id, Err: err}
	}
	return c.arbitrated(ctx, func() (sessions.Session, error) {
		return c.transition("hand over", id, sessions.Doing, c.Owner, sessions.Doing, to)
	}, ErrSessionNotFound, ErrSessionNotAvailable, ErrClaimLost)
}
