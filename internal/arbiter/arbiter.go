// Package arbiter is what decides, beyond one board directory, whether a
// transition stands: the interface every kind of shared board implements
// (a git remote's board branch in internal/arbiter/gitremote, a PostgreSQL database in
// internal/arbiter/postgres), a local arbiter that decides nothing (a board that is
// not shared), and the outcomes an arbiter reports, as errors that claim
// re-exports as the same values.
//
// Data flows cli → claim → arbiter → sessions → fsx: this package imports
// sessions and none of its implementations; internal/arbiter/location is
// the one place that reads config.yaml's shared: and opens the right one.
//
// The guarantee: a transition on a shared board stands only once its
// arbiter took it (the board's arbiter, which Open of an implementation sets through internal/boardhook);
// a refused one is undone in the board directory and reported as a
// *Refusal. Its limit: a program that renames session files itself, past
// claim and sessions, goes past every arbiter.
package arbiter

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pickup-dev/pickup/internal/proc"
	"github.com/pickup-dev/pickup/sessions"
)

// Arbiter is an open shared board's arbiter, attached to its board
// (the board's arbiter, set through internal/boardhook, decides each transition).
type Arbiter interface {
	// Ready brings the board directory in line with the arbiter before a
	// caller reads or changes it. trustRecent: the caller claims or moves
	// sessions, whose own round trip is the compare-and-swap, so a view
	// another process of this clone took a moment ago will do
	// (AnswerAgain then checks an answer that rests on it).
	Ready(ctx context.Context, trustRecent bool) error
	// AnswerAgain is for a caller that failed with err after a Ready
	// that trusted a recent view: if err is one of answers (an answer
	// that rests on the board's content), it brings the board in line
	// and reports whether it changed (the caller should try once more).
	AnswerAgain(ctx context.Context, err error, answers ...error) (bool, error)
	// Settled is where the arbiter has session id once the transitions
	// of this clone's other processes are settled there (so that a loser
	// names the winner at the arbiter, not a local racer that lost there
	// too); ok false if it does not know better than the board here.
	Settled(ctx context.Context, id string) (state sessions.State, holder string, ok bool)
	// Watch keeps the board directory in line while a wait is under way,
	// so that sessions made or released elsewhere land in todo/; warn
	// reports what the wait survives. It returns a function that stops
	// it.
	Watch(ctx context.Context, warn func(error)) (stop func())
	// Heartbeat tells the other machines that owner is alive, at most
	// once per every (0: now).
	Heartbeat(ctx context.Context, owner string, every time.Duration) error
	// Sync is `pickup sync` on an open arbiter: it brings the board in
	// line (imports what was made by hand) and says how it stands.
	Sync(ctx context.Context) (Report, error)
	// Status is what pickup status says of the arbiter beyond its owners
	// (a PostgreSQL board's history in git); nil: nothing.
	Status(ctx context.Context) []string
	// Heard is what the arbiter knows of owner, who holds no lease here
	// (it works in another board of the arbiter); ok false: nothing.
	Heard(owner string) (h Heard, ok bool)
	// Where names the arbiter for messages (a remote and branch, a
	// database URL without its password); "" for a local board.
	Where() string
	// Close releases what the arbiter holds (a connection, a helper) and
	// detaches it from its board, which refuses transitions after.
	Close() error
}

// Local is the arbiter of a board that is not shared: the board
// directory decides alone, so every method does nothing.
type Local struct{}

func (Local) Ready(context.Context, bool) error                              { return nil }
func (Local) AnswerAgain(context.Context, error, ...error) (bool, error)     { return false, nil }
func (Local) Settled(context.Context, string) (sessions.State, string, bool) { return "", "", false }
func (Local) Heartbeat(context.Context, string, time.Duration) error         { return nil }
func (Local) Where() string                                                  { return "" }
func (Local) Close() error                                                   { return nil }
func (Local) Watch(context.Context, func(error)) (stop func())               { return func() {} }
func (Local) Sync(context.Context) (Report, error)                           { return Report{}, nil }
func (Local) Status(context.Context) []string                                { return nil }
func (Local) Heard(string) (Heard, bool)                                     { return Heard{}, false }

// The outcomes of a transition, checked with errors.Is. package claim
// re-exports them as the same values (claim.ErrSessionNotAvailable is
// ErrSessionNotAvailable), which is where Go users find them.
var (
	ErrSessionNotAvailable = errors.New("session not available")
	ErrSessionNotFound     = errors.New("session not found")
	ErrConflict            = errors.New("destination already holds that id")
	ErrClaimLost           = errors.New("claim lost")
	ErrLockTimeout         = errors.New("timed out waiting for lock")
	ErrNotHolder           = errors.New("not the lock holder")
	ErrLockNotHeld         = errors.New("lock not held")
	// ErrNotAttached: the board is shared (config.yaml says shared:) but
	// no arbiter is attached to it, so a transition would move the
	// session here only; it is refused instead.
	ErrNotAttached = errors.New("shared board without its arbiter")
)

