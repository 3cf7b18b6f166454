package claudee2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSubfolder: Claude Code started in a subfolder of the repository, or
// in a subfolder of a linked worktree (git worktree add), still runs
// pickup's hooks: SessionStart tells the agent its owner and ties the
// lease to the Claude Code process, /pickup ID claims for the session on
// the main work tree's board, and SessionEnd gives the claim back.
func TestSubfolder(t *testing.T) {
	forEachSetup(t, func(t *testing.T, p *project) {
		p.run("git", "-c", "user.name=e2e", "-c", "user.email=e2e@example.invalid", "commit", "-q", "--allow-empty", "-m", "start")
		worktree := filepath.Join(filepath.Dir(p.root), "worktree")
		p.run("git", "worktree", "add", "-q", worktree)
		for _, dir := range []string{filepath.Join(p.root, "src", "deep"), filepath.Join(worktree, "src", "deep")} {
			rel, _ := filepath.Rel(filepath.Dir(p.root), dir)
			t.Run(strings.ReplaceAll(rel, "/", "_"), func(t *testing.T) {
				p := p.in(t)
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				id := p.seed("Fix the parser in " + rel)[0]
				api := newStubAPI(t, "sub", step{Bash: "pickup claim " + id}, claimed(stop))
				a := p.startClaude("sub", api, claudeOpts{dir: dir})
				a.prompt(p.pickupSkill + " " + id)
				if !api.Saw("Session asked for: `" + id + "`") {
					t.Fatalf("the /pickup skill did not reach the model from %s", rel)
				}
				if texts := api.Texts(); len(texts) == 0 || !strings.Contains(texts[0], a.ID()) {
					t.Fatalf("the first request's context does not name the session %s: SessionStart did not run or printed nothing", a.ID())
				}
				requireResult(t, api, 0, 0, "claimed "+id+" [")
				p.requireHeld(id, a.ID(), "after /pickup in "+rel)
				p.requireLeaseOn(a.ID(), a.Pid(), "after /pickup in "+rel)
				a.end()
				p.requireState(id, "todo", "after the session in "+rel+" ended")
				if s := p.status(a.ID()); s.State != "" {
					t.Fatalf("after the session in %s ended its lease is still there: %+v", rel, s)
				}
				requireScriptFollowed(t, api)
			})
		}
	})
}

// TestEditBoardFileDenied: the agent cannot change the board with its file
// tools: an Edit or Write of a file under the board is denied by pickup's
// PreToolUse hook, and the file stays as it was. In the same session, with
// edits accepted without asking, an Edit elsewhere in the repository
// works: the denial is pickup's, not the permission mode's.
func TestEditBoardFileDenied(t *testing.T) {
	forEachSetup(t, func(t *testing.T, p *project) {
		ids := p.seed("Fix the parser")
		session := filepath.Join(p.board, "todo", ids[0]+".md")
		before, err := os.ReadFile(session)
		if err != nil {
			t.Fatal(err)
		}
		planted := filepath.Join(p.board, "doing", "someone", ids[0]+".md")
		notes := filepath.Join(p.root, "NOTES.md")
		if err := os.WriteFile(notes, []byte("status: old\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		api := newStubAPI(t, "editor",
			step{Tool: "Read", Input: map[string]any{"file_path": session}},
			step{Tool: "Edit", Input: map[string]any{"file_path": session, "old_string": "title: Fix the parser", "new_string": "title: Changed by hand"}},
			step{Tool: "Write", Input: map[string]any{"file_path": planted, "content": string(before)}},
			step{Tool: "Read", Input: map[string]any{"file_path": notes}},
			step{Tool: "Edit", Input: map[string]any{"file_path": notes, "old_string": "status: old", "new_string": "status: new"}},
			stop)
		a := p.startClaude("editor", api, claudeOpts{args: []string{"--permission-mode", "acceptEdits"}})
		a.prompt("Change the session's title.")
		requireResult(t, api, 0, 0, "Fix the parser")
		for i, what := range []string{"the Edit of " + session, "the Write of " + planted} {
			r := requireResult(t, api, i+1, -1)
			if !strings.Contains(r.Content, "pickup") {
				t.Fatalf("%s was refused, but not by pickup: %v", what, r)
			}
		}
		if after, err := os.ReadFile(session); err != nil || !bytes.Equal(after, before) {
			t.Fatalf("the session file changed: %v\nbefore:\n%s\nafter:\n%s", err, before, after)
		}
		if _, err := os.Lstat(planted); err == nil {
			t.Fatalf("the Write created %s", planted)
		}
		requireResult(t, api, 4, 0)
		if got, _ := os.ReadFile(notes); string(got) != "status: new\n" {
			t.Fatalf("the Edit outside the board did not happen: NOTES.md is %q", got)
		}
		requireScriptFollowed(t, api)
	})
}

// TestPickupAllowed: the agent may run pickup without asking, also outside
// the /pickup and /handoff skills (after SessionStart told it what it
// holds, or in a later turn), while other commands still need approval:
// in print mode, where nobody can approve, they are refused.
func TestPickupAllowed(t *testing.T) {
	forEachSetup(t, func(t *testing.T, p *project) {
		ids := p.seed("Fix the parser")
		stray := filepath.Join(p.root, "stray")
		api := newStubAPI(t, "plain",
			step{Bash: "pickup list"},
			step{Bash: "pickup next"},
			step{Bash: "touch " + stray},
			stop)
		a := p.startClaude("plain", api, claudeOpts{})
		a.prompt("What is on the board? Take the best session.")
		requireResult(t, api, 0, 0, ids[0])
		requireResult(t, api, 1, 0, "claimed "+ids[0]+" [")
		p.requireHeld(ids[0], a.ID(), "after pickup next outside the skill")
		requireResult(t, api, 2, -1)
		if _, err := os.Lstat(stray); err == nil {
			t.Fatalf("a command that needs approval ran in print mode: %s exists", stray)
		}
		requireScriptFollowed(t, api)
	})
}
