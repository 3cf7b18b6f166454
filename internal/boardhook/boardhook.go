// Package boardhook gives pickup's own packages the parts of a
// sessions.Board that are no Go user's business, so that package
// sessions' public API holds no type of internal/: the processes of
// owners' leases that an arbiter heard from the other boards of this
// machine (another clone's leases, pickup_holders in the database), by
// which claim.Leases judges an owner that works there.
//
// Package sessions fills the hooks when it is initialised
// (sessions/hooks.go), once, before any of its code can run; nothing else
// writes them. A caller that imports boardhook without linking sessions
// gets a panic that says so.
package boardhook

import (
	"fmt"

	"github.com/pickup-dev/pickup/internal/proc"
)

// Heard gives the processes of owner's leases that other boards of this
// machine recorded with the arbiter.
type Heard func(owner string) []proc.Process

// Hooks are package sessions' entry points for pickup's own packages.
type Hooks struct {
	// SetHeard makes heard the source of board's heard holders (board is
	// a *sessions.Board; heard nil: none).
	SetHeard func(board any, heard Heard)
	// HeardOf is board's source of heard holders (nil if none).
	HeardOf func(board any) Heard
}

// hooks is written once, by package sessions' init (Install).
var hooks Hooks

// Install is called by package sessions, and only by it.
func Install(h Hooks) { hooks = h }

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

func mustInstalled() {
	if hooks.SetHeard == nil || hooks.HeardOf == nil {
		panic(fmt.Sprintf("boardhook: package sessions is not linked in (hooks %+v)", hooks))
	}
}
