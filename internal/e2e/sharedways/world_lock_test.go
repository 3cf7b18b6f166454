package sharedways

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestCloneLockWaitBounded: a pickup process of the clone holds the
// clone's lock and never lets go (stopped with ^Z, say). A claim that
// trusts a fresh fetch moves the session here, queues its push and waits
// for the lock: it gives up after four network deadlines with exit 5,
// naming the lock file, takes its request out of the queue and undoes its
// move (the clone and the remote agree, and no later push makes the claim
// stand behind the agent's back). Once the lock is free, the claim works.
func TestCloneLockWaitBounded(t *testing.T) {
	t.Parallel()
	r := newRemote(t, "daemon")
	c := r.clones(1)[0]
	id := c.newSessions(1)[0]
	lock := filepath.Join(c.dir, ".git", "pickup", "lock")
	env := []string{"PICKUP_NETWORK_TIMEOUT=1s"} // the wait: 4 s

	c.must("", "sync") // a fetch just now: the claim trusts it and goes straight to its push
	// ... however long the machine takes to start the claim (a fetch is
	// trusted for a moment only: seen in CI, a claim that fetched again,
	// with the 1 s deadline, on a busy machine).
	fresh := c.keepFresh()
	fd, err := unix.Open(lock, unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(fd, unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	res := c.pickupEnv(ctx, "A", env, "claim", id)
	took := time.Since(start)
	fresh()
	unix.Close(fd)
	t.Logf("claim with the clone's lock held: exit %d after %s\n%s", res.code, took.Round(time.Millisecond), res.stderr)
	if res.code == -1 {
		t.Fatalf("the claim still waited for the lock after 30 s")
	}
	if res.code != 5 || !strings.Contains(res.stderr, lock) || !strings.Contains(res.stderr, "nothing moved") {
		t.Errorf("claim with the lock held: exit %d, want 5 naming %s and saying nothing moved", res.code, lock)
	}
	local, remote := sessionPlaces(r, c, id)
	if len(local) != 1 || len(remote) != 1 || local[0] != "todo/"+id+".md" || remote[0] != local[0] {
		t.Errorf("after the claim gave up the clone has %s in %v, the remote in %v; want both todo/", id, local, remote)
	}
	// The lock is free: a transition of another owner (which leads the
	// queue) must not push the withdrawn claim. It has the default
	// network deadline: 1 s is only the bound of the wait above, and a
	// fetch and a push on a busy machine may take longer (seen in CI).
	if res := c.pickup(context.Background(), "B", "claim", id); res.code != 0 {
		t.Fatalf("claim by B once the lock is free: exit %d\n%s", res.code, res.stderr)
	}
	if !r.holds("B", id) {
		t.Fatalf("the remote does not have %s in doing/B: %v", id, r.branchFiles())
	}
	if ops := countOps(r.branchEvents())[id]; ops["claim"] != 1 {
		t.Fatalf("the board's history of %s: %v, want one claim (B's)", id, ops)
	}
}
