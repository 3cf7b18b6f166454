package claudee2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPreToolUseSafeOnly: pickup's PreToolUse hook approves pickup
// commands only when they are safe; in print mode, where nobody can
// approve, the others are refused and change nothing. `pickup new FILE`
// runs for a file of the repository, not for /etc/hostname or a link out
// of the repository; `pickup --dir /etc next` and a $PICKUP_DIR naming
// another board are not approved. Edits of a board file through a hard
// link, of .git/pickup/, and under a lowercase tool name change nothing.
func TestPreToolUseSafeOnly(t *testing.T) {
	forEachSetup(t, func(t *testing.T, p *project) {
		ids := p.seed("Held")
		outside := t.TempDir()
		secret := filepath.Join(outside, "secret.md")
		if err := os.WriteFile(secret, []byte("# secret\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p.root, "notes.md"), []byte("# notes\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(secret, filepath.Join(p.root, "link.md")); err != nil {
			t.Fatal(err)
		}
		session := filepath.Join(p.board, "todo", ids[0]+".md")
		hard := filepath.Join(p.root, "innocent.md")
		if err := os.Link(session, hard); err != nil {
			t.Fatal(err)
		}
		before, _ := os.ReadFile(session)
		queue := filepath.Join(p.root, ".git", "pickup", "queue", "1")
		api := newStubAPI(t, "safe",
			step{Bash: "pickup new --title Notes notes.md"},
			step{Bash: "pickup new /etc/hostname"},
			step{Bash: "pickup new link.md"},
			step{Bash: "pickup --dir /etc next"},
			step{Tool: "Read", Input: map[string]any{"file_path": hard}},
			step{Tool: "Edit", Input: map[string]any{"file_path": hard, "old_string": "title: Held", "new_string": "title: Changed"}},
			step{Tool: "edit", Input: map[string]any{"file_path": session, "old_string": "title: Held", "new_string": "title: Changed"}},
			step{Tool: "Write", Input: map[string]any{"file_path": queue, "content": "x"}},
			stop)
		a := p.startClaude("safe", api, claudeOpts{args: []string{"--permission-mode", "acceptEdits"}})
		a.prompt("Add the notes, and the others.")
		requireResult(t, api, 0, 0)
		for i, what := range []string{"pickup new /etc/hostname", "pickup new link.md", "pickup --dir /etc next"} {
			if r := requireResult(t, api, i+1, -1); strings.Contains(r.Content, "claimed") {
				t.Fatalf("%s ran: %v", what, r)
			}
		}
		requireResult(t, api, 4, 0)
		for i, what := range []string{"Edit through a hard link", "lowercase edit", "Write of .git/pickup"} {
			requireResult(t, api, i+5, -1)
			_ = what
		}
		if r := api.Results()[5]; !strings.Contains(r.Content, "pickup") {
			t.Fatalf("the Edit through a hard link was refused, but not by pickup: %v", r)
		}
		if r := api.Results()[7]; !strings.Contains(r.Content, "pickup") {
			t.Fatalf("the Write of .git/pickup was refused, but not by pickup: %v", r)
		}
		if after, _ := os.ReadFile(session); string(after) != string(before) {
			t.Fatalf("the session file changed:\n%s", after)
		}
		if _, err := os.Lstat(queue); err == nil {
			t.Fatalf("the Write created %s", queue)
		}
		out := p.pickupOK("", "list", "--state", "todo")
		if strings.Count(out, "\n") != 3 || !strings.Contains(out, "Notes") {
			t.Fatalf("todo after the commands, want Held and Notes only:\n%s", out)
		}
		p.requireState(ids[0], "todo", "after pickup --dir /etc next")
		requireScriptFollowed(t, api)

		// $PICKUP_DIR naming another board: not approved, nothing claimed there.
		other := filepath.Join(outside, "board")
		p.pickupOK("", "--dir", other, "init")
		p.pickupOK("", "--dir", other, "new", "--title", "Elsewhere")
		api2 := newStubAPI(t, "elsewhere", step{Bash: "pickup next"}, stop)
		q := *p
		q.env = append(append([]string(nil), p.env...), "PICKUP_DIR="+other)
		b := q.startClaude("elsewhere", api2, claudeOpts{})
		b.prompt("Take the next session.")
		if r := requireResult(t, api2, 0, -1); strings.Contains(r.Content, "claimed") {
			t.Fatalf("pickup next on $PICKUP_DIR=%s ran: %v", other, r)
		}
		requireScriptFollowed(t, api2)
	})
}
