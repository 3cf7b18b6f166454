package cli

import "time"

// pgOwner completes st, an owner of a PostgreSQL board, with what the
// database knows of it: an owner with a heartbeat there and no process in
// a lease here works on another machine, shown with that machine (its last
// heartbeat's) and how long ago that heartbeat was, judged on the database
// server's clock.
func (r *run) pgOwner(st *ownerStatus) {
	if len(st.Holders) > 0 {
		return
	}
	pa, ok := r.shared.arbiter().(*pgArbiter)
	if !ok {
		return // not a PostgreSQL board, or its database did not answer: the last view only
	}
	for _, b := range pa.pg.Beats() {
		if b.Owner != st.Owner {
			continue
		}
		st.Elsewhere = true
		st.Host = b.Host
		st.DBHeartbeat = (time.Duration(b.AgeMS) * time.Millisecond).Round(time.Second).String()
		return
	}
}

// printPGOwner is pgOwner's line of pickup status.
func (r *run) printPGOwner(st ownerStatus) {
	if !st.Elsewhere {
		return
	}
	host := st.Host
	if host == "" {
		host = "a machine that did not say"
	}
	r.printf("  on another machine: %s, last heartbeat in the database %s ago\n", sanitize(host), st.DBHeartbeat)
}
