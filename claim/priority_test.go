package claim_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/sessions"
)

// TestSetPriority: a waiting session's priority changes, in next's order
// and in the history with who changed it; a claimed one is left alone and
// never comes back to todo/.
func TestSetPriority(t *testing.T) {
	b := pkBoard(t)
	s, err := b.Create(sessions.Meta{Title: "waits"}, []byte("the body\n"))
	if err != nil {
		t.Fatal(err)
	}
	ana, _ := claim.New(b, "ana")
	if _, err := ana.SetPriority(context.Background(), s.ID, sessions.High); err != nil {
		t.Fatal(err)
	}
	list, _ := b.List(sessions.Todo)
	if len(list) != 1 || list[0].Priority != sessions.High {
		t.Fatalf("todo: %+v, want the session at high", list)
	}
	events, _, _ := b.Events(s.ID)
	if last := events[len(events)-1]; last.Op != "priority" || last.Owner != "ana" || last.Reason != "priority high (was medium)" {
		t.Errorf("the history says %+v", last)
	}
	agent, _ := claim.New(b, "agent")
	if _, err := agent.Claim(context.Background(), s.ID); err != nil {
		t.Fatal(err)
	}
	held, _ := os.ReadFile(b.Path(sessions.Doing, "agent", s.ID))
	if _, err := ana.SetPriority(context.Background(), s.ID, sessions.Low); !errors.Is(err, claim.ErrSessionNotAvailable) {
		t.Fatalf("a claimed session: %v, want ErrSessionNotAvailable", err)
	}
	if _, err := os.Stat(b.Path(sessions.Todo, "", s.ID)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the claimed session is back in todo/: %v", err)
	}
	if now, _ := os.ReadFile(b.Path(sessions.Doing, "agent", s.ID)); string(now) != string(held) {
		t.Errorf("the claimer's file changed:\n%s\nwas\n%s", now, held)
	}
}

// TestSetPriorityShared: on a board shared through a git remote, a
// priority change stands only once the remote took it. Clone "there"
// claims a session; a client of clone "here" that has not fetched since
// (made after the arbiter was attached, so it brings nothing in line
// itself) changes its priority: the remote refuses it, the client is
// told ErrSessionNotAvailable and who holds it, and nothing moved: not in
// todo/ here, not on the remote's board branch, no priority in its
// history. A change the remote takes is what the other clone then sees.
func TestSetPriorityShared(t *testing.T) {
	here, there, cleanup := exampleSharedClones()
	defer cleanup()
	b1, err := sessions.Open(here)
	if err != nil {
		t.Fatal(err)
	}
	alice, err := claim.New(b1, "alice") // attaches the remote
	if err != nil {
		t.Fatal(err)
	}
	defer alice.Close()
	// won waits at low: only its new priority puts it first.
	lost, err := b1.Create(sessions.Meta{Title: "claimed elsewhere"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	won, err := b1.Create(sessions.Meta{Title: "gets a priority", Priority: sessions.Low}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := alice.SetPriority(context.Background(), won.ID, sessions.High); err != nil {
		t.Fatal(err)
	}

	b2, err := sessions.Open(there)
	if err != nil {
		t.Fatal(err)
	}
	bob, err := claim.New(b2, "bob")
	if err != nil {
		t.Fatal(err)
	}
	defer bob.Close()
	// bob's next fetches: the priority alice set is there, and it is the
	// order bob's next takes.
	s, err := bob.NewQueue(claim.NextOptions{}).Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s.ID != won.ID || s.Priority != sessions.High {
		t.Fatalf("bob's next took %s at %s, want %s at high", s.ID, s.Priority, won.ID)
	}
	if _, err := bob.Claim(context.Background(), lost.ID); err != nil {
		t.Fatal(err)
	}

	// Clone "here" has not fetched since bob's claim: its todo/ still
	// shows the session.
	if _, err := os.Stat(b1.Path(sessions.Todo, "", lost.ID)); err != nil {
		t.Fatalf("here has not fetched, yet: %v", err)
	}
	ana, err := claim.New(b1, "ana") // the arbiter is attached: ana's client readies nothing
	if err != nil {
		t.Fatal(err)
	}
	_, err = ana.SetPriority(context.Background(), lost.ID, sessions.Low)
	var e *claim.Error
	if !errors.Is(err, claim.ErrSessionNotAvailable) || !errors.As(err, &e) || e.Holder != "bob" {
		t.Fatalf("a priority change of a session bob claimed at the remote: %v, want ErrSessionNotAvailable held by bob", err)
	}
	if _, err := os.Stat(b1.Path(sessions.Todo, "", lost.ID)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the session bob holds is in todo/ here: %v", err)
	}
	held, err := os.ReadFile(b1.Path(sessions.Doing, "bob", lost.ID))
	if err != nil || strings.Contains(string(held), "priority: low") {
		t.Errorf("here, bob's session should be in doing/bob/ as the remote has it: %v\n%s", err, held)
	}
	gitDir := filepath.Dir(filepath.Dir(here))
	files := gitOut(t, gitDir, "ls-tree", "-r", "--name-only", "origin/pickup")
	if !strings.Contains(files, "doing/bob/"+lost.ID+".md") || strings.Contains(files, "todo/"+lost.ID+".md") {
		t.Errorf("the remote's board branch:\n%s\nwant %s in doing/bob/ only", files, lost.ID)
	}
	log := gitOut(t, gitDir, "show", "origin/pickup:events.log")
	if n := strings.Count(log, `"op":"priority"`); n != 1 || !strings.Contains(log, `"id":"`+won.ID+`","op":"priority"`) {
		t.Errorf("the remote's history has %d priority changes, want %s's only:\n%s", n, won.ID, log)
	}
}

// gitOut runs git in dir (after a fetch of origin) and returns its output.
func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	for _, a := range [][]string{{"fetch", "-q", "origin", "+refs/heads/pickup:refs/remotes/origin/pickup"}, args} {
		cmd := exec.Command("git", a...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", a, err, out)
		}
		if a[0] != "fetch" {
			return string(out)
		}
	}
	return ""
}
