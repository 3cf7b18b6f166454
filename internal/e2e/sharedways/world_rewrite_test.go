package sharedways

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// snapshot is a clone's board files and event log, to check that a
// refused command moved nothing.
func (c *clone) snapshot() string {
	files, log := c.boardFiles()
	return strings.Join(files, "\n") + "\n--\n" + log
}

// wantRefused runs pickup args in c and fails unless it exits 8 with a
// message containing say, and moves nothing in the clone or on the
// remote.
func wantRefused(t *testing.T, c *clone, owner, say string, args ...string) {
	t.Helper()
	before, tip := c.snapshot(), c.r.tip()
	res := c.pickup(context.Background(), owner, args...)
	if res.code != 8 || !strings.Contains(res.stderr, say) {
		t.Fatalf("%s: pickup %s: exit %d, want 8 saying %q\n%s%s", c.name, strings.Join(args, " "), res.code, say, res.stdout, res.stderr)
	}
	if after := c.snapshot(); after != before {
		t.Fatalf("%s: pickup %s exited 8 but the board changed:\nbefore:\n%s\nafter:\n%s", c.name, strings.Join(args, " "), before, after)
	}
	if got := c.r.tip(); got != tip {
		t.Fatalf("%s: pickup %s exited 8 but the remote moved from %q to %q", c.name, strings.Join(args, " "), tip, got)
	}
}

// TestForcePushRefused: a person force-pushes the board branch back
// (git push -f origin pickup~3:pickup). The clone that saw the lost
// commits, and a clone that never saw them, refuse every command with
// exit 8 (sync does not say "in line"), build nothing on the rewritten
// tip, and move nothing.
func TestForcePushRefused(t *testing.T) {
	t.Parallel()
	r := newRemote(t, "daemon")
	cs := r.clones(2)
	a, b := cs[0], cs[1]
	ids := a.newSessions(4)
	b.must("", "sync") // b sees the four in todo/, and nothing after
	for _, id := range ids[:3] {
		a.must("w1", "claim", id)
		a.must("w1", "done", id)
	}
	p := r.person()
	p.fetch()
	p.git("push", "-q", "-f", "origin", "origin/pickup~3:refs/heads/pickup")
	// On the rewritten branch, ids[2] (finished in the lost history) is
	// in todo/: the person gives it to eve by hand.
	p.commitOnBoard("eve takes it", func(dir string) {
		os.MkdirAll(filepath.Join(dir, "doing", "eve"), 0o755)
		p.git("mv", "todo/"+ids[2]+".md", "doing/eve/"+ids[2]+".md")
	})
	for _, c := range []*clone{a, b} {
		wantRefused(t, c, "", "rewritten", "sync")
		wantRefused(t, c, "x", "rewritten", "next")
		wantRefused(t, c, "x", "rewritten", "claim", ids[2]) // done in the lost history
	}
	res := a.pickup(context.Background(), "", "sync")
	if !strings.Contains(res.stderr, "pickup sync --repair") {
		t.Fatalf("the hint does not name the repair:\n%s", res.stderr)
	}
	// doctor says what the rewrite lost, in the clone that never saw it.
	res = b.pickup(context.Background(), "", "doctor")
	if res.code != 1 || !strings.Contains(res.stdout, "rewritten") {
		t.Fatalf("doctor after the force push: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	for _, id := range ids[1:3] {
		if !strings.Contains(res.stdout, id+": the remote lost ") || !strings.Contains(res.stdout, "done doing/w1 -> done (w1); the lost history has it in done") {
			t.Fatalf("doctor does not say that %s's done was lost:\n%s", id, res.stdout)
		}
	}
	// The repair, from the clone that never saw the lost commits: a
	// session finished in the lost history stays finished.
	out := b.must("", "sync", "--repair")
	if !strings.Contains(out, "both moved "+ids[2]) {
		t.Fatalf("the repair does not report the session both histories moved:\n%s", out)
	}
	for _, id := range ids[:3] {
		wantWhere(t, r, cs, id, "done")
	}
	wantWhere(t, r, cs, ids[3], "todo")
	if res := a.pickup(context.Background(), "x", "claim", ids[2]); res.code != 3 {
		t.Fatalf("claim of a session finished in the lost history, after the repair: exit %d, want 3\n%s", res.code, res.stderr)
	}
	if res := b.pickup(context.Background(), "y", "next", "--json"); res.code != 0 || !strings.Contains(res.stdout, ids[3]) {
		t.Fatalf("next after the repair: exit %d, want %s\n%s%s", res.code, ids[3], res.stdout, res.stderr)
	}
	ops := countOps(r.branchEvents())
	for _, id := range ids[:3] {
		if ops[id]["claim"] != 1 || ops[id]["done"] != 1 {
			t.Fatalf("the repaired history of %s: %v, want one claim and one done", id, ops[id])
		}
	}
}

// TestDeletedBranchRefused: a person deletes the board branch (git push
// origin :pickup) while a clone's last fetch is under a second old (the
// test keeps it so), so that its claim trusts that fetch: the claim's push is conditional on
// the remote's tip, so it neither re-creates the branch nor claims; every
// command exits 8 until a person re-creates the branch on purpose
// (pickup init --shared), from the history the clone saw.
func TestDeletedBranchRefused(t *testing.T) {
	t.Parallel()
	r := newRemote(t, "daemon")
	cs := r.clones(1)
	a := cs[0]
	ids := a.newSessions(2)
	a.must("w0", "claim", ids[0])
	seen := r.tip()
	p := r.person()
	a.must("", "sync")
	p.git("push", "-q", "origin", ":refs/heads/pickup")
	// The clone's fetch, from before the deletion, is stamped a moment
	// ago while the claim and the next run: they trust it (as a
	// command does within a second of a fetch), however slow the machine.
	fresh := a.keepFresh()
	wantRefused(t, a, "w1", "deleted", "claim", ids[0]) // held by w0
	wantRefused(t, a, "w1", "deleted", "next")
	fresh()
	wantRefused(t, a, "", "deleted", "sync")
	if r.tip() != "" {
		t.Fatalf("the branch was re-created")
	}
	out := a.must("", "init", "--shared")
	if !strings.Contains(out, "created") {
		t.Fatalf("init --shared said %q", out)
	}
	if got := r.git(r.bare, "rev-list", "pickup"); !strings.Contains(got, seen) {
		t.Fatalf("the re-created branch does not keep the history the clone saw (%s):\n%s", seen, got)
	}
	if got := r.where(ids[0]); len(got) != 1 || got[0] != "doing/w0" {
		t.Fatalf("the re-created branch has %s in %v, want doing/w0", ids[0], got)
	}
	if res := a.pickup(context.Background(), "w1", "next", "--json"); res.code != 0 || !strings.Contains(res.stdout, ids[1]) {
		t.Fatalf("next after init --shared: exit %d, want %s\n%s%s", res.code, ids[1], res.stdout, res.stderr)
	}
}
