package claudee2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// mentions says whether text names the session id as a word of its own (an
// id is a prefix of the next one created in the same second: ID-2).
func mentions(text, id string) bool {
	return regexp.MustCompile(`(^|[\s/])` + regexp.QuoteMeta(id) + `([\s.]|$)`).MatchString(text)
}

// TestResumeAndFork: `claude --resume ID` is the same owner as the session
// it resumes; `--resume ID --fork-session` is a new session with its own
// owner, which cannot take, release or finish the original's claims, and
// whose end leaves them where they are.
func TestResumeAndFork(t *testing.T) {
	forEachSetup(t, func(t *testing.T, p *project) {
		ids := p.seed("Fix the parser", "Write the docs")
		apiA := newStubAPI(t, "a", step{Bash: "pickup next"}, claimed(stop))
		a := p.startClaude("a", apiA, claudeOpts{})
		a.prompt(p.pickupSkill)
		orig := a.ID()
		p.requireHeld(ids[0], orig, "after /pickup")
		a.end()
		p.requireState(ids[0], "todo", "after the first run ended")

		apiR := newStubAPI(t, "resumed", step{Bash: "pickup claim " + ids[0]}, claimed(stop))
		r := p.startClaude("resumed", apiR, claudeOpts{args: []string{"--resume", orig}})
		r.prompt(p.pickupSkill + " " + ids[0])
		if r.ID() != orig {
			t.Fatalf("--resume %s runs as session %s", orig, r.ID())
		}
		requireResult(t, apiR, 0, 0, "claimed "+ids[0]+" [")
		p.requireHeld(ids[0], orig, "after /pickup in the resumed session")
		p.requireLeaseOn(orig, r.Pid(), "after /pickup in the resumed session")

		apiF := newStubAPI(t, "fork",
			step{Bash: "pickup next"},
			claimed(step{Bash: "pickup release " + ids[0]}),
			step{Bash: "pickup done " + ids[0]},
			step{Bash: "pickup list --mine"},
			stop)
		f := p.startClaude("fork", apiF, claudeOpts{args: []string{"--resume", orig, "--fork-session"}})
		f.prompt(p.pickupSkill)
		fork := f.ID()
		if fork == orig {
			t.Fatalf("--fork-session runs as the original session %s", orig)
		}
		requireResult(t, apiF, 0, 0, "claimed "+ids[1]+" [")
		p.requireHeld(ids[1], fork, "after /pickup in the fork")
		if r := requireResult(t, apiF, 1, 3); !strings.Contains(r.Content, orig) {
			t.Fatalf("the fork's release of the original's session does not say who holds it: %v", r)
		}
		requireResult(t, apiF, 2, 3)
		if mine := requireResult(t, apiF, 3, 0, ids[1]); mentions(mine.Content, ids[0]) {
			t.Fatalf("the fork lists the original's session as its own: %v", mine)
		}
		p.requireHeld(ids[0], orig, "after the fork tried to release and finish it")

		f.end()
		p.requireState(ids[1], "todo", "after the fork ended")
		p.requireHeld(ids[0], orig, "after the fork ended")
		p.requireLeaseOn(orig, r.Pid(), "after the fork ended")
		r.end()
		p.requireState(ids[0], "todo", "after the resumed session ended")
		requireScriptFollowed(t, apiA, apiR, apiF)
	})
}

// TestResumeTakesUpKeptClaims: with keep_on_session_end: true the claims
// outlive the session's end, and `claude --resume ID` takes them up again:
// the resumed process holds the lease, the agent lists the session as its
// own and finishes it, and meanwhile no other agent's next takes it.
func TestResumeTakesUpKeptClaims(t *testing.T) {
	forEachSetup(t, func(t *testing.T, p *project) {
		if err := os.WriteFile(filepath.Join(p.board, "config.yaml"), []byte("keep_on_session_end: true\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		ids := p.seed("Fix the parser")
		apiA := newStubAPI(t, "a", step{Bash: "pickup next"}, claimed(stop))
		a := p.startClaude("a", apiA, claudeOpts{})
		a.prompt(p.pickupSkill)
		orig := a.ID()
		a.end()
		p.requireHeld(ids[0], orig, "after the session ended with keep_on_session_end")
		if _, errOut, code := p.pickup("other", "next"); code != 3 {
			t.Fatalf("another agent's next after the session ended: exit %d, want 3 (nothing available)\n%s", code, errOut)
		}

		apiR := newStubAPI(t, "resumed", step{Bash: "pickup list --mine"}, stop, step{Bash: "pickup done " + ids[0]}, stop)
		r := p.startClaude("resumed", apiR, claudeOpts{args: []string{"--resume", orig}})
		r.prompt("What do you hold?")
		if mine := requireResult(t, apiR, 0, 0); !mentions(mine.Content, ids[0]) {
			t.Fatalf("the resumed session does not list %s as its own: %v", ids[0], mine)
		}
		p.requireHeld(ids[0], orig, "in the resumed session")
		p.requireLeaseOn(orig, r.Pid(), "in the resumed session")
		r.prompt("Finish it.")
		requireResult(t, apiR, 1, 0)
		p.requireState(ids[0], "done", "after the resumed session finished it")
		r.end()
		requireScriptFollowed(t, apiA, apiR)
	})
}
