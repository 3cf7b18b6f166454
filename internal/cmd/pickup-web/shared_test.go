package main

import (
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestSharedActionsGit(t *testing.T)      { sharedActions(t, gitShared(t)) }
func TestSharedActionsPostgres(t *testing.T) { sharedActions(t, pgShared(t)) }

// sharedActions: on a shared board, pickup serve --actions in board A
// acts through the arbiter. A priority changed on A's page is the order
// B's next takes; a new session made there is on B after its refresh. A
// priority change racing B's claim of the same session, round after
// round: B's claim stands, the change stands only if it came first (it
// is then in the arbiter's history), else it is refused with 409; never
// is the claimed session back in todo/, at the arbiter or on A. An
// action refused moves nothing, on A nor at the arbiter. A give-back
// does what `pickup reap` says it would.
func sharedActions(t *testing.T, s *shared) {
	first := s.newSession(0, "first")
	second := s.newSession(0, "second", "--priority", "low")
	srv := s.serve(0)

	if status, body := act(t, srv, "priority", url.Values{"id": {second}, "priority": {"high"}}); status != 200 {
		t.Fatalf("priority through the page: %d %s", status, body)
	}
	if !s.priorityAt(second, "ana") {
		t.Fatalf("the arbiter's history has no priority change of %s by ana", second)
	}
	if out := s.must(1, "agent-b", "next"); !strings.Contains(out, second) {
		t.Fatalf("B's next took another than %s, which A's page made high:\n%s", second, out)
	}
	held, err := os.ReadFile(filepath.Join(s.boards[1], "doing", "agent-b", second+".md"))
	if err != nil || !strings.Contains(string(held), "priority: high") {
		t.Fatalf("B's copy of %s: %v\n%s", second, err, held)
	}
	if p := s.place(second); p != "doing/agent-b" {
		t.Fatalf("the arbiter has %s in %q, want doing/agent-b", second, p)
	}
	_ = first

	// A new session made on the page is at the arbiter, and on B.
	status, body := act(t, srv, "new", url.Values{"title": {"from the page"}})
	if status != 200 || !strings.HasPrefix(body, "made ") {
		t.Fatalf("new through the page: %d %s", status, body)
	}
	made := strings.TrimSpace(strings.TrimPrefix(body, "made "))
	if p := s.place(made); p != "todo" {
		t.Fatalf("the arbiter has the page's new session %s in %q, want todo", made, p)
	}
	s.must(1, "", "sync")
	if _, err := os.Stat(filepath.Join(s.boards[1], "todo", made+".md")); err != nil {
		t.Fatalf("B does not have the page's new session after its sync: %v", err)
	}

	// A priority change racing B's claim of the same session.
	stood, refused := 0, 0
	for round := range 6 {
		id := s.newSession(0, fmt.Sprintf("raced %d", round), "--priority", "low")
		s.must(1, "", "sync")
		var wg sync.WaitGroup
		var status int
		var body string
		var claim result
		start := make(chan struct{})
		wg.Add(2)
		go func() {
			defer wg.Done()
			<-start
			// Later each round, so that some rounds meet the claim
			// before it lands and some after (the outcome is checked
			// either way, never the timing).
			time.Sleep(time.Duration(round) * 80 * time.Millisecond)
			status, body = act(t, srv, "priority", url.Values{"id": {id}, "priority": {"high"}})
		}()
		go func() {
			defer wg.Done()
			<-start
			claim = s.pickup(1, "agent-b", "claim", id)
		}()
		close(start)
		wg.Wait()
		if claim.code != 0 {
			t.Fatalf("round %d: B's claim of %s: exit %d (a priority change does not take a session)\n%s", round, id, claim.code, claim.stderr)
		}
		switch status {
		case 200:
			stood++
			if !s.priorityAt(id, "ana") {
				t.Fatalf("round %d: the page said %q, but the arbiter's history has no priority change of %s", round, body, id)
			}
		case 409:
			refused++
			if !strings.Contains(body, "not available") || s.priorityAt(id, "ana") {
				t.Fatalf("round %d: refused with %q; the arbiter's history has the change: %v", round, body, s.priorityAt(id, "ana"))
			}
		default:
			t.Fatalf("round %d: priority through the page: %d %s, want 200 or 409", round, status, body)
		}
		if p := s.place(id); p != "doing/agent-b" {
			t.Fatalf("round %d: the arbiter has %s in %q, want doing/agent-b", round, id, p)
		}
		if _, err := os.Stat(filepath.Join(s.boards[0], "todo", id+".md")); err == nil && status == 409 {
			t.Fatalf("round %d: the refused change left %s in A's todo/", round, id)
		}
		s.must(0, "", "sync")
		if _, err := os.Stat(filepath.Join(s.boards[0], "todo", id+".md")); err == nil {
			t.Fatalf("round %d: %s, claimed by B, is in A's todo/ after A's sync", round, id)
		}
	}
	t.Logf("%d races: the change stood %d times, was refused %d times", stood+refused, stood, refused)

	// A refused action moves nothing, on A nor at the arbiter: a
	// priority change of a session B holds, a requeue of one that is not
	// set aside.
	places, history := s.arbiter()
	files := boardFiles(t, s.boards[0])
	for _, a := range []struct {
		action string
		form   url.Values
	}{
		{"priority", url.Values{"id": {second}, "priority": {"low"}}},
		{"requeue", url.Values{"id": {made}}},
	} {
		status, body := act(t, srv, a.action, a.form)
		if status != 409 && status != 404 {
			t.Fatalf("%s refused: %d %s, want 409 or 404", a.action, status, body)
		}
		if now := boardFiles(t, s.boards[0]); now != files {
			t.Fatalf("a refused %s moved A's board:\n%s\nwas\n%s", a.action, now, files)
		}
		if p, h := s.arbiter(); !equalPlaces(p, places) || h != history {
			t.Fatalf("a refused %s changed the arbiter:\n%v\n%s\nwas\n%v\n%s", a.action, p, h, places, history)
		}
	}

	// A give-back does what `pickup reap` says it would for that owner.
	dry := s.must(0, "", "reap", "--dry-run")
	status, body = act(t, srv, "reap", url.Values{"owner": {"agent-b"}})
	if strings.Contains(dry, "from agent-b") != (status == 200) {
		t.Fatalf("the page's give-back of agent-b: %d %s; pickup reap --dry-run said:\n%s", status, body, dry)
	}
	if status == 200 {
		if p := s.place(second); p != "todo" && p != "failed" {
			t.Fatalf("given back on the page, %s is in %q at the arbiter", second, p)
		}
	} else if p := s.place(second); p != "doing/agent-b" {
		t.Fatalf("not given back (%s), yet %s is in %q at the arbiter", body, second, p)
	}
	t.Logf("give-back of agent-b: %d %s", status, strings.TrimSpace(body))

	// An owner on another host (unshare --uts), whose process has
	// exited and which has been silent for longer than stale, is given
	// back on the page, at the arbiter: set aside in failed/ at its first
	// attempt (max_attempts: 1); its late done is refused (exit 6); a
	// requeue on the page puts it back in todo/ there, and on B.
	cfg := filepath.Join(s.boards[0], "config.yaml")
	old, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	settings := "stale: 2s\nmax_attempts: 1\n"
	if s.kind == "git" {
		// The live view fetches only every ten minutes: within the test
		// only the give-back's own round trip to the arbiter tells A of
		// far-1's claim. (A PostgreSQL board's view follows every
		// transition at once.)
		settings += "shared_fetch: 10m\n"
	}
	if err := os.WriteFile(cfg, append(old, settings...), 0o644); err != nil {
		t.Fatal(err)
	}
	srv = s.serve(0) // reads stale at its start
	// The claim is made after A's server started: A learns of it from
	// the arbiter, when a give-back brings A in line with it.
	far := s.newSession(1, "held far away")
	holder := exec.Command("sleep", "600")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	res := s.far(1, "far-1", "--pid", strconv.Itoa(holder.Process.Pid), "claim", far)
	_ = holder.Process.Kill()
	_ = holder.Wait()
	if res.code != 0 {
		t.Fatalf("far-1's claim on the far host: exit %d\n%s", res.code, res.stderr)
	}
	for since := time.Now(); ; time.Sleep(200 * time.Millisecond) {
		// Refused until A's page judges far-1 stale (2 s of silence, on a
		// machine of any speed): each refusal moves nothing.
		status, body := act(t, srv, "reap", url.Values{"owner": {"far-1"}})
		if status == 200 {
			if !strings.Contains(body, far) {
				t.Fatalf("the page gave back %q, want %s", body, far)
			}
			break
		}
		if status != 409 || s.place(far) != "doing/far-1" {
			t.Fatalf("the page's give-back of far-1: %d %s; the arbiter has %s in %q", status, body, far, s.place(far))
		}
		if time.Since(since) > hang {
			t.Fatalf("the page did not give back far-1's session, silent past stale, within %s: %s", hang, body)
		}
	}
	if p := s.place(far); p != "failed" {
		t.Fatalf("given back on the page at its last attempt, %s is in %q at the arbiter, want failed", far, p)
	}
	if res := s.far(1, "far-1", "done", far); res.code != 6 {
		t.Fatalf("far-1's late done: exit %d, want 6\n%s%s", res.code, res.stdout, res.stderr)
	}
	if p := s.place(far); p != "failed" {
		t.Fatalf("after far-1's refused done, %s is in %q at the arbiter, want failed", far, p)
	}
	if status, body := act(t, srv, "requeue", url.Values{"id": {far}}); status != 200 {
		t.Fatalf("requeue on the page: %d %s", status, body)
	}
	if p := s.place(far); p != "todo" {
		t.Fatalf("requeued on the page, %s is in %q at the arbiter, want todo", far, p)
	}
	s.must(1, "", "sync")
	if _, err := os.Stat(filepath.Join(s.boards[1], "todo", far+".md")); err != nil {
		t.Fatalf("B does not have the requeued %s in todo/ after its sync: %v", far, err)
	}
}
