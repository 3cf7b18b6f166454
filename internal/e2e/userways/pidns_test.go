package userways

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// A pidNamespace is a tool that runs a command in a new pid namespace, as
// sandboxes and containers do: inside, processes have other pids than
// outside, and /proc shows only the namespace's own.
type pidNamespace struct {
	name, pkg string   // the command and its Debian package
	prefix    []string // the command line before the command to run inside
}

var pidNamespaces = []pidNamespace{
	{name: "unshare", pkg: "util-linux", prefix: []string{"unshare", "--pid", "--fork", "--mount-proc"}},
	{name: "bwrap", pkg: "bubblewrap", prefix: []string{"bwrap", "--unshare-pid", "--dev-bind", "/", "/", "--proc", "/proc"}},
}

// nexts is how many times the other side of the namespace boundary runs
// `pickup next` (and `pickup status`) against a live holder's claim.
const nexts = 3

// requireNamespaces skips the test unless it runs as root (CI does: making
// pid namespaces needs it here), and fails it if tool is missing, since
// scripts/test installs it.
func requireNamespaces(t *testing.T, ns pidNamespace) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skipf("pid namespaces are Linux's")
	}
	if os.Geteuid() != 0 {
		t.Skipf("not root: cannot make pid namespaces with %s (CI runs these tests as root)", ns.name)
	}
	if _, err := exec.LookPath(ns.name); err != nil {
		t.Fatalf("running as root but %s is missing (Debian package %s; scripts/test installs it): %v", ns.name, ns.pkg, err)
	}
}

// TestPidNamespaces: a live owner's claim is never reaped from across a pid
// namespace boundary, in either direction. A holder claims a session from a
// long-lived process on one side and keeps running; the other side runs
// `pickup next` and `pickup status` several times. The claim must stay with
// the holder, never judged dead, never reaped.
func TestPidNamespaces(t *testing.T) {
	for _, ns := range pidNamespaces {
		t.Run(ns.name, func(t *testing.T) {
			requireNamespaces(t, ns)
			t.Run("inside-holds", func(t *testing.T) {
				// The holder runs inside; next and status run outside, in
				// the test's own namespace.
				checkHolderSurvives(t, "in", "out", ns.prefix, nil)
			})
			t.Run("outside-holds", func(t *testing.T) {
				// The holder runs outside; next and status run inside,
				// each through a shell, as an agent in a sandbox runs them.
				checkHolderSurvives(t, "out", "in", nil, ns.prefix)
			})
		})
	}
}

// checkHolderSurvives starts holder.sh (with holderPrefix before it) to
// claim the board's one session as owner holder, then runs `pickup next`
// and `pickup status` as owner other (with otherPrefix before them) and
// checks that the claim stays the holder's.
func checkHolderSurvives(t *testing.T, holder, other string, holderPrefix, otherPrefix []string) {
	ctx := testContext(t)
	b := newBoard(t)
	id := b.seed(ctx, 1)[0]
	b.install("holder.sh")
	hctx, stop := context.WithCancel(ctx)
	h := b.command(hctx, argv(holderPrefix, "./holder.sh", id, holder)...)
	if err := h.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stop(); _ = h.Wait() }()
	if rc := b.waitFile(ctx, "claim.rc"); rc != "0" {
		t.Fatalf("holder %s: claim %s exited %s: %s", holder, id, rc, b.file("pickup.log"))
	}
	held := filepath.Join(b.dir, "doing", holder, id+".md")

	for i := 0; i < nexts; i++ {
		// One shell per round, on the other side of the boundary: status
		// says how it judges the holder, then next shows whether it
		// reaps on that judgement.
		script := "pickup status --json > status.json 2>> pickup.log; " +
			"pickup --owner " + other + " next --json > next.json 2>> pickup.log; echo $? > next.rc"
		cmd := b.command(ctx, argv(otherPrefix, "bash", "-c", script)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("round %d: %v\n%s", i+1, err, out)
		}
		rc := strings.TrimSpace(b.file("next.rc"))
		state := ownerState(t, b.file("status.json"), holder)
		_, statErr := os.Stat(held)
		t.Logf("round %d: status says %s is %s; %s's next exited %s; %s's claim %s", i+1, holder, state, other, rc,
			holder, map[bool]string{true: "holds", false: "is gone"}[statErr == nil])
		if rc != "3" {
			t.Errorf("round %d: %s's next exited %s, want 3 (nothing available: the only session is %s's); it printed %s",
				i+1, other, rc, holder, strings.TrimSpace(b.file("next.json")))
		}
		if state == "dead" || state == "stale" {
			t.Errorf("round %d: status judges the live holder %s %s", i+1, holder, state)
		}
		if statErr != nil {
			t.Errorf("round %d: %s, claimed by live %s, is no longer in doing/%s/", i+1, id, holder, holder)
		}
		if t.Failed() {
			break
		}
	}
	if n := b.outcome().ops["reap"]; n != 0 {
		t.Errorf("events.log records %d reaps of the live holder's claim, want 0", n)
	}
	if t.Failed() {
		t.Logf("events.log:\n%s", tail(strings.Split(strings.TrimSpace(b.boardFile("events.log")), "\n"), 8))
	}
}

// ownerState returns the state `pickup status --json` gives owner, or
// "absent".
func ownerState(t *testing.T, statusJSON, owner string) string {
	t.Helper()
	var owners []struct{ Owner, State string }
	if err := json.Unmarshal([]byte(statusJSON), &owners); err != nil {
		t.Fatalf("pickup status --json: %q: %v", statusJSON, err)
	}
	for _, o := range owners {
		if o.Owner == owner {
			return o.State
		}
	}
	return "absent"
}

// waitFile waits for the work directory's file name to have a line, and
// returns it.
func (b *board) waitFile(ctx context.Context, name string) string {
	b.t.Helper()
	for {
		if s := b.file(name); strings.HasSuffix(s, "\n") {
			return strings.TrimSpace(s)
		}
		select {
		case <-ctx.Done():
			b.t.Fatalf("no %s in time: %v\npickup.log: %s", name, ctx.Err(), b.file("pickup.log"))
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// boardFile returns the contents of a file of the board.
func (b *board) boardFile(name string) string {
	data, err := os.ReadFile(filepath.Join(b.dir, name))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		b.t.Fatal(err)
	}
	return string(data)
}

// argv returns prefix followed by args, as a new slice.
func argv(prefix []string, args ...string) []string {
	return append(append([]string(nil), prefix...), args...)
}
