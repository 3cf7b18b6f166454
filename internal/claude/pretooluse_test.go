package claude

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// preTool runs the PreToolUse hook for a tool call and returns the
// decision it printed ("" for none) and its reason.
func (f *fixture) preTool(tool string, input map[string]any) (string, string) {
	f.t.Helper()
	in := f.hookJSON("PreToolUse", sessA, map[string]any{"tool_name": tool, "tool_input": input})
	if err := f.hooks().Run("pre-tool-use", strings.NewReader(in)); err != nil {
		f.t.Fatalf("pre-tool-use: %v", err)
	}
	if f.stdout.Len() == 0 {
		return "", ""
	}
	var out preToolDecision
	if err := json.Unmarshal(f.stdout.Bytes(), &out); err != nil {
		f.t.Fatalf("pre-tool-use printed %q: %v", f.stdout.String(), err)
	}
	if out.HookSpecificOutput.HookEventName != "PreToolUse" {
		f.t.Errorf("hookEventName %q", out.HookSpecificOutput.HookEventName)
	}
	return out.HookSpecificOutput.PermissionDecision, out.HookSpecificOutput.PermissionDecisionReason
}

func TestPreToolUseDeniesBoardFiles(t *testing.T) {
	f := newFixture(t)
	id := f.newSession("Held")
	f.claim(sessB, id)
	held := f.board.Path("doing", sessB, id)
	link := filepath.Join(t.TempDir(), "board-link")
	if err := os.Symlink(f.board.Dir, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tool  string
		input map[string]any
	}{
		{"Edit", map[string]any{"file_path": held, "old_string": "a", "new_string": "b"}},
		{"MultiEdit", map[string]any{"file_path": held, "edits": []any{}}},
		{"Write", map[string]any{"file_path": filepath.Join(f.board.Dir, "todo", "new.md"), "content": "x"}},
		{"Write", map[string]any{"file_path": filepath.Join(f.board.Dir, "config.yaml"), "content": "x"}},
		{"Write", map[string]any{"file_path": ".spx/sessions/done/" + id + ".md", "content": "x"}},  // relative to cwd
		{"Write", map[string]any{"file_path": filepath.Join(link, "todo", "x.md"), "content": "x"}}, // through a link
		{"Edit", map[string]any{"file_path": filepath.Join(f.board.Dir, ".pickup", "leases", sessB+".json")}},
		{"Write", map[string]any{"file_path": "/elsewhere/board/.pickup/locks/k", "content": ""}}, // another board's runtime
		{"NotebookEdit", map[string]any{"notebook_path": filepath.Join(f.board.Dir, "todo", "n.ipynb")}},
	} {
		decision, reason := f.preTool(tc.tool, tc.input)
		if decision != "deny" {
			t.Errorf("%s %v: decision %q, want deny", tc.tool, tc.input["file_path"], decision)
			continue
		}
		for _, want := range []string{"pickup done ID", "pickup release ID", "pickup new", "never force"} {
			if !strings.Contains(reason, want) {
				t.Errorf("the reason does not name %q: %s", want, reason)
			}
		}
	}
	if data, err := os.ReadFile(held); err != nil || !strings.Contains(string(data), "Held") {
		t.Errorf("the held file changed: %q, %v", data, err)
	}
	// Files of the repository are the agent's to edit: no decision.
	for _, p := range []string{filepath.Join(f.repo, "main.go"), filepath.Join(f.repo, ".spx", "notes.md"), filepath.Join(f.repo, "sessions.md")} {
		if decision, _ := f.preTool("Write", map[string]any{"file_path": p, "content": "x"}); decision != "" {
			t.Errorf("Write %s: decision %q, want none", p, decision)
		}
	}
}

func TestPreToolUseAllowsAgentCommands(t *testing.T) {
	f := newFixture(t)
	if decision, reason := f.preTool("Bash", map[string]any{"command": "pickup done 2026-11-22_09-15-03"}); decision != "allow" || !strings.Contains(reason, "pickup done") {
		t.Errorf("pickup done: %q %q, want allow", decision, reason)
	}
	if decision, _ := f.preTool("Bash", map[string]any{"command": "pickup reap --stale 0s"}); decision != "" {
		t.Errorf("pickup reap: %q, want no decision", decision)
	}
	if decision, _ := f.preTool("Read", map[string]any{"file_path": f.board.Dir + "/todo/x.md"}); decision != "" {
		t.Errorf("Read of a board file: %q, want no decision (reading is fine)", decision)
	}
}

