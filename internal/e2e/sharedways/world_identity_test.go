package sharedways

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// commitOnBoard has the person change the board branch by hand: check it
// out, run change in the work tree, commit and push.
func (p *person) commitOnBoard(msg string, change func(dir string)) {
	p.r.t.Helper()
	p.fetch()
	p.git("checkout", "-q", "-B", "pickup", "origin/pickup")
	change(p.dir)
	p.git("add", "-A")
	p.git("commit", "-q", "-m", msg)
	p.git("push", "-q", "origin", "pickup:refs/heads/pickup")
}

// TestConfigChangedRefused: a person deletes config.yaml on the board
// branch, or makes it say shared_branch: main: no clone silently stops
// being shared. Every command exits 8 and moves nothing (new makes no
// session, nothing lands on main), until a person runs pickup init
// --shared (which puts the settings back on the branch); then both
// clones work again. An agent deleting config.yaml in its clone is
// refused the same way.
func TestConfigChangedRefused(t *testing.T) {
	t.Parallel()
	r := newRemote(t, "daemon")
	cs := r.clones(2)
	a, b := cs[0], cs[1]
	ids := a.newSessions(3)
	p := r.person()
	changes := []struct {
		name   string
		change func(dir string)
	}{
		{"config.yaml deleted", func(dir string) { os.Remove(filepath.Join(dir, "config.yaml")) }},
		{"shared_branch: main", func(dir string) {
			os.WriteFile(filepath.Join(dir, "config.yaml"), []byte("shared: origin\nshared_branch: main\n"), 0o644)
		}},
		{"another remote", func(dir string) {
			os.WriteFile(filepath.Join(dir, "config.yaml"), []byte("shared: upstream\n"), 0o644)
		}},
	}
	for i, ch := range changes {
		p.commitOnBoard(ch.name, ch.change)
		for _, c := range cs {
			wantRefused(t, c, "w", "does not say what this clone joined", "next")
			wantRefused(t, c, "", "does not say what this clone joined", "new", "--title", "x", "-")
			wantRefused(t, c, "", "does not say what this clone joined", "sync")
		}
		res := b.pickup(context.Background(), "", "sync")
		if !strings.Contains(res.stderr, "pickup init --shared --follow") {
			t.Fatalf("%s: the hint does not name the confirming commands:\n%s", ch.name, res.stderr)
		}
		if out := r.git(r.bare, "branch", "--list"); strings.TrimSpace(strings.ReplaceAll(out, "*", "")) != "pickup" {
			t.Fatalf("%s: the remote has branches %q, want only pickup", ch.name, out)
		}
		// A person puts it back from one clone; both work again.
		cs[i%2].must("", "init", "--shared")
		if got := r.git(r.bare, "show", "pickup:config.yaml"); !strings.Contains(got, "shared: origin") || strings.Contains(got, "shared_branch") || strings.Contains(got, "upstream") {
			t.Fatalf("%s: init --shared left config.yaml on the branch as %q", ch.name, got)
		}
	}
	b.must("wb", "claim", ids[0])
	a.must("wa", "claim", ids[1])
	wantWhere(t, r, cs, ids[0], "doing/wb")

	// An agent deletes config.yaml in its clone.
	if err := os.Remove(filepath.Join(a.board(), "config.yaml")); err != nil {
		t.Fatal(err)
	}
	wantRefused(t, a, "wa", "does not say what this clone joined", "next")
	a.must("", "init", "--shared")
	if res := a.pickup(context.Background(), "wa", "next", "--json"); res.code != 0 || !strings.Contains(res.stdout, ids[2]) {
		t.Fatalf("next after init --shared: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	wantWhere(t, r, cs, ids[2], "doing/wa")
}

// TestConfigFollowed: a person really stops sharing the board (deletes
// shared: on the branch); each clone refuses until it runs pickup init
// --shared --follow, and then its board is its own, with the branch's
// sessions.
func TestConfigFollowed(t *testing.T) {
	t.Parallel()
	r := newRemote(t, "daemon")
	cs := r.clones(2)
	a, b := cs[0], cs[1]
	ids := a.newSessions(2)
	b.must("wb", "claim", ids[0])
	tip := func() string { return r.tip() }
	p := r.person()
	p.commitOnBoard("stop sharing", func(dir string) {
		os.WriteFile(filepath.Join(dir, "config.yaml"), []byte("stale: 10m\n"), 0o644)
	})
	wantRefused(t, a, "wa", "does not say what this clone joined", "next")
	a.must("", "init", "--shared", "--follow")
	before := tip()
	if res := a.pickup(context.Background(), "wa", "next", "--json"); res.code != 0 || !strings.Contains(res.stdout, ids[1]) {
		t.Fatalf("next after --follow: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if got := a.localWhere(ids[0]); len(got) != 1 || got[0] != "doing/wb" {
		t.Fatalf("a's board has %s in %v after following, want doing/wb", ids[0], got)
	}
	if tip() != before {
		t.Fatalf("a board that is no longer shared pushed to the branch")
	}
	wantRefused(t, b, "wb", "does not say what this clone joined", "done", ids[0])
}

// TestSharedBranchIsCode: init --shared refuses a board branch that is
// the clone's checked-out branch, with the config.yaml line.
func TestSharedBranchIsCode(t *testing.T) {
	t.Parallel()
	r := newRemote(t, "daemon")
	dir := filepath.Join(filepath.Dir(r.home), "c")
	r.git(filepath.Dir(r.home), "clone", "-q", r.url, dir)
	head := strings.TrimSpace(r.git(dir, "symbolic-ref", "--short", "HEAD"))
	c := &clone{r: r, name: "c", dir: dir}
	c.must("", "init")
	if err := os.WriteFile(filepath.Join(c.board(), "config.yaml"), []byte("stale: 10m\nshared_branch: "+head+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := c.pickup(context.Background(), "", "init", "--shared")
	if res.code != 2 || !strings.Contains(res.stderr, "checked out") {
		t.Fatalf("init --shared with shared_branch: %s (the code's): exit %d\n%s", head, res.code, res.stderr)
	}
	if r.tip() != "" || strings.TrimSpace(r.git(r.bare, "branch", "--list")) != "" {
		t.Fatalf("something was pushed")
	}
	for _, v := range []string{"HEAD", "a..b"} {
		os.WriteFile(filepath.Join(c.board(), "config.yaml"), []byte("shared: origin\nshared_branch: "+v+"\n"), 0o644)
		res := c.pickup(context.Background(), "", "list")
		if res.code != 2 || !strings.Contains(res.stderr, "config.yaml:2: shared_branch") {
			t.Fatalf("shared_branch: %s: exit %d\n%s", v, res.code, res.stderr)
		}
	}
}
