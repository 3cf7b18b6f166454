package pgways

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestKilledAgentComesBack: an agent whose lease follows a process is
// SIGKILLed; on its own machine the next claimer reaps it at once, through
// the database, so the other machine sees the session reaped and claimed
// again, and the killed owner's late done exits 6.
func TestKilledAgentComesBack(t *testing.T) {
	db, url := newDatabase(t)
	cs := clones(t, url, 2)
	a, b := cs[0], cs[1]
	id := strings.TrimSpace(a.must("", "new", "-t", "killed"))
	agent := exec.Command("sleep", "300")
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = agent.Process.Kill(); _ = agent.Wait() })
	a.must("victim", "--pid", strconv.Itoa(agent.Process.Pid), "claim", id)
	if err := agent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = agent.Wait()
	res := a.pickup(context.Background(), "heir", "next", "--json")
	if res.code != 0 || !strings.Contains(res.stdout, id) {
		t.Fatalf("next after the kill: exit %d, want %s\n%s%s", res.code, id, res.stdout, res.stderr)
	}
	if got := server.psql(t, db, "SELECT string_agg(op || ':' || dst, ',' ORDER BY seq) FROM pickup_events WHERE id = '"+id+"'"); got != "new:todo,claim:doing/victim,reap:todo,next:doing/heir" {
		t.Errorf("the database's history of %s: %s", id, got)
	}
	b.must("", "sync")
	if got := b.files("doing/heir"); len(got) != 1 || got[0] != id {
		t.Errorf("b shows doing/heir %v, want %s", got, id)
	}
	if res := a.pickup(context.Background(), "victim", "done", id); res.code != 6 {
		t.Errorf("the killed owner's late done: exit %d, want 6\n%s", res.code, res.stderr)
	}
}

// TestStatusAcrossBoards: status and list on one board show an owner of
// another board, read from the database (no sync in between).
func TestStatusAcrossBoards(t *testing.T) {
	_, url := newDatabase(t)
	cs := clones(t, url, 2)
	a, b := cs[0], cs[1]
	id := strings.TrimSpace(a.must("", "new", "-t", "seen from b"))
	a.must("far-away", "claim", id)
	if out := b.must("", "status"); !strings.Contains(out, "far-away") || !strings.Contains(out, id) {
		t.Errorf("status on b does not show far-away holding %s:\n%s", id, out)
	}
	if out := b.must("", "list", "--state", "doing"); !strings.Contains(out, "far-away") || !strings.Contains(out, id) {
		t.Errorf("list on b does not show far-away holding %s:\n%s", id, out)
	}
}

// TestHeartbeatsAcrossBoards: an owner on another machine that keeps
// heartbeating (pickup heartbeat, recorded in the database on its clock)
// is not reaped here however long it holds its session; once it stops,
// reap takes the session back after the stale period.
func TestHeartbeatsAcrossBoards(t *testing.T) {
	db, url := newDatabase(t)
	cs := clones(t, url, 2)
	a, b := cs[0], cs[1]
	id := strings.TrimSpace(a.must("", "new", "-t", "long work"))
	// On another machine (far.invalid): a clone of this machine would
	// judge far by its processes (holders_test.go).
	farMust := func(args ...string) {
		if res := farPickup(t, a, "far", args...); res.code != 0 {
			t.Fatalf("far: pickup %v: exit %d\n%s", args, res.code, res.stderr)
		}
	}
	farMust("claim", id)
	for range 8 { // 4 s of work, twice the stale period
		time.Sleep(500 * time.Millisecond)
		farMust("heartbeat", id)
		if out := b.must("", "reap", "--stale", "2s"); strings.Contains(out, id) {
			t.Fatalf("b reaped a live owner that heartbeats on another machine:\n%s", out)
		}
	}
	if got := server.psql(t, db, "SELECT state || '/' || owner FROM pickup_sessions WHERE id = '"+id+"'"); got != "doing/far" {
		t.Fatalf("the database has %q, want doing/far", got)
	}
	time.Sleep(2500 * time.Millisecond) // far stops
	if out := b.must("", "reap", "--stale", "2s"); !strings.Contains(out, id) {
		t.Errorf("b did not reap the silent owner:\n%s", out)
	}
}
