package claudee2e

import (
	"os"
	"path/filepath"
	"testing"
)

// TestClearHandsOver: with keep_on_session_end: true, /clear in a
// session that holds a session hands the claim to the session that goes
// on in the same window (a new session id), instead of leaving it under
// the cleared id.
func TestClearHandsOver(t *testing.T) {
	t.Parallel()
	claudeBinary(t)
	p := newProject(t, projectFiles)
	if err := os.WriteFile(filepath.Join(p.board, "config.yaml"), []byte("keep_on_session_end: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	id := p.seed("Long one")[0]
	api := newStubAPI(t, "clear", step{Bash: "pickup next"}, claimed(stop), step{Bash: "pickup list --mine"}, stop)
	a := p.startClaude("clear", api, claudeOpts{})
	a.prompt(p.pickupSkill)
	old := a.ID()
	p.requireHeld(id, old, "after /pickup")
	a.send("/clear")
	a.result(turnTimeout)
	a.prompt("What do I hold?")
	_, owner := p.where(id)
	if owner == old {
		t.Fatalf("after /clear %s is still held by the cleared session %s\n%s", id, old, p.events())
	}
	requireResult(t, api, 1, 0, id)
	t.Logf("held by %s after /clear (was %s)", owner, old)
}
