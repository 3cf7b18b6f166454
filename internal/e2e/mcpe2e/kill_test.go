package mcpe2e

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/pickup-dev/pickup/internal/testbound"
)

// TestKilledMCPAgent: an agent that took a session through `pickup mcp`
// in clone A. While it lives, its claim is never taken: reap, next and
// claim in either clone, and claim and next of another MCP agent in clone
// B, leave it, and the arbiter keeps it in the agent's owner's hands.
// Killed with SIGKILL, it gives the session back at once: the very
// next next on its own host gets it (in A on a git-shared board, whose
// leases each clone keeps; in B on a PostgreSQL board, whose leases the
// database holds with their host), the arbiter records it given back once
// and claimed once more, and the server, its client gone, exits.
func TestKilledMCPAgent(t *testing.T) {
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			w := newWorld(t, kind)
			watch := testbound.New(t, 0)
			ctx := watch.Context()
			a, b := w.clones[0], w.clones[1]
			id := a.newSession("the killed agent's")
			b.must("", "sync")

			agent := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
			agent.Dir, agent.Env, agent.Stderr = a.dir, append(a.env, agentEnv+"=1"), os.Stderr
			stdout, err := agent.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := agent.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = agent.Process.Kill(); _ = agent.Wait() })
			var gotID, owner string
			var server int
			line, err := bufio.NewReader(stdout).ReadString('\n')
			if _, serr := fmt.Sscan(line, &gotID, &owner, &server); err != nil || serr != nil || gotID != id {
				t.Fatalf("the agent said %q (%v, %v), want %s and its owner", line, err, serr, id)
			}
			if !strings.HasPrefix(owner, "killed-agent-mcp-") {
				t.Errorf("the agent's owner is %q, want killed-agent-mcp-…", owner)
			}
			watch.Progress("the agent claimed %s as %s", id, owner)

			// Alive: nobody takes it, from either clone.
			for _, c := range []*clone{a, b} {
				if out := c.must("reaper", "reap"); strings.Contains(out, id) {
					t.Fatalf("%s: reap took the live MCP agent's %s:\n%s", c.name, id, out)
				}
				if res := c.pickup(ctx, "taker", "next"); res.code != 3 {
					t.Fatalf("%s: next while the MCP agent lives: exit %d, want 3 (nothing available)\n%s%s", c.name, res.code, res.stdout, res.stderr)
				}
				if res := c.pickup(ctx, "taker", "claim", id); res.code != 3 {
					t.Fatalf("%s: claim of the live MCP agent's %s: exit %d, want 3\n%s%s", c.name, id, res.code, res.stdout, res.stderr)
				}
				watch.Progress("%s left the live claim", c.name)
			}
			// Nor another MCP agent, in the other clone.
			other := b.connect(ctx, "other-agent")
			if got, err := call(ctx, other, "claim", map[string]any{"id": id}); err != nil || got.Outcome != "lost" || got.Owner != owner {
				t.Fatalf("another MCP agent's claim of the live agent's %s: %v %s, want lost to %s", id, err, got, owner)
			}
			if got, err := call(ctx, other, "next", nil); err != nil || got.Outcome != "none" {
				t.Fatalf("another MCP agent's next while the agent lives: %v %s, want none", err, got)
			}
			if err := other.Close(); err != nil {
				t.Fatalf("close the other MCP agent: %v", err)
			}
			watch.Progress("another MCP agent left the live claim")
			if where := w.where(id); where != "doing/"+owner {
				t.Fatalf("while the agent lives the arbiter has %s in %q, want doing/%s", id, where, owner)
			}

			if err := agent.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = agent.Wait()
			heir := a
			if kind == "pg" {
				heir = b
			}
			res := heir.pickup(ctx, "heir", "next")
			if res.code != 0 || !strings.Contains(res.stdout, "claimed "+id) {
				t.Fatalf("%s: the next right after the kill: exit %d, want %s claimed\n%s%s", heir.name, res.code, id, res.stdout, res.stderr)
			}
			watch.Progress("%s's next took %s back", heir.name, id)
			if where := w.where(id); where != "doing/heir" {
				t.Errorf("after the kill the arbiter has %s in %q, want doing/heir", id, where)
			}
			// Given back once, by a reap (the next's, or the server's
			// when it saw its input close) or, when the server's
			// give-back lost the race to the next's reap of the same
			// claim, a release; then claimed once more, by the heir.
			ops := w.ops(id)
			t.Logf("the arbiter's history of %s: %v", id, ops)
			if n := len(ops); n != 4 || (ops[2] != "reap" && ops[2] != "release") || (ops[3] != "next" && ops[3] != "claim") {
				t.Errorf("the arbiter's history of %s: %v, want new, next, reap (or release), next", id, ops)
			}
			// The server, its client gone, exits by itself; the bound
			// (from the last progress) only catches a hang.
			if !watch.Until(func() bool { return gone(server) }) {
				t.Errorf("the server, pid %d, still runs after its agent died: %v", server, watch.Err())
			}
		})
	}
}

// gone says the process pid has exited (or is a zombie).
func gone(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(data)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] == 'Z'
	}
	return false
}
