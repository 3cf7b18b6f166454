package claim

import (
	"time"

	"github.com/pickup-dev/pickup/internal/boardhook"
)

// heardHolders is the processes of owner's leases that other boards of
// this machine recorded with the board's arbiter
// (set on the board through internal/boardhook): an owner that works in another clone of
// this machine is judged by its processes here too, not only by its
// heartbeat, so that its sessions come back at once from any board of its
// machine when it dies.
func (l *Leases) heardHolders(owner string) []Holder {
	if l.Board == nil {
		return nil
	}
	heard := boardhook.HeardOf(l.Board)
	if heard == nil {
		return nil
	}
	return holdersOf(heard(owner))
}

// withHolders is lease (err: none here) with others added to its holders.
// A lease that is only others' has heard as its heartbeat, now if the
// owner was not heard (in doubt, a claim stays: processes that cannot be
// checked from here do not make it stale).
func withHolders(lease Lease, err error, owner string, heard time.Time, wasHeard bool, now time.Time, others []Holder) Lease {
	if err != nil {
		if !wasHeard {
			heard = now
		}
		lease = Lease{Owner: owner, Heartbeat: heard}
	}
	for _, p := range others {
		if !holds(lease, p) {
			lease.Holders = append(lease.Holders, p)
		}
	}
	return lease
}
