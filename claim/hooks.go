package claim

import (
	"fmt"

	"github.com/pickup-dev/pickup/internal/arbiter"
	"github.com/pickup-dev/pickup/internal/claimhook"
	"github.com/pickup-dev/pickup/internal/proc"
)

// init gives pickup's own packages what they need of claim beyond its
// public API (see internal/claimhook). It only fills the hooks: nothing
// runs, nothing of the process changes.
func init() {
	claimhook.Install(claimhook.Hooks{UseSystem: useSystem, HoldLocksFor: holdLocksFor, ShareLocks: shareLocks, BookOf: bookOf, LendArbiter: lendArbiter})
}

func useSystem(target any, env proc.Env) {
	switch t := target.(type) {
	case *Leases:
		t.sys = env
	case *Locks:
		t.sys = env
	default:
		panic(fmt.Sprintf("claimhook.UseSystem: %T is neither *claim.Leases nor *claim.Locks", target))
	}
}

func holdLocksFor(locks any, p proc.Process) {
	l, ok := locks.(*Locks)
	if !ok {
		panic(fmt.Sprintf("claimhook.HoldLocksFor: %T is not *claim.Locks", locks))
	}
	l.holder = &p
}

func locksOf(locks any, hook string) *Locks {
	l, ok := locks.(*Locks)
	if !ok {
		panic(fmt.Sprintf("claimhook.%s: %T is not *claim.Locks", hook, locks))
	}
	return l
}

func shareLocks(locks any, book arbiter.LockBook) {
	locksOf(locks, "ShareLocks").shared = bookLocks{book}
}

func bookOf(locks any) (arbiter.LockBook, bool) {
	b, ok := locksOf(locks, "BookOf").shared.(bookLocks)
	return b.LockBook, ok
}

func lendArbiter(client any, a arbiter.Arbiter, inLine bool, warn func(error)) {
	c, ok := client.(*Client)
	if !ok {
		panic(fmt.Sprintf("claimhook.LendArbiter: %T is not *claim.Client", client))
	}
	c.lendArbiter(a, inLine, warn)
}