// The failures of an arbiter itself, defined here once so that every
// implementation reports the same values (gitremote.ErrRemote is
// ErrRemote) and a caller maps them to its exit codes without importing
// an implementation.
var (
	// ErrDiskFull: a transition could not be made because the disk that
	// holds the board is full (ENOSPC) or the quota is used up (EDQUOT);
	// the local move was undone. The machine's failure, not the arbiter's.
	ErrDiskFull = errors.New("the disk is full")
	// ErrRemote: a git remote could not be reached, or refused the push
	// for a reason other than a race; nothing moved locally.
	ErrRemote = errors.New("shared board: remote failed")
	// ErrDatabase: the database could not be reached, dropped the
	// connection, or refused the request; nothing moved here.
	ErrDatabase = errors.New("postgres board: database failed")
)

// Refusal is a transition that an arbiter did not let stand: the local
// move was undone. claim turns it into a *claim.Error at its boundary.
type Refusal struct {
	Op, ID   string
	From, To string
	// State and Holder: where the arbiter has the session now, if known.
	State  sessions.State
	Holder string
	Err    error
	// Lost: the arbiter has the session elsewhere (another owner won);
	// false when it could not decide (unreachable, refused for another
	// reason).
	Lost bool
}

func (e *Refusal) Error() string { return Message(e.Op, e.ID, e.State, e.Holder, e.Err) }

// Message is how a failed transition reads, a refusal here and a
// *claim.Error alike: "op id: cause (claimed by holder)" or "(it is in
// state)" when where the session is now is known.
func Message(op, id string, state sessions.State, holder string, err error) string {
	msg := op + ": " + err.Error()
	if id != "" {
		msg = op + " " + id + ": " + err.Error()
	}
	switch {
	case holder != "":
		msg += fmt.Sprintf(" (claimed by %s)", holder)
	case state != "":
		msg += fmt.Sprintf(" (it is in %s)", state)
	}
	return msg
}

func (e *Refusal) Unwrap() error { return e.Err }

// Refused is e's transition refused with err (not lost: see Refusal.Lost).
func Refused(e sessions.Event, err error) *Refusal {
	return &Refusal{Op: e.Op, ID: e.ID, From: e.Src, To: e.Dst, Err: err}
}

// Leases is what an arbiter needs of this machine's lease records
// (claim.Leases, which claim hands to location.Open): an arbiter records
// here what it learns of owners elsewhere.
type Leases interface {
	// FenceStale fences owner out of session id, judged stale elsewhere
	// (reaped in another clone): its late done or release is refused.
	FenceStale(owner, id, reason string) error
	// HeldHere reports whether a process of this machine holds owner's
	// lease (its processes speak for it).
	HeldHere(owner string) (bool, error)
	// Renew renews owner's lease here (it was heard from elsewhere).
	Renew(owner string) error
	// Holders is the processes of owner's lease here (nil: no lease),
	// which an arbiter shares with the other boards of this machine.
	Holders(owner string) []proc.Process
}

// Lock is a named lock as an arbiter holds it for every machine (what
// claim.LockInfo says of it, less what only this machine knows).
type Lock struct {
	Key, Owner  string
	Process     proc.Process
	Token       string
	TTL         time.Duration
	AcquiredAt  time.Time
	HeartbeatAt time.Time
	Age         time.Duration
	Run         bool
	Superseded  bool
	Stale       bool // judged on the arbiter's clock
}

// LockRefusal is a release or heartbeat of a lock that the arbiter did
// not take: Err is ErrLockNotHeld, ErrNotHolder (Holder holds it) or why
// it could not answer.
type LockRefusal struct {
	Op, Key string
	Holder  *Lock
	Err     error
}

func (e *LockRefusal) Error() string { return e.Op + " lock " + e.Key + ": " + e.Err.Error() }
func (e *LockRefusal) Unwrap() error { return e.Err }

// LockBook is named locks as an arbiter holds them for every machine (a
// PostgreSQL database): a key is held once across them. claim.Locks
// decides with it when its board's arbiter has one (see LockHolder).
type LockBook interface {
	// AcquireLock takes key for mine, or replaces replace (a stale or
	// superseded holder); false and the holder if another holds it.
	AcquireLock(mine Lock, replace *Lock) (bool, Lock, error)
	// ReleaseLock gives up key (force: whoever holds it).
	ReleaseLock(key, owner, token string, force bool) (Lock, error)
	// HeartbeatLock renews owner's hold of key.
	HeartbeatLock(key, owner string) error
	// ReadLocks is the locks held (key "": all of them).
	ReadLocks(key string) ([]Lock, error)
	// Supersede asks the `pickup lock run` that holds key with token on
	// another machine to stop (it does at its next heartbeat); false if
	// that acquisition no longer holds key.
	Supersede(key, token string) (bool, error)
	// NewWaiter opens a waiter that wakes when a lock is released on any
	// machine.
	NewWaiter() (LockWaiter, error)
}

// LockWaiter wakes when a lock is released anywhere, or after at most d.
type LockWaiter interface {
	Wait(d time.Duration) error
	Close()
}

// LockHolder is an open arbiter that holds named locks too (a database;
// a git remote does not: its locks stay on each machine).
type LockHolder interface {
	Locks(now func() time.Time) LockBook
}
