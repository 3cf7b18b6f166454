// Package boardhook gives pickup's own packages the parts of a
// sessions.Board that are no Go user's business, so that package
// sessions' public API holds no type of internal/ and nothing that only
// pickup sets: the board's arbiter, which decides each transition (a
// shared board's git remote or database, which Open of an arbiter
// implementation attaches); when an owner was last heard from by other
// means than this machine's processes; the per-clone suffix of the ids
// Create makes; and the processes of owners' leases that an arbiter heard
// from the other boards of this machine (another clone's leases,
// pickup_holders in the database), by which claim.Leases judges an owner
// that works there.
//
// Package sessions fills the hooks when it is initialised
// (sessions/hooks.go), once, before any of its code can run; nothing else
// writes them. A caller that imports boardhook without linking sessions
// gets a panic that says so.
package boardhook

import (
	"fmt"
	"time"

	"github.com/pickup-dev/pickup/internal/proc"
)

// Heard gives the processes of owner's leases that other boards of this
// machine recorded with the arbiter.
type Heard func(owner string) []proc.Process

// LastHeard says when owner was last heard from by other means than this
// machine's processes (a PostgreSQL board: the owner's heartbeat in the
// database, its age judged on the server's clock), as a time of this
// machine's clock, and whether it was. An owner whose processes here prove
// nothing is judged stale only that long after the newer of this and its
// lease's heartbeat (claim.Leases).
type LastHeard func(owner string) (time.Time, bool)

// Hooks are package sessions' entry points for pickup's own packages.
type Hooks struct {
	// SetArbiter makes arbiter (a func(sessions.Event) error, or nil:
	// none) board's arbiter.
	SetArbiter func(board any, arbiter any)
	// ArbiterOf is board's arbiter (a func(sessions.Event) error, nil if
	// none).
	ArbiterOf func(board any) any
	// SetLastHeard makes lastHeard board's source of when owners were
	// last heard from elsewhere (nil: none).
	SetLastHeard func(board any, lastHeard LastHeard)
	// LastHeardOf is board's source of when owners were last heard from
	// elsewhere (nil if none).
	LastHeardOf func(board any) LastHeard
	// SetIDSuffix makes suffix part of every id board's Create makes.
	SetIDSuffix func(board any, suffix string)
	// IDSuffixOf is board's id suffix ("" if none).
	IDSuffixOf func(board any) string
	// SetHeard makes heard the source of board's heard holders (board is
	// a *sessions.Board; heard nil: none).
	SetHeard func(board any, heard Heard)
	// HeardOf is board's source of heard holders (nil if none).
	HeardOf func(board any) Heard
	// AppendEventUnsynced appends event (a sessions.Event) to board's
	// event log without the fsync.
	AppendEventUnsynced func(board any, event any) error
	// EnterMoveOf is board's EnterMove for a move of session id that
	// writes its line before leave.
	EnterMoveOf func(board any, id string) (leave func(), err error)
	// WriteEvents writes events' (a []sessions.Event) lines to log (a
	// *sessions.EventLog); commit makes them durable.
	WriteEvents func(log any, events any) (commit func() error)
}

// hooks is written once, by package sessions' init (Install).
var hooks Hooks

// Install is called by package sessions, and only by it.
func Install(h Hooks) { hooks = h }

// EnterMoveOf is board's (a *sessions.Board) EnterMove for a move of
// session id that writes its line in the event log (WriteEvents) before it
// calls leave: besides the move guard it holds the lock that orders id's
// moves, so that of two moves of one session, the one that renamed first
// has its line first, whichever process made them. Never hold it twice for
// one session at once: the second waits for the first.
func EnterMoveOf(board any, id string) (leave func(), err error) {
	mustInstalled()
	return hooks.EnterMoveOf(board, id)
}

// WriteEvents writes the lines of events (E is sessions.Event) to log (a
// *sessions.EventLog), as its Record would, in order; commit makes them
// durable, passes each to the board's OnEvent, and returns the error (the
// write's, if that failed). commit must be called, once.
func WriteEvents[E any](log any, events []E) (commit func() error) {
	mustInstalled()
	return hooks.WriteEvents(log, events)
}

