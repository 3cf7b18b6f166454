package claudee2e

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
)

var mcpBuild struct {
	once sync.Once
	err  error
}

// mcpServerBinary builds pickup-mcp beside the test's pickup, where `pickup
// mcp` finds it.
func mcpServerBinary(t *testing.T) {
	t.Helper()
	exe := pickupBinary(t)
	mcpBuild.once.Do(func() {
		out, err := exec.Command("go", "build", "-race=false", "-o", filepath.Join(filepath.Dir(exe), "pickup-mcp"),
			"github.com/pickup-dev/pickup/internal/cmd/pickup-mcp").CombinedOutput()
		if err != nil {
			mcpBuild.err = fmt.Errorf("go build pickup-mcp: %v\n%s", err, out)
		}
	})
	if mcpBuild.err != nil {
		t.Fatal(mcpBuild.err)
	}
}

// mcpProject is a repository with a board and no hooks, where Claude Code
// has pickup's MCP server, added as the docs say.
func mcpProject(t *testing.T) *project {
	claudeBinary(t) // fail or skip before building anything
	mcpServerBinary(t)
	p := newProject(t, plugin)
	p.claudeArgs = nil // pickup init only: the agent reaches pickup by MCP alone
	add := exec.Command(claudeBinary(t), "mcp", "add", "pickup", "--", "pickup", "mcp")
	add.Dir = p.root
	add.Env = append(append([]string(nil), p.env...), "CLAUDE_CONFIG_DIR="+filepath.Join(p.home, ".claude"))
	if out, err := add.CombinedOutput(); err != nil {
		t.Fatalf("claude mcp add: %v\n%s", err, out)
	}
	return p
}

// TestMCPNextAndDone: pickup's MCP server added to the real Claude Code
// with `claude mcp add pickup -- pickup mcp`, in a repository with no
// hooks; a scripted model calls the server's next tool, then its done
// tool. The session is claimed by that connection's own owner (named
// after Claude Code), held by it while the model works, and finished
// exactly once.
func TestMCPNextAndDone(t *testing.T) {
	p := mcpProject(t)
	ids := p.seed("Fix the parser", "Write the docs")

	var mu sync.Mutex
	var heldBy, claimedText string
	idPattern := regexp.MustCompile(`claimed (\S+) \[`)
	api := newStubAPI(t, "mcp",
		step{Tool: "mcp__pickup__next", Input: map[string]any{}},
		step{Then: func(prev toolResult) step {
			m := idPattern.FindStringSubmatch(prev.Content)
			if prev.IsError || m == nil {
				return step{Text: "The claim failed; stopping."}
			}
			// While the model works: who holds the session on the board.
			out, _ := exec.Command(pickupBinary(t), "--dir", p.board, "show", "--json", m[1]).Output()
			var s struct{ State, Owner string }
			_ = json.Unmarshal(out, &s)
			mu.Lock()
			heldBy, claimedText = s.State+" by "+s.Owner, prev.Content
			mu.Unlock()
			return step{Tool: "mcp__pickup__done", Input: map[string]any{"id": m[1]}}
		}},
		stop)
	c := p.startClaude("mcp", api, claudeOpts{args: []string{"--allowedTools", "mcp__pickup__next mcp__pickup__done"}})
	c.prompt("Take the next pickup session and finish it.")
	c.end()
	requireScriptFollowed(t, api)

	results := api.Results()
	if len(results) != 2 || results[0].IsError || results[1].IsError {
		t.Fatalf("tool results: %v", results)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(claimedText, "claimed "+ids[0]+" [") {
		t.Fatalf("next claimed %q, want %s first", claimedText, ids[0])
	}
	owner := strings.TrimPrefix(heldBy, "doing by ")
	if !strings.HasPrefix(heldBy, "doing by ") || !regexp.MustCompile(`^claude-code-mcp-[0-9a-f]{8}$`).MatchString(owner) {
		t.Fatalf("while the model worked, %s was %q; want doing by claude-code-mcp-XXXXXXXX", ids[0], heldBy)
	}
	if !strings.Contains(results[1].Content, "done "+ids[0]) {
		t.Fatalf("done answered %q", results[1].Content)
	}
	p.requireState(ids[0], "done", "after the model called done")
	p.requireState(ids[1], "todo", "the other session")
	log := p.pickupOK("", "log", ids[0])
	// TIME ID OP FROM TO OWNER: one line whose OP is done.
	if n := len(regexp.MustCompile(`(?m)^\S+\s+\S+\s+done\s`).FindAllString(log, -1)); n != 1 || !strings.Contains(log, owner) {
		t.Fatalf("%s's history has %d done (want 1), by %s:\n%s", ids[0], n, owner, log)
	}
}

// TestMCPKilledClaudeGivesBack: Claude Code killed with SIGKILL (its MCP
// server left to notice by itself) while its connection holds a session:
// the very next next of another owner gets it.
func TestMCPKilledClaudeGivesBack(t *testing.T) {
	p := mcpProject(t)
	ids := p.seed("Fix the parser")
	api := newStubAPI(t, "killed", step{Tool: "mcp__pickup__next", Input: map[string]any{}}, stop)
	c := p.startClaude("killed", api, claudeOpts{args: []string{"--allowedTools", "mcp__pickup__next"}})
	c.prompt("Take the next pickup session.")
	state, owner := p.where(ids[0])
	if state != "doing" || !strings.HasPrefix(owner, "claude-code-mcp-") {
		t.Fatalf("after next, %s is %s by %q", ids[0], state, owner)
	}
	c.signal(syscall.SIGKILL) // Claude Code alone, not its process group
	c.wait("SIGKILL")
	out := p.pickupOK("bob", "next")
	if !strings.Contains(out, "claimed "+ids[0]) {
		t.Fatalf("right after Claude Code was killed, next: %s\n%s", out, p.boardTree())
	}
	requireScriptFollowed(t, api)
}
