package cli

import (
	"context"
	"time"
)

// heardOwner completes st, an owner of a shared board, with what the
// arbiter knows of it. An owner with no process in a lease here works in
// another board: on this machine if the arbiter has its lease's processes
// from a board of this machine (it was judged by them) or its last
// heartbeat came from this machine; else on another machine, shown with
// that machine (its last heartbeat's) and how long ago that heartbeat
// was, judged on the arbiter's clock.
func (r *run) heardOwner(st *ownerStatus) {
	if len(st.Holders) > 0 {
		return
	}
	arb := r.shared.arbiter()
	if arb == nil {
		return // not shared, or its arbiter did not answer: the last view only
	}
	h, ok := arb.Heard(st.Owner)
	if !ok {
		return
	}
	if len(h.Holders) > 0 {
		st.Holders, st.PID, st.Host, st.ThisMachine = claimHolders(h.Holders), h.Holders[0].PID, h.Holders[0].Host, true
	}
	if !h.Beat {
		return
	}
	st.ThisMachine = st.ThisMachine || h.ThisMachine
	st.Elsewhere = !st.ThisMachine
	if st.Host == "" {
		st.Host = h.Host
	}
	st.DBHeartbeat = h.Age.Round(time.Second).String()
}

// printHeardOwner is heardOwner's line of pickup status.
func (r *run) printHeardOwner(st ownerStatus) {
	if st.ThisMachine {
		r.printf("  on this machine (%s), in another board of the database", sanitize(st.Host))
		if st.DBHeartbeat != "" {
			r.printf(", last heartbeat in the database %s ago", st.DBHeartbeat)
		}
		r.printf("\n")
		return
	}
	if !st.Elsewhere {
		return
	}
	host := st.Host
	if host == "" {
		host = "a machine that did not say"
	}
	r.printf("  on another machine: %s, last heartbeat in the database %s ago\n", sanitize(host), st.DBHeartbeat)
}

// printArbiterStatus is what the arbiter says of itself at the end of
// pickup status (a PostgreSQL board's history in git).
func (r *run) printArbiterStatus() {
	arb := r.shared.arbiter()
	if arb == nil {
		return
	}
	for _, l := range arb.Status(context.Background()) {
		r.printf("%s\n", sanitize(l))
	}
}
