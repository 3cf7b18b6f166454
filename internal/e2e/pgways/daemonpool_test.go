package pgways

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestDaemonKeepsItsConnection: the machine's daemon serves command after
// command on the connections it pools, on a board whose history goes to
// git too, where every read of the board also asks whether a push is due:
// "not due" is an answer, not a broken connection. A connection dropped
// after each command makes the server fork a backend for the next one,
// which made a history board's drain twice as slow.
func TestDaemonKeepsItsConnection(t *testing.T) {
	db, url := newDatabase(t)
	r := newGitRemote(t)
	c := r.clones(url, 1, "1h")[0]
	backends := func() string {
		return server.psql(t, db, "SELECT string_agg(pid::text || '@' || extract(epoch FROM backend_start)::text, ' ' ORDER BY pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
	}
	// The first read after the first session finds a push due, and the
	// push goes at once; after it, the next is due only in an hour.
	c.must("", "new", "-t", "first")
	c.must("", "list")
	r.waitLog("pushed", 1)
	deadline := time.Now().Add(10 * time.Second)
	for pending(t, db) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // the pusher gives its connection back
	before := backends()
	for i := range 4 {
		c.must("", "new", "-t", fmt.Sprintf("session %d", i))
		c.must("", "list")
	}
	// Kept, not dropped: every backend the daemon had before still serves
	// after the commands (a connection dropped after each command leaves
	// none of them). The pool may have grown by one or two, for a
	// command that came while the pusher still held its connection (a
	// busy machine), never by one per command.
	after := backends()
	now := map[string]bool{}
	for _, b := range strings.Fields(after) {
		now[b] = true
	}
	for _, b := range strings.Fields(before) {
		if !now[b] {
			t.Errorf("the daemon dropped its connection %s over 8 commands:\nbefore %s\nafter  %s", b, before, after)
		}
		delete(now, b)
	}
	if len(now) > 2 {
		t.Errorf("the daemon opened %d connections over 8 commands run one after another:\nbefore %s\nafter  %s", len(now), before, after)
	}
}
