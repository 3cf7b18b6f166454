package claim

import (
	"errors"
	"fmt"

	"github.com/pickup-dev/pickup/internal/arbiter"
	"github.com/pickup-dev/pickup/sessions"
)

// Errors returned by pickup, checked with errors.Is. Every error from a
// transition is an *Error wrapping one of them.
var (
	// ErrSessionNotAvailable: the session exists but is not where the
	// transition needs it: claimed by someone else, already done, or (for
	// release and done) not claimed by this owner. Losing a race to claim
	// is this error, and it is a normal outcome.
	ErrSessionNotAvailable = arbiter.ErrSessionNotAvailable
	// ErrSessionNotFound: no state holds the session.
	ErrSessionNotFound = arbiter.ErrSessionNotFound
	// ErrInvalidID: an id or owner that is not a safe file name.
	ErrInvalidID = sessions.ErrInvalidID
	// ErrConflict: the destination already holds a session with that id
	// (after a git merge, say). Nothing was overwritten.
	ErrConflict = arbiter.ErrConflict
	// ErrCrossDevice: the board spans filesystems, so a rename cannot move
	// the session atomically (EXDEV). Nothing moved.
	ErrCrossDevice = errors.New("board spans more than one filesystem")
	// ErrNothingAvailable: next found nothing to claim.
	ErrNothingAvailable = errors.New("nothing available")
	// ErrClaimLost: the owner's claim was taken away (its lease was reaped
	// and the session returned to todo); the owner may no longer finish or
	// release it.
	ErrClaimLost = arbiter.ErrClaimLost
	// ErrLostToEarlierClaim is ErrClaimLost (it matches both) for a
	// session that two owners claimed (through a sync or a merge) and
	// that pickup doctor --fix gave to the owner who claimed it first.
	ErrLostToEarlierClaim = fmt.Errorf("%w to an earlier claim", ErrClaimLost)
	// ErrNotAttached: the board is shared (config.yaml says shared:) and
	// no arbiter is attached to it (a Client made without New, or used
	// after Close): the transition is refused rather than made in this
	// clone only. Make the client with New.
	ErrNotAttached = arbiter.ErrNotAttached
)

// Error records a failed transition, like *os.LinkError: the operation, the
// session, the two paths and the cause. Where the session is now, when that
// is known, is in State and Holder.
type Error struct {
	Op     string // "claim", "release", "done", "reopen", "next"
	ID     string
	From   string
	To     string
	State  sessions.State // where the session is now, if known
	Holder string         // who holds it now, if it is in doing/
	Err    error
	// Arbiter: the board's Arbiter refused the transition (a shared
	// board's remote); the local move was undone.
	Arbiter bool
}

func (e *Error) Error() string { return arbiter.Message(e.Op, e.ID, e.State, e.Holder, e.Err) }

func (e *Error) Unwrap() error { return e.Err }

// fromArbiter is err with an arbiter's refusal (the packages beneath claim
// cannot make a *Error) turned into the *Error that claim's callers know;
// a refusal joined with the failure to undo it keeps the join.
func fromArbiter(err error) error {
	switch x := err.(type) {
	case nil:
		return nil
	case *arbiter.Refusal:
		return &Error{Op: x.Op, ID: x.ID, From: x.From, To: x.To, State: x.State, Holder: x.Holder, Err: x.Err, Arbiter: x.Lost}
	case interface{ Unwrap() []error }:
		errs := x.Unwrap()
		out := make([]error, len(errs))
		changed := false
		for i, e := range errs {
			out[i] = fromArbiter(e)
			changed = changed || out[i] != e
		}
		if changed {
			return errors.Join(out...)
		}
	}
	return err
}
