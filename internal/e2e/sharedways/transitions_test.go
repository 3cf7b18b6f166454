package sharedways

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Every transition on a shared board is won at the remote: two clones
// that make the same one at once get one winner; the loser gets its exit
// code and moves nothing, in its clone or on the remote.

// racers is how many processes of each clone make the transition at once:
// enough that some build on the same tip and only the remote tells them
// apart.
const racers = 4

// race runs pickup with args racers times in each of two clones at the
// same moment (as owners[0] in the first, owners[1] in the second) and
// returns the results. It fails the test unless exactly want transitions
// were pushed to the remote (each push counts its transitions in the
// stats file).
func race(t *testing.T, want int, cs []*clone, owners []string, args ...string) []result {
	t.Helper()
	stats := filepath.Join(t.TempDir(), "stats")
	env := []string{"PICKUP_SHARED_STATS=" + stats}
	out := make([]result, racers*len(cs))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range out {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			out[i] = cs[i%len(cs)].pickupEnv(context.Background(), owners[i%len(cs)], env, args...)
		}()
	}
	close(start)
	wg.Wait()
	data, _ := os.ReadFile(stats)
	pushed := 0
	for _, line := range strings.Split(string(data), "\n") {
		var n int
		if _, err := fmt.Sscanf(line, "ok %d", &n); err == nil {
			pushed += n
		}
	}
	if pushed != want {
		t.Errorf("%s by %d processes in two clones at once: %d transitions pushed, want %d", args[0], len(out), pushed, want)
	}
	return out
}

// oneWinner checks that exactly one result is 0 and that every other
// exits with one of loserCodes.
func oneWinner(t *testing.T, what string, res []result, loserCodes ...int) {
	t.Helper()
	winners := 0
	for i, x := range res {
		switch {
		case x.code == 0:
			winners++
		case slices.Contains(loserCodes, x.code):
		default:
			t.Errorf("%s: racer %d exit %d, want 0 or one of %v\n%s", what, i, x.code, loserCodes, x.stderr)
		}
	}
	if winners != 1 {
		t.Fatalf("%s by %d processes in two clones at once: %d won, want 1", what, len(res), winners)
	}
}

// where lists the remote's places of id ("todo", "doing/X", "done", ...).
func (r *remote) where(id string) []string {
	var at []string
	for _, f := range r.branchFiles() {
		if strings.HasSuffix(f, "/"+id+".md") {
			at = append(at, strings.TrimSuffix(f, "/"+id+".md"))
		}
	}
	return at
}

// localWhere is where for a clone's board directory.
func (c *clone) localWhere(id string) []string {
	files, _ := c.boardFiles()
	var at []string
	for _, f := range files {
		if strings.HasSuffix(f, "/"+id+".md") {
			at = append(at, strings.TrimSuffix(f, "/"+id+".md"))
		}
	}
	return at
}

// wantWhere fails unless the remote and every clone (after a sync) have
// id in place only.
func wantWhere(t *testing.T, r *remote, cs []*clone, id, place string) {
	t.Helper()
	if got := r.where(id); len(got) != 1 || got[0] != place {
		t.Fatalf("the remote has %s in %v, want [%s]", id, got, place)
	}
	for _, c := range cs {
		c.must("", "sync")
		if got := c.localWhere(id); len(got) != 1 || got[0] != place {
			t.Fatalf("clone %s has %s in %v after a sync, want [%s]", c.name, id, got, place)
		}
	}
}

