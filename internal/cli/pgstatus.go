package cli

import "time"

// pgOwner completes st, an owner of a PostgreSQL board, with what the
// database knows of it. An owner with no process in a lease here works in
// another board: on this machine if the database has its lease's
// processes from a board of this machine (it was judged by them) or its
// last heartbeat came from this machine; else on another machine, shown
// with that machine (its last heartbeat's) and how long ago that heartbeat
// was, judged on the database server's clock.
func (r *run) pgOwner(st *ownerStatus) {
	if len(st.Holders) > 0 {
		return
	}
	pa, ok := r.shared.arbiter().(*pgArbiter)
	if !ok {
		return // not a PostgreSQL board, or its database did not answer: the last view only
	}
	if hs := pa.pg.HeardHolders(st.Owner); len(hs) > 0 {
		st.Holders, st.PID, st.Host, st.ThisMachine = claimHolders(hs), hs[0].PID, hs[0].Host, true
	}
	for _, b := range pa.pg.Beats() {
		if b.Owner != st.Owner {
			continue
		}
		if b.Host != "" && b.Host == pa.pg.Host {
			st.ThisMachine = true
		}
		st.Elsewhere = !st.ThisMachine
		if st.Host == "" {
			st.Host = b.Host
		}
		st.DBHeartbeat = (time.Duration(b.AgeMS) * time.Millisecond).Round(time.Second).String()
		return
	}
}

// printPGOwner is pgOwner's line of pickup status.
func (r *run) printPGOwner(st ownerStatus) {
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
