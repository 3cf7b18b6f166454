package claude

import (
	"strings"
	"testing"
)

// Under `pickup work -- claude ...` SessionStart names the session work
// gave the agent, not "/pickup claims one": the agent's commands act as
// work's owner, and the session it must work is that one.
func TestHookSessionStartUnderWork(t *testing.T) {
	f := newFixture(t)
	given := f.newSession("Fix the parser")
	other := f.newSession("Write the docs")
	f.claim("pool-1", given)
	f.env["PICKUP_SESSION_ID"] = given
	f.env["PICKUP_OWNER"] = "pool-1"
	f.env["PICKUP_DIR"] = f.board.Dir
	f.mustHook("session-start", sessA, map[string]any{"source": "startup"})
	out := f.stdout.String()
	for _, want := range []string{given + " [medium] Fix the parser", "pickup done " + given, "work's owner pool-1", "claim no other"} {
		if !strings.Contains(out, want) {
			t.Errorf("session-start under work printed %q, want %q in it", out, want)
		}
	}
	for _, not := range []string{"/pickup claims one", other, "owner " + sessA} {
		if strings.Contains(out, not) {
			t.Errorf("session-start under work printed %q: it says %q", out, not)
		}
	}

	// Not all of work's variables: the text is the usual one.
	delete(f.env, "PICKUP_OWNER")
	f.mustHook("session-start", sessA, map[string]any{"source": "startup"})
	if out := f.stdout.String(); !strings.Contains(out, "/pickup claims one") {
		t.Errorf("session-start without $PICKUP_OWNER printed %q, want the usual text", out)
	}
}
