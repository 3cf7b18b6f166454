package userways

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A Claude Code session, as pickup sees it: its SessionStart hook runs
// outside any sandbox with the Claude Code process as its invoker (here a
// stand-in process, named with PICKUP_PID), and its Bash tool's commands
// carry $CLAUDE_CODE_SESSION_ID.
type claudeSession struct {
	id  string
	pid int
	end func() // kill -9 of the Claude Code process
}

func (b *board) startClaude(ctx context.Context, id string) claudeSession {
	b.t.Helper()
	cctx, kill := context.WithCancel(ctx)
	cmd := b.command(cctx, "sleep", "120")
	if err := cmd.Start(); err != nil {
		b.t.Fatal(err)
	}
	s := claudeSession{id: id, pid: cmd.Process.Pid, end: func() { kill(); _ = cmd.Wait() }}
	b.t.Cleanup(s.end)
	hook := b.command(ctx, "pickup", "hook", "session-start")
	hook.Env = append(hook.Env, fmt.Sprintf("PICKUP_PID=%d", s.pid))
	hook.Stdin = strings.NewReader(fmt.Sprintf(`{"session_id":%q,"cwd":%q,"hook_event_name":"SessionStart","source":"startup"}`, id, b.work))
	if out, err := hook.CombinedOutput(); err != nil {
		b.t.Fatalf("session-start hook: %v\n%s", err, out)
	}
	return s
}

// leaseHolders returns the pids of owner's lease.
func (b *board) leaseHolders(owner string) []int {
	b.t.Helper()
	var lease struct{ Holders []struct{ PID int } }
	data := b.boardFile(filepath.Join(".pickup", "leases", owner+".json"))
	if data == "" {
		return nil
	}
	if err := json.Unmarshal([]byte(data), &lease); err != nil {
		b.t.Fatalf("lease of %s: %v", owner, err)
	}
	var pids []int
	for _, h := range lease.Holders {
		pids = append(pids, h.PID)
	}
	return pids
}

// TestClaudeSandbox: commands in Claude Code's Bash sandbox (a pid
// namespace of their own) tie the session's lease to the Claude Code
// process its SessionStart recorded, never to their renumbered processes:
// other agents never take a live session's claim, and a killed session's
// claim comes back at once, sandbox or not.
func TestClaudeSandbox(t *testing.T) {
	for _, ns := range pidNamespaces {
		t.Run(ns.name, func(t *testing.T) {
			requireNamespaces(t, ns)
			ctx := testContext(t)
			b := newBoard(t)
			id := b.seed(ctx, 1)[0]
			claude := b.startClaude(ctx, "sess-a")
			// Through a shell, as the Bash tool runs commands (the "; true"
			// keeps bash from becoming pickup).
			inside := b.command(ctx, argv(ns.prefix, "bash", "-c", "CLAUDE_CODE_SESSION_ID=sess-a pickup next --json; true")...)
			if out, err := inside.CombinedOutput(); err != nil || !strings.Contains(string(out), `"owner":"sess-a"`) {
				t.Fatalf("next inside the sandbox: %v\n%s", err, out)
			}
			if got := b.leaseHolders("sess-a"); len(got) != 1 || got[0] != claude.pid {
				t.Fatalf("lease holders after a sandboxed claim = %v, want only the Claude Code process %d", got, claude.pid)
			}
			// Another agent, outside: the session's claim is safe.
			if out, err := b.output(ctx, "pickup", "--owner", "other", "next"); err == nil {
				t.Fatalf("another agent took the live session's claim: %s", out)
			}
			if state := ownerState(t, b.pickup(ctx, "status", "--json"), "sess-a"); state != "alive" {
				t.Fatalf("status judges the live session %s, want alive", state)
			}
			// Claude Code killed: the claim comes back at once.
			claude.end()
			out, err := b.output(ctx, "pickup", "--owner", "other", "next", "--json")
			if err != nil || !strings.Contains(out, id) {
				t.Fatalf("after kill -9 of the Claude Code process, another agent's next = %v %s; want %s at once", err, out, id)
			}
		})
	}
}

// TestClaudeFork: `claude --resume A --fork-session` runs as its own
// session B ($CLAUDE_CODE_SESSION_ID=B), even if the environment still
// carries A's id from the conversation it forked; and should the fork act
// as A explicitly (an old skill text with --owner A), the end of the fork
// never costs A, still running, its claims.
func TestClaudeFork(t *testing.T) {
	ctx := testContext(t)
	b := newBoard(t)
	ids := b.seed(ctx, 3)
	a := b.startClaude(ctx, "sess-a")
	fork := b.startClaude(ctx, "sess-b")
	// claimAs runs pickup with env added and returns the session it claimed.
	claimAs := func(env []string, args ...string) (id, owner string) {
		cmd := b.command(ctx, append([]string{"pickup"}, append(args, "--json")...)...)
		cmd.Env = append(cmd.Env, env...)
		out, err := cmd.Output()
		var s struct{ ID, Owner string }
		if err != nil || json.Unmarshal(out, &s) != nil {
			t.Fatalf("pickup %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return s.ID, s.Owner
	}
	held := []string{ids[0]}
	claimAs([]string{"CLAUDE_CODE_SESSION_ID=sess-a"}, "claim", ids[0])
	// The fork's command: its own id from Claude Code, A's from the env file.
	forks, owner := claimAs([]string{"CLAUDE_CODE_SESSION_ID=sess-b", "CLAUDE_SESSION_ID=sess-a"}, "next")
	if owner != "sess-b" {
		t.Fatalf("the fork claimed as %s, want its own session sess-b", owner)
	}
	// The fork acting as A explicitly, from its own process.
	id, _ := claimAs([]string{fmt.Sprintf("PICKUP_PID=%d", fork.pid)}, "--owner", "sess-a", "next")
	held = append(held, id)
	fork.end()
	// The fork's own claim comes back; A's do not.
	if out, err := b.output(ctx, "pickup", "--owner", "other", "next", "--json"); err != nil || !strings.Contains(out, forks) {
		t.Fatalf("after the fork ended, another agent's next = %v %s; want the fork's own claim %s", err, out, forks)
	}
	if out, err := b.output(ctx, "pickup", "--owner", "other", "next"); err == nil {
		t.Fatalf("after the fork ended, another agent took a claim of A, which still runs: %s", out)
	}
	for _, id := range held {
		if _, err := os.Stat(filepath.Join(b.dir, "doing", "sess-a", id+".md")); err != nil {
			t.Errorf("A's claim %s was lost when its fork ended: %v", id, err)
		}
	}
	a.end()
	if out, err := b.output(ctx, "pickup", "--owner", "other", "next", "--json"); err != nil {
		t.Fatalf("after A ended too, its claims must come back: %v %s", err, out)
	}
}
