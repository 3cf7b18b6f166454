package mcpe2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The test binary run with agentEnv set is an agent: it starts `pickup
// mcp` (by name, from PATH) in its working directory, claims the next
// session through it, prints "ID OWNER SERVER-PID" and waits to be killed.
const agentEnv = "PICKUP_MCPE2E_AGENT"

func agentMain() int {
	fail := func(err error) int { fmt.Fprintln(os.Stderr, "agent:", err); return 1 }
	server := exec.Command("pickup", "mcp")
	server.Stderr = os.Stderr
	cl := mcp.NewClient(&mcp.Implementation{Name: "killed-agent", Version: "1"}, nil)
	cs, err := cl.Connect(context.Background(), &mcp.CommandTransport{Command: server}, nil)
	if err != nil {
		return fail(err)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "next"})
	if err != nil {
		return fail(err)
	}
	sc, _ := res.StructuredContent.(map[string]any)
	id, _ := sc["id"].(string)
	owner, _ := sc["owner"].(string)
	if id == "" || owner == "" {
		return fail(fmt.Errorf("next claimed nothing: %+v", sc))
	}
	fmt.Printf("%s %s %d\n", id, owner, server.Process.Pid)
	select {} // until SIGKILL
}
