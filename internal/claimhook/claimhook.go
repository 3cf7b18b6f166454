// Package claimhook gives pickup's own packages the parts of package claim
// that are no Go user's business, so that claim's public API holds no type
// of internal/: where process information comes from (a memoized reading
// for a long-running server, a fake host name or /proc in tests), and locks
// recorded for a process other than the caller (the CLI, a short-lived
// command, locks for the agent's shell that ran it), and a command's own
// arbiter lent to its client, so that the command runs the library's
// arbiter steps rather than a copy of them.
//
// Package claim fills the hooks when it is initialised (claim/hooks.go),
// once, before any of its code can run; nothing else writes them. A caller
// that imports claimhook without linking claim gets a panic that says so.
package claimhook

import (
	"fmt"

	"github.com/pickup-dev/pickup/internal/arbiter"
	"github.com/pickup-dev/pickup/internal/proc"
)

// Hooks are package claim's entry points for pickup's own packages.
type Hooks struct {
	// UseSystem makes target (a *claim.Leases or a *claim.Locks) judge
	// processes and this host through env instead of the real system.
	UseSystem func(target any, env proc.Env)
	// HoldLocksFor makes every lock taken through locks (a *claim.Locks)
	// be recorded for p instead of the calling process.
	HoldLocksFor func(locks any, p proc.Process)
	// ShareLocks makes book (an open arbiter's named locks) hold every
	// lock of locks (a *claim.Locks) beyond this machine too; BookOf is
	// the book it holds them in (ok false: this machine's only).
	ShareLocks func(locks any, book arbiter.LockBook)
	BookOf     func(locks any) (arbiter.LockBook, bool)
	// LendArbiter makes client (a *claim.Client) run its arbiter steps
	// through a, which the caller attached and closes.
	LendArbiter func(client any, a arbiter.Arbiter, inLine bool, warn func(error))
}

// hooks is written once, by package claim's init (Install).
var hooks Hooks

// Install is called by package claim, and only by it.
func Install(h Hooks) { hooks = h }

// UseSystem makes target (a *claim.Leases or a *claim.Locks) judge
// processes and this host through env instead of the real system.
func UseSystem(target any, env proc.Env) {
	mustInstalled()
	hooks.UseSystem(target, env)
}

// HoldLocksFor makes every lock taken through locks (a *claim.Locks) be
// recorded for p instead of the calling process: the lock lives as long as
// p does.
func HoldLocksFor(locks any, p proc.Process) {
	mustInstalled()
	hooks.HoldLocksFor(locks, p)
}

// ShareLocks makes book, an open arbiter's named locks (a PostgreSQL
// board's), hold every lock taken through locks (a *claim.Locks) beyond
// this machine too: what claim.Client.Locks does for a Go program, for a
// command that opened the arbiter itself.
func ShareLocks(locks any, book arbiter.LockBook) {
	mustInstalled()
	hooks.ShareLocks(locks, book)
}

// BookOf is the arbiter's book that holds the locks of locks (a
// *claim.Locks) beyond this machine; ok false if none does.
func BookOf(locks any) (arbiter.LockBook, bool) {
	mustInstalled()
	return hooks.BookOf(locks)
}

// LendArbiter makes client (a *claim.Client) run the arbiter steps of its
// transitions and waits (bring the board in line, answer again, name the
// winner, keep a wait in line) through a, an arbiter the caller attached
// to the board and closes itself: a command runs exactly the library's
// steps. inLine: the caller brought the board in line with a just now, so
// the client's next step trusts that view. warn takes what a wait
// survives (nil: dropped).
func LendArbiter(client any, a arbiter.Arbiter, inLine bool, warn func(error)) {
	mustInstalled()
	hooks.LendArbiter(client, a, inLine, warn)
}

func mustInstalled() {
	if hooks.UseSystem == nil || hooks.HoldLocksFor == nil || hooks.ShareLocks == nil || hooks.BookOf == nil || hooks.LendArbiter == nil {
		panic(fmt.Sprintf("claimhook: package claim is not linked in (hooks %+v)", hooks))
	}
}
