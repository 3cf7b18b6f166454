package sharedways

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestKilledAgentOfAnotherClone: 4 clones of one remote on one machine.
// An agent with --pid claims in clone 1; clone 4 has no lease of that
// owner, but reads its lease in clone 1 (the clones of a machine register
// with each other: internal/arbiter/gitremote/clones.go), so it judges the owner by
// its processes: alive while it runs (clone 4's next takes nothing), and
// once it is SIGKILLed, clone 4's next reaps it and gets its session at
// once, with no stale period to wait. The killed owner's late done in
// clone 1 is refused.
func TestKilledAgentOfAnotherClone(t *testing.T) {
	t.Parallel()
	r := newRemote(t, "daemon")
	cs := r.clones(4)
	one := t.TempDir() // one machine: the clones register in one place
	for _, c := range cs {
		c.runtime = one
	}
	first, last := cs[0], cs[3]
	id := strings.TrimSpace(first.must("", "new", "-t", "killed in clone 1"))
	agent := exec.Command("sleep", "300")
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = agent.Process.Kill(); _ = agent.Wait() })
	first.must("victim", "--pid", strconv.Itoa(agent.Process.Pid), "claim", id)

	// Alive: clone 4 takes nothing (its stale period is 30 minutes, so
	// the claim's age does not decide either way).
	if res := last.pickup(context.Background(), "heir", "next", "--json"); res.code != 3 {
		t.Fatalf("clone 4's next while the agent of clone 1 runs: exit %d, want 3 (nothing available)\n%s%s", res.code, res.stdout, res.stderr)
	}
	if text := last.must("", "status"); !strings.Contains(text, "victim: alive (pid "+strconv.Itoa(agent.Process.Pid)) {
		t.Errorf("status in clone 4 while victim runs in clone 1: want it alive by its pid; got\n%s", text)
	}

	if err := agent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = agent.Wait()
	res := last.pickup(context.Background(), "heir", "next", "--json")
	if res.code != 0 || !strings.Contains(res.stdout, id) {
		t.Fatalf("clone 4's next after the agent of clone 1 was killed: exit %d, want %s\nstatus in clone 4:\n%s\n%s%s",
			res.code, id, last.must("", "status"), res.stdout, res.stderr)
	}
	ops := []string{}
	for _, e := range r.branchEvents() {
		if e.ID == id {
			ops = append(ops, e.Op+":"+e.Owner)
		}
	}
	if got := strings.Join(ops, ","); !strings.HasPrefix(got, "new:") || !strings.Contains(got, "claim:victim") || !strings.HasSuffix(got, "next:heir") || !strings.Contains(got, "reap") {
		t.Errorf("the remote's history of %s: %s; want new, claim by victim, a reap, next by heir", id, got)
	}
	first.must("", "sync")
	if res := first.pickup(context.Background(), "victim", "done", id); res.code != 6 {
		t.Errorf("the killed owner's late done in clone 1: exit %d, want 6\n%s", res.code, res.stderr)
	}
	if got := first.must("", "show", id); !strings.Contains(got, "heir") {
		t.Errorf("clone 1 after the refused done: show %s says\n%s\nwant it held by heir", id, got)
	}
}
