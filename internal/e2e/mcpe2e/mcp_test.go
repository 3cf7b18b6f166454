package mcpe2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connect starts `pickup mcp` in the clone, as an agent's MCP
// configuration does (command pickup, argument mcp, in the repository), for
// a client named name, and returns the SDK client's session.
func (c *clone) connect(ctx context.Context, name string) *mcp.ClientSession {
	c.t.Helper()
	cmd := exec.Command(filepath.Join(bin, "pickup"), "mcp")
	cmd.Dir, cmd.Env, cmd.Stderr = c.dir, c.env, os.Stderr
	cl := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil)
	// Close waits this long for the server's exit before it signals:
	// room for a slow machine, never reached by a server that works.
	cs, err := cl.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Minute}, nil)
	if err != nil {
		c.t.Fatalf("%s: connect to pickup mcp: %v", c.name, err)
	}
	c.t.Cleanup(func() { cs.Close() })
	return cs
}

// answer is what a tool call returned: its text and structured content.
type answer struct {
	text    string
	isError bool
	Outcome string `json:"outcome"`
	ID      string `json:"id"`
	State   string `json:"state"`
	Owner   string `json:"owner"`
}

func (a answer) String() string {
	return fmt.Sprintf("outcome %q id %q state %q owner %q error %v: %q", a.Outcome, a.ID, a.State, a.Owner, a.isError, a.text)
}

// call calls tool; a protocol error is returned, a tool error is an
// answer with isError.
func call(ctx context.Context, cs *mcp.ClientSession, tool string, args map[string]any) (answer, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return answer{}, fmt.Errorf("call %s: %w", tool, err)
	}
	var a answer
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			a.text += tc.Text
		}
	}
	a.isError = res.IsError
	if res.StructuredContent != nil {
		data, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(data, &a); err != nil {
			return a, fmt.Errorf("call %s: structured content %s: %w", tool, data, err)
		}
	}
	return a, nil
}