// AppendEventUnsynced appends e (a sessions.Event) to board's (a
// *sessions.Board) event log without the fsync: for a line that records a
// transition whose durable record is the arbiter's (a board that mirrors
// a database writes the transitions other machines made; a crash that
// loses the line loses nothing else).
func AppendEventUnsynced[E any](board any, e E) error {
	mustInstalled()
	return hooks.AppendEventUnsynced(board, e)
}

// SetHeard makes heard the source of board's (a *sessions.Board) heard
// holders; an arbiter sets it when it attaches to the board.
func SetHeard(board any, heard Heard) {
	mustInstalled()
	hooks.SetHeard(board, heard)
}

// HeardOf is board's (a *sessions.Board) source of heard holders, nil if
// none was set.
func HeardOf(board any) Heard {
	mustInstalled()
	return hooks.HeardOf(board)
}

// SetArbiter makes arbiter board's (a *sessions.Board) arbiter; E is
// sessions.Event. The arbiter decides whether a transition that has just
// happened on the board stands (a shared board pushes it to the git remote,
// whose ref update is the compare-and-swap, or has the database take it).
// It gets the event completed by Board.NewEvent. nil: the transition stands
// and is recorded. An error: the arbiter has undone the local move, and
// nothing is recorded on the board. While it is set, it keeps the event log
// itself (Board.Record and claim's clients append nothing). Open of an
// arbiter implementation sets it; use ClearArbiter for none.
func SetArbiter[E any](board any, arbiter func(e E) error) {
	mustInstalled()
	if arbiter == nil {
		hooks.SetArbiter(board, nil)
		return
	}
	hooks.SetArbiter(board, arbiter)
}

// ClearArbiter leaves board (a *sessions.Board) without an arbiter: its
// transitions stand as made here and are recorded in its event log.
func ClearArbiter(board any) {
	mustInstalled()
	hooks.SetArbiter(board, nil)
}

// ArbiterOf is board's (a *sessions.Board) arbiter, nil if none; E is
// sessions.Event (any other type panics).
func ArbiterOf[E any](board any) func(e E) error {
	mustInstalled()
	a := hooks.ArbiterOf(board)
	if a == nil {
		return nil
	}
	f, ok := a.(func(e E) error)
	if !ok {
		panic(fmt.Sprintf("boardhook: the arbiter is a %T, not a %T", a, f))
	}
	return f
}

// SetLastHeard makes lastHeard board's (a *sessions.Board) source of when
// owners were last heard from by other means than this machine's processes
// (nil: none); a PostgreSQL arbiter sets it when it attaches to the board.
func SetLastHeard(board any, lastHeard LastHeard) {
	mustInstalled()
	hooks.SetLastHeard(board, lastHeard)
}

// LastHeardOf is board's (a *sessions.Board) source of when owners were
// last heard from elsewhere, nil if none was set.
func LastHeardOf(board any) LastHeard {
	mustInstalled()
	return hooks.LastHeardOf(board)
}

// SetIDSuffix makes suffix part of every id that board's (a
// *sessions.Board) Create makes ("": none): a shared board's per-clone
// suffix (internal/idsuffix), so that clones never make the same id. An
// arbiter sets it when it attaches to the board.
func SetIDSuffix(board any, suffix string) {
	mustInstalled()
	hooks.SetIDSuffix(board, suffix)
}

// IDSuffixOf is board's (a *sessions.Board) id suffix, "" if none.
func IDSuffixOf(board any) string {
	mustInstalled()
	return hooks.IDSuffixOf(board)
}

func mustInstalled() {
	if hooks.SetHeard == nil || hooks.HeardOf == nil || hooks.SetArbiter == nil || hooks.ArbiterOf == nil ||
		hooks.SetLastHeard == nil || hooks.LastHeardOf == nil || hooks.SetIDSuffix == nil || hooks.IDSuffixOf == nil {
		panic(fmt.Sprintf("boardhook: package sessions is not linked in (hooks %+v)", hooks))
	}
}
