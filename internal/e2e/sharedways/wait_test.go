package sharedways

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// fetchingClones are two clones of a new remote; A waits with
// shared_fetch: 300ms.
func fetchingClones(t *testing.T) (r *remote, a, b *clone) {
	r = newRemote(t, "daemon")
	cs := r.clones(2)
	a, b = cs[0], cs[1]
	if err := os.WriteFile(a.board()+"/config.yaml", []byte("shared: origin\nshared_fetch: 300ms\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return r, a, b
}

// TestWaitWakesForOtherClone: next --wait in clone A wakes for a session
// made in clone B: A fetches every shared_fetch and the fetch brings the
// session into A's todo/.
func TestWaitWakesForOtherClone(t *testing.T) {
	t.Parallel()
	r, a, b := fetchingClones(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	got := make(chan result, 1)
	go func() { got <- a.pickup(ctx, "waiter", "next", "--wait=10s", "--json") }()
	time.Sleep(time.Second) // the waiter is waiting (it found nothing)
	id := b.newSessions(1)[0]
	res := <-got
	if res.code != 0 || !strings.Contains(res.stdout, id) {
		t.Fatalf("next --wait in A for a session made in B: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if !r.holds("waiter", id) {
		t.Fatalf("the remote does not have %s in doing/waiter", id)
	}
}

// TestWorkWaitWakesForOtherClone: `pickup work -j 2 --wait` in clone A
// runs a session made in clone B: the pool keeps A in line with the remote
// (one fetch every shared_fetch for all its workers), so the session lands
// in A's todo/, where the workers' watch sees it.
func TestWorkWaitWakesForOtherClone(t *testing.T) {
	t.Parallel()
	r, a, b := fetchingClones(t)
	ran := filepath.Join(t.TempDir(), "ran")
	script := filepath.Join(t.TempDir(), "session.sh")
	if err := os.WriteFile(script, []byte("#!/bin/bash\necho \"$PICKUP_SESSION_ID\" >> \""+ran+"\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	got := make(chan result, 1)
	// --wait=20s: the pool serves for 20 s, then exits (a hang is caught
	// by ctx); the session made in B must run within them.
	go func() { got <- a.pickup(ctx, "pool", "work", "-j", "2", "--wait=20s", "--", script) }()
	time.Sleep(time.Second) // the pool is waiting (it found nothing)
	id := b.newSessions(1)[0]
	res := <-got
	data, _ := os.ReadFile(ran)
	if res.code != 0 || !strings.Contains(string(data), id) {
		t.Fatalf("work --wait in A for a session made in B: exit %d, ran %q, want %s\n%s%s", res.code, data, id, res.stdout, res.stderr)
	}
	if at := r.where(id); !slices.Equal(at, []string{"done"}) {
		t.Fatalf("the remote has %s in %v, want [done]", id, at)
	}
}