func TestAgentCommand(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		want bool
	}{
		{"pickup next", true},
		{"pickup claim 2026-11-22_09-15-03", true},
		{"pickup done 2026-11-22_09-15-03", true},
		{"pickup release --all", true},
		{"pickup show ID", true},
		{"pickup list --mine", true},
		{"pickup --json list --state todo", true},
		{"pickup --dir .spx/sessions next", true},
		{"pickup --dir=/b next", true},
		{"pickup new --priority high --title 'Fix the parser' notes.md", true},
		{`pickup new --title "Fix it" notes.md`, true},
		{"pickup heartbeat", true},
		{"pickup status", true},
		{"pickup log --last 20", true},
		{"pickup lock acquire repo:main --wait 10m", true},
		{"pickup lock check repo:main", true},
		{"pickup lock release repo:main", true},
		{"  pickup   next  ", true},

		{"pickup lock release repo:main --force", false},
		{"pickup lock release --force=true repo:main", false},
		{"pickup lock cleanup --stale 0s", false},
		{"pickup lock run repo:main -- git push", false}, // would approve git push
		{"pickup lock list", false},
		{"pickup reap --stale 1s", false},
		{"pickup doctor --fix", false},
		{"pickup doctor", false},
		{"pickup init --claude", false},
		{"pickup requeue --all", false},
		{"pickup --owner other done X", false},
		{"pickup done X --owner=other", false},
		{"pickup --pid 1 next", false},
		{"pickup", false},
		{"pickup --json", false},
		{"pickup next && rm -rf .spx", false},
		{"pickup next; rm x", false},
		{"pickup next | sh", false},
		{"pickup show $(rm x)", false},
		{"pickup show `rm x`", false},
		{`pickup show "$HOME"`, false},
		{"pickup new - <<'EOF'\nx\nEOF", false},
		{"pickup next > /etc/passwd", false},
		{"pickup next\nrm x", false},
		{"pickup show 'unterminated", false},
		{"pickup show ~/x", false},
		{"pickup show *", false},
		{"PICKUP_OWNER=x pickup next", false},
		{"./pickup next", false},
		{"pickups next", false},
		{"echo pickup next", false},
	} {
		if _, got := agentCommand(tc.cmd); got != tc.want {
			t.Errorf("agentCommand(%q) = %v, want %v", tc.cmd, got, tc.want)
		}
	}
}

// A pickup older than the installer needs says so, where Claude puts it
// in the context, and does nothing else.
func TestHookNeedsANewerPickup(t *testing.T) {
	f := newFixture(t)
	h := f.hooks()
	h.Need, h.Version = Protocol+1, "v9.9.9"
	if err := h.Run("session-start", strings.NewReader(f.hookJSON("SessionStart", sessA, nil))); err != nil {
		t.Fatal(err)
	}
	if out := f.stdout.String(); !strings.Contains(out, "older than") || !strings.Contains(out, UpgradeWays) {
		t.Errorf("printed %q", out)
	}
	if _, ok := f.lease(sessA); ok {
		t.Error("a hook that needs a newer pickup registered a lease")
	}
	h = f.hooks()
	h.Need = Protocol
	if err := h.Run("session-start", strings.NewReader(f.hookJSON("SessionStart", sessA, nil))); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.lease(sessA); !ok {
		t.Error("--need of this protocol: no lease")
	}
}

// A board found through a link (a working directory under /tmp that is a
// link, say) is the same board as its real path.
func TestPreToolUseBoardThroughALink(t *testing.T) {
	f := newFixture(t)
	link := filepath.Join(t.TempDir(), "repo-link")
	if err := os.Symlink(f.repo, link); err != nil {
		t.Fatal(err)
	}
	h := f.hooks()
	h.BoardDir = func(string) (string, error) { return filepath.Join(link, boardRel), nil }
	in := f.hookJSON("PreToolUse", sessA, map[string]any{"tool_name": "Write",
		"tool_input": map[string]any{"file_path": filepath.Join(f.board.Dir, "todo", "x.md"), "content": "x"}})
	if err := h.Run("pre-tool-use", strings.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(f.stdout.String(), `"permissionDecision":"deny"`) {
		t.Errorf("a write to the board's real path, the board found through a link: %q, want deny", f.stdout.String())
	}
}

// resolveExisting resolves the links of the part of a path that exists and
// keeps the rest as written, however many names of it are missing.
func TestResolveExisting(t *testing.T) {
	real, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(real, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(real, "dangling")
	if err := os.Symlink(filepath.Join(real, "nowhere"), dangling); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ path, want string }{
		{filepath.Join(link, "dir"), filepath.Join(real, "dir")},
		{filepath.Join(link, "dir", "x.md"), filepath.Join(real, "dir", "x.md")},
		{filepath.Join(link, "new", "deeper", "x.md"), filepath.Join(real, "new", "deeper", "x.md")},
		{filepath.Join(link, "dangling", "x.md"), filepath.Join(real, "dangling", "x.md")},
		{"/nonexistent-pickup-test/a/b", "/nonexistent-pickup-test/a/b"},
	}
	for _, tt := range tests {
		if got := resolveExisting(tt.path); got != tt.want {
			t.Errorf("resolveExisting(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
}

// preToolDecision is the JSON a PreToolUse hook prints to decide.
type preToolDecision struct {
	HookSpecificOutput struct {
		HookEventName            string `json:"hookEventName"`
		PermissionDecision       string `json:"permissionDecision"`
		PermissionDecisionReason string `json:"permissionDecisionReason"`
	} `json:"hookSpecificOutput"`
}

// decisionJSON writes what json.Encoder writes for a preToolDecision.
func TestDecisionJSON(t *testing.T) {
	reasons := []string{
		"",
		"pickup next: an agent's own pickup command",
		boardFileReason("Edit", "/repo/.spx/sessions/todo/a<b>&c.md", "/repo/.spx/sessions"),
		"quotes \" and \\ backslashes, tab\t, newline\n, bell\a, \u2028\u2029, é, \xff invalid",
	}
	for _, decision := range []string{"allow", "deny"} {
		for _, reason := range reasons {
			var out preToolDecision
			out.HookSpecificOutput.HookEventName = "PreToolUse"
			out.HookSpecificOutput.PermissionDecision = decision
			out.HookSpecificOutput.PermissionDecisionReason = reason
			var want bytes.Buffer
			if err := json.NewEncoder(&want).Encode(out); err != nil {
				t.Fatal(err)
			}
			if got := decisionJSON(decision, reason); string(got) != want.String() {
				t.Errorf("decisionJSON(%q, %q) =\n%s\nwant\n%s", decision, reason, got, want.String())
			}
		}
	}
}
