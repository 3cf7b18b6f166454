package arbiter

import (
	"context"
	"time"
)

// Follower is a live view's link to its board's arbiter (pickup board,
// the web board): it keeps the board directory in line and tells what the
// arbiter heard of owners elsewhere. It only reads: no transition goes
// through it, and it is not the board's arbiter (location.Follow attaches
// none). A view that also changes the board opens the arbiter
// (location.Open) for that.
type Follower interface {
	// Refresh brings the board directory in line with the arbiter and
	// reads what it heard of owners elsewhere. moved: a session moved;
	// heard: the owners whose news changed (another machine named), to
	// be judged again.
	Refresh(ctx context.Context) (moved bool, heard []string, err error)
	// Wait returns when a transition may have happened at the arbiter,
	// or after at most d (an arbiter that cannot tell just waits d).
	Wait(ctx context.Context, d time.Duration) error
	// Every is how long a view waits between refreshes when nothing
	// wakes it (shared_fetch; a database's poll).
	Every() time.Duration
	// Listens: the arbiter wakes Wait on every transition (a database's
	// LISTEN/NOTIFY), so a refresh that moved nothing is not news, and
	// its failures are the database's; a git remote is polled, and each
	// fetch is news.
	Listens() bool
	// Elsewhere reports whether owner, who holds no process here, works
	// elsewhere as the arbiter last heard (keptLease: this board keeps a
	// lease of it), and the machine of its last heartbeat if known.
	Elsewhere(owner string, keptLease bool) (host string, ok bool)
	// Where names the arbiter for the view's header (a remote, a
	// database URL without its password).
	Where() string
	// Say is err as a status line says it: the arbiter's own words first.
	Say(err error) string
	// Close lets go of what the follower holds (a connection, a waiter).
	Close() error
}
