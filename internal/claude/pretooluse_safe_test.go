package claude

import (
	"os"
	"path/filepath"
	"testing"
)

// TestPreToolUseApprovesOnlyWhatIsSafe: pickup commands are approved only
// on the repository's own board and, for `pickup new FILE`, only for a
// FILE of the repository that no link leads out of; anything else gets no
// decision (Claude Code asks, or refuses in print mode).
func TestPreToolUseApprovesOnlyWhatIsSafe(t *testing.T) {
	f := newFixture(t)
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret")
	mustWrite(t, secret, "secret\n")
	mustWrite(t, filepath.Join(f.repo, "notes.md"), "# notes\n")
	if err := os.MkdirAll(filepath.Join(f.repo, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(f.repo, "docs", "plan.md"), "# plan\n")
	if err := os.Symlink(secret, filepath.Join(f.repo, "link.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(f.repo, "out")); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(f.repo, "hard-src.md"), "x\n")
	if err := os.Link(filepath.Join(f.repo, "hard-src.md"), filepath.Join(f.repo, "hard.md")); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(outside, "other-board")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		cmd       string
		pickupDir string
		want      string
	}{
		{"new, a file of the repository", "pickup new --title T notes.md", "", "allow"},
		{"new, relative path into a folder", "pickup new docs/plan.md", "", "allow"},
		{"new, absolute path in the repository", "pickup new " + filepath.Join(f.repo, "notes.md"), "", "allow"},
		{"new with a title only", "pickup new --title 'Fix it'", "", "allow"},
		{"new, an absolute path outside", "pickup new /etc/hostname", "", ""},
		{"new, /etc/shadow", "pickup new /etc/shadow", "", ""},
		{"new, out with ..", "pickup new ../" + filepath.Base(f.repo) + "/../x", "", ""},
		{"new, a link out of the repository", "pickup new link.md", "", ""},
		{"new, through a linked folder", "pickup new out/secret", "", ""},
		{"new, a hard link", "pickup new hard.md", "", ""},
		{"new, a file that is not there", "pickup new missing.md", "", ""},
		{"--dir another directory", "pickup --dir /etc next", "", ""},
		{"--dir= another board", "pickup --dir=" + other + " next", "", ""},
		{"--dir the board, relative", "pickup --dir .spx/sessions next", "", "allow"},
		{"--dir the board, absolute", "pickup --dir=" + f.board.Dir + " list", "", "allow"},
		{"$PICKUP_DIR another board", "pickup next", other, ""},
		{"$PICKUP_DIR the board", "pickup next", f.board.Dir, "allow"},
		{"plain next", "pickup next", "", "allow"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.env["PICKUP_DIR"] = tt.pickupDir
			decision, reason := f.preTool("Bash", map[string]any{"command": tt.cmd})
			if decision != tt.want {
				t.Fatalf("%s: decision %q (%s), want %q", tt.cmd, decision, reason, tt.want)
			}
		})
	}
}

// TestPreToolUseDeniesEveryWay: an edit of a board file is denied through
// a hard link to it, whatever case the tool's name comes in, and under
// .git/pickup/.
func TestPreToolUseDeniesEveryWay(t *testing.T) {
	f := newFixture(t)
	id := f.newSession("Held")
	f.claim(sessB, id)
	held := f.board.Path("doing", sessB, id)
	hard := filepath.Join(f.repo, "innocent.md")
	if err := os.Link(held, hard); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(f.repo, "plain.md"), "x\n")
	tests := []struct {
		tool, path string
		want       string
	}{
		{"Edit", hard, "deny"},
		{"Write", hard, "deny"},
		{"edit", held, "deny"},
		{"WRITE", filepath.Join(f.board.Dir, "todo", "x.md"), "deny"},
		{"multiEdit", held, "deny"},
		{"Write", filepath.Join(f.repo, ".git", "pickup", "queue", "1"), "deny"},
		{"Edit", filepath.Join(f.repo, ".git", "pickup", "state.json"), "deny"},
		{"edit", filepath.Join(f.repo, "plain.md"), ""},
		{"Write", filepath.Join(f.repo, ".git", "config"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+filepath.Base(tt.path), func(t *testing.T) {
			decision, _ := f.preTool(tt.tool, map[string]any{"file_path": tt.path, "old_string": "a", "new_string": "b"})
			if decision != tt.want {
				t.Fatalf("%s %s: decision %q, want %q", tt.tool, tt.path, decision, tt.want)
			}
		})
	}
}

func mustWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
