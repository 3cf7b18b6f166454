package sharedways

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/internal/testbin"
)

// holder starts a stand-in agent process (what pickup ties a lease to)
// and returns its pid and a kill -9.
func holder(t *testing.T) (int, func()) {
	t.Helper()
	cmd := exec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	kill := func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	t.Cleanup(kill)
	return cmd.Process.Pid, kill
}

func (r *remote) holds(owner, id string) bool {
	return contains(r.branchFiles(), "doing/"+owner+"/"+id+".md")
}

// TestKilledAgent: kill -9 of an agent in clone A. Its claims come back
// in A at once (A's next reaps it and pushes that); an agent of clone B
// is reaped by B only after the stale period without heartbeats, once
// A's machine is gone (its clone deleted), never before.
func TestKilledAgent(t *testing.T) {
	t.Parallel()
	r := newRemote(t, "daemon")
	cs := r.clones(2)
	a, b := cs[0], cs[1]
	ids := a.newSessions(2)
	ctx := context.Background()

	// In A: the victim's process dies; A's next takes the claim back at once.
	pid, kill := holder(t)
	if res := a.pickupEnv(ctx, "victim", []string{fmt.Sprintf("PICKUP_PID=%d", pid)}, "claim", ids[0]); res.code != 0 {
		t.Fatalf("claim: exit %d: %s", res.code, res.stderr)
	}
	kill()
	res := a.pickup(ctx, "rescuer", "next", "--json")
	if res.code != 0 {
		t.Fatalf("A's next after the victim died: exit %d: %s", res.code, res.stderr)
	}
	if r.holds("victim", ids[0]) {
		t.Fatalf("the dead victim's %s is still in doing/victim on the remote: %v", ids[0], r.branchFiles())
	}
	if ops := countOps(r.branchEvents())[ids[0]]; ops["reap"] != 1 {
		t.Fatalf("the board's history of %s: %v, want one reap", ids[0], ops)
	}
	// The rescuer took one of the two (next spreads among the best); the
	// other goes to an agent of A whose machine then goes away.
	left := ids[1]
	if strings.Contains(res.stdout, ids[1]+`"`) {
		left = ids[0]
	}
	ids = []string{"", left}

	// An agent of A holds ids[1]; A's machine goes away with it.
	pid, kill = holder(t)
	if res := a.pickupEnv(ctx, "gone", []string{fmt.Sprintf("PICKUP_PID=%d", pid)}, "claim", ids[1]); res.code != 0 {
		t.Fatalf("claim: exit %d: %s", res.code, res.stderr)
	}
	kill()
	// The detached processes of A's last commands (a heartbeat push) go
	// with its machine: they end before the clone is removed, or the
	// removal meets a file one of them just wrote ("directory not empty",
	// seen on a busy machine).
	testbin.WaitDetached(a.dir)
	if err := os.RemoveAll(a.dir); err != nil {
		t.Fatal(err)
	}
	const stale = "4s"
	b.must("", "sync")
	if out := b.must("reaper", "reap", "--stale", stale); strings.Contains(out, ids[1]) {
		t.Fatalf("B reaped %s at once, before the stale period:\n%s", ids[1], out)
	}
	if res := b.pickup(ctx, "taker", "next"); res.code != 3 {
		t.Fatalf("B's next while the other machine's claim is fresh: exit %d, want 3\n%s%s", res.code, res.stdout, res.stderr)
	}
	if !r.holds("gone", ids[1]) {
		t.Fatalf("%s left doing/gone on the remote before the stale period: %v", ids[1], r.branchFiles())
	}
	time.Sleep(5 * time.Second)
	b.must("reaper", "reap", "--stale", stale)
	if r.holds("gone", ids[1]) {
		t.Fatalf("%s still in doing/gone on the remote after B's reap past the stale period", ids[1])
	}
	// (The rescuer's claim went with A's machine too.)
	if res = b.pickup(ctx, "taker", "claim", ids[1]); res.code != 0 {
		t.Fatalf("B's claim after the reap: exit %d: %s%s", res.code, res.stdout, res.stderr)
	}
}

// TestLiveOwnerElsewhereNotReaped: an owner of clone A whose process is
// alive keeps heartbeating through its ref; B never reaps it, however
// long it waits, while its heartbeats keep coming.
func TestLiveOwnerElsewhereNotReaped(t *testing.T) {
	t.Parallel()
	r := newRemote(t, "file")
	cs := r.clones(2)
	a, b := cs[0], cs[1]
	id := a.newSessions(1)[0]
	ctx := context.Background()
	pid, _ := holder(t)
	env := []string{fmt.Sprintf("PICKUP_PID=%d", pid)}
	if res := a.pickupEnv(ctx, "alive", env, "claim", id); res.code != 0 {
		t.Fatalf("claim: exit %d: %s", res.code, res.stderr)
	}
	// The stale period is 3 s; A heartbeats every second (at most every
	// stale/4 it pushes its ref), B looks and reaps for 6 s.
	if err := os.WriteFile(a.board()+"/config.yaml", []byte("shared: origin\nstale: 3s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 6 {
		time.Sleep(time.Second)
		if res := a.pickupEnv(ctx, "alive", env, "heartbeat"); res.code != 0 {
			t.Fatalf("heartbeat: exit %d: %s", res.code, res.stderr)
		}
		b.must("", "sync")
		b.must("reaper", "reap", "--stale", "3s")
	}
	if !r.holds("alive", id) {
		t.Fatalf("B reaped a live owner of another clone that kept heartbeating: %v", r.branchFiles())
	}
}