// TestRaceRelease: one owner's release of one session from two clones:
// one wins (todo/); the others exit 3 when their clone had fetched the
// release already (the session waits in todo/, nobody holds it) or 6 when
// they lost at the remote (their claim is gone there). Then an owner whose claim was
// reaped in another clone and taken by someone else is fenced: its
// release and done exit 6 and move nothing.
func TestRaceRelease(t *testing.T) {
	t.Parallel()
	r := newRemote(t, "daemon")
	cs := r.clones(2)
	a, b := cs[0], cs[1]
	ids := a.newSessions(2)
	a.must("x", "claim", ids[0])
	b.must("", "sync")
	oneWinner(t, "release", race(t, 1, cs, []string{"x", "x"}, "release", ids[0]), 3, 6)
	wantWhere(t, r, cs, ids[0], "todo")

	// x claims ids[1] in A; B reaps x (no heartbeat for the stale period)
	// and y takes it there.
	a.must("x", "claim", ids[1])
	b.must("", "sync")
	time.Sleep(1500 * time.Millisecond)
	b.must("reaper", "reap", "--stale", "1s")
	b.must("y", "claim", ids[1])
	for _, op := range []string{"release", "done"} {
		if res := a.pickup(context.Background(), "x", op, ids[1]); res.code != 6 {
			t.Fatalf("%s by the fenced x in A: exit %d, want 6\n%s", op, res.code, res.stderr)
		}
		wantWhere(t, r, cs, ids[1], "doing/y")
	}
}

// TestRaceReopen: the reopen of one finished session from two clones:
// one moves it; the others exit 0 too, as a repeated reopen does (the
// session is where they want it) and move nothing; it is in todo/ once.
func TestRaceReopen(t *testing.T) {
	t.Parallel()
	r := newRemote(t, "daemon")
	cs := r.clones(2)
	a, b := cs[0], cs[1]
	id := a.newSessions(1)[0]
	a.must("x", "claim", id)
	a.must("x", "done", id)
	b.must("", "sync")
	for i, x := range race(t, 1, cs, []string{"x", "y"}, "reopen", id) {
		if x.code != 0 {
			t.Errorf("reopen: racer %d exit %d, want 0 (a repeated reopen)\n%s", i, x.code, x.stderr)
		}
	}
	wantWhere(t, r, cs, id, "todo")
	if ops := countOps(r.branchEvents())[id]; ops["reopen"] != 1 {
		t.Fatalf("the board's history of %s: %v, want one reopen", id, ops)
	}
}

// TestRaceRequeue: the requeue of one set-aside session from two clones:
// one wins, the other exits 3; the session is in todo/ once.
func TestRaceRequeue(t *testing.T) {
	t.Parallel()
	r := newRemote(t, "daemon")
	cs := r.clones(2)
	a := cs[0]
	id := a.newSessions(1)[0]
	// One failed attempt sets it aside.
	if res := a.pickup(context.Background(), "x", "work", "--max-attempts", "1", "--", "false"); res.code == 0 {
		t.Fatalf("work with a failing command: exit 0\n%s", res.stderr)
	}
	wantWhere(t, r, cs, id, "failed")
	oneWinner(t, "requeue", race(t, 1, cs, []string{"x", "y"}, "requeue", id), 3)
	wantWhere(t, r, cs, id, "todo")
}

// TestRaceWork: pickup work in two clones, one session: its command runs
// once, in one clone; the other worker lost the claim at the remote and
// ran nothing.
func TestRaceWork(t *testing.T) {
	t.Parallel()
	r := newRemote(t, "daemon")
	cs := r.clones(2)
	id := cs[0].newSessions(1)[0]
	cs[1].must("", "sync")
	ran := filepath.Join(t.TempDir(), "ran")
	script := fmt.Sprintf(`echo "$PICKUP_SESSION_ID" >> %s; sleep 1`, ran)
	res := race(t, 2, cs, []string{"w0", "w1"}, "work", "--", "sh", "-c", script)
	for i, x := range res {
		if x.code != 0 && x.code != 3 {
			t.Fatalf("work in %s: exit %d\n%s", cs[i].name, x.code, x.stderr)
		}
	}
	data, _ := os.ReadFile(ran)
	if lines := strings.Fields(string(data)); len(lines) != 1 || lines[0] != id {
		t.Fatalf("the commands of two workers ran for %v, want [%s] once", lines, id)
	}
	wantWhere(t, r, cs, id, "done")
}
