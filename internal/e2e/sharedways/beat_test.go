package sharedways

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The paths that keep an owner alive on its own machine (the Claude Code
// hooks, pickup work) must tell the other clones too: an owner alive only
// through one of them is never reaped elsewhere, and is reaped there once
// that path stops. The stale period is 3 s; A's config says so, so that
// A pushes its heartbeat ref at most every 750 ms.

const beatStale = "3s"

// staleConfig gives c's board a stale period of 3 s (a local setting:
// config.yaml is not pushed by this write).
func staleConfig(t *testing.T, c *clone) {
	t.Helper()
	if err := os.WriteFile(c.board()+"/config.yaml", []byte("shared: origin\nstale: "+beatStale+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// watchNotReaped has b fetch and reap every second for secs seconds,
// running tick before each round, and fails if owner's id left doing/owner
// on the remote.
func watchNotReaped(t *testing.T, r *remote, b *clone, owner, id string, secs int, tick func()) {
	t.Helper()
	for i := range secs {
		tick()
		time.Sleep(time.Second)
		b.must("", "sync")
		b.must("reaper", "reap", "--stale", beatStale)
		if !r.holds(owner, id) {
			t.Fatalf("after %d s, B reaped %s of %s, alive in A: %v", i+1, id, owner, r.branchFiles())
		}
	}
}

// waitReaped has b reap past the stale period and checks that owner lost id.
func waitReaped(t *testing.T, r *remote, b *clone, owner, id string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for r.holds(owner, id) {
		if time.Now().After(deadline) {
			t.Fatalf("B never reaped %s of %s after its heartbeats stopped: %v", id, owner, r.branchFiles())
		}
		time.Sleep(time.Second)
		b.must("", "sync")
		b.must("reaper", "reap", "--stale", beatStale)
	}
}

// TestHooksKeepOwnerAlive: a Claude Code session of clone A holds a claim;
// only its hooks run (session-start, then post-tool-use whenever its
// throttle lets it renew). Clone B never reaps it while they run, and
// reaps it once they stop.
func TestHooksKeepOwnerAlive(t *testing.T) {
	t.Parallel()
	r := newRemote(t, "daemon")
	cs := r.clones(2)
	a, b := cs[0], cs[1]
	staleConfig(t, a)
	id := a.newSessions(1)[0]
	ctx := context.Background()
	pid, _ := holder(t) // the Claude Code process
	// A stands for another machine (see clone.runtime): B judges the
	// owner by its heartbeats only. On one machine B would rightly never
	// reap an owner whose process lives.
	env := []string{fmt.Sprintf("PICKUP_PID=%d", pid)}
	const owner = "hooked"
	hook := func(event string) {
		t.Helper()
		cmd := exec.Command(pickupBinary(t), "hook", event)
		cmd.Dir = a.dir
		cmd.Env = a.env(env...)
		cmd.Stdin = strings.NewReader(fmt.Sprintf(`{"session_id":%q,"cwd":%q}`, owner, a.dir))
		if out, err := cmd.CombinedOutput(); err != nil || strings.Contains(string(out), "pickup: hook") {
			t.Fatalf("hook %s: %v\n%s", event, err, out)
		}
	}
	hook("session-start")
	if res := a.pickupEnv(ctx, owner, env, "claim", id); res.code != 0 {
		t.Fatalf("claim: exit %d: %s", res.code, res.stderr)
	}
	// A minute of tool uses passes between rounds: the throttle file is
	// set back so that post-tool-use renews the lease.
	throttle := filepath.Join(a.board(), ".pickup", "claude", "beats", owner)
	watchNotReaped(t, r, b, owner, id, 6, func() {
		old := time.Now().Add(-2 * time.Minute)
		if err := os.Chtimes(throttle, old, old); err != nil {
			t.Fatal(err)
		}
		hook("post-tool-use")
	})
	waitReaped(t, r, b, owner, id)
}

// TestWorkKeepsOwnerAlive: pickup work in clone A runs a long command for
// a session it claimed; nothing else runs there. Clone B never reaps the
// worker while it runs, and reaps it once the worker is killed.
func TestWorkKeepsOwnerAlive(t *testing.T) {
	t.Parallel()
	r := newRemote(t, "daemon")
	cs := r.clones(2)
	a, b := cs[0], cs[1]
	staleConfig(t, a)
	id := a.newSessions(1)[0]
	const owner = "worker"
	cmd := exec.Command(pickupBinary(t), "--owner", owner, "work", "--", "sleep", "60")
	cmd.Dir = a.dir
	cmd.Env = a.env()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stop := func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	}
	t.Cleanup(stop)
	deadline := time.Now().Add(20 * time.Second)
	for !r.holds(owner, id) {
		if time.Now().After(deadline) {
			t.Fatalf("pickup work did not claim %s: %s", id, stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	watchNotReaped(t, r, b, owner, id, 6, func() {})
	stop()
	waitReaped(t, r, b, owner, id)
}
