package mcpserver_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The test binary run with agentEnv set is an agent: it starts `pickup
// mcp` in its working directory, claims the next session through it,
// prints "ID SERVER-PID SLEEPER-PID" and waits to be killed. With
// lingerEnv=true it first hands the write end of the server's standard
// input to a sleeping child, so that the server's input stays open after
// the agent dies: a server left running with no client.
const (
	agentEnv  = "PICKUP_MCP_TEST_AGENT"
	lingerEnv = "PICKUP_MCP_TEST_LINGER"
)

func agentMain() int {
	fail := func(err error) int { fmt.Fprintln(os.Stderr, "agent:", err); return 1 }
	inR, inW, err := os.Pipe()
	if err != nil {
		return fail(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return fail(err)
	}
	server := exec.Command("pickup", "mcp")
	server.Stdin, server.Stdout, server.Stderr = inR, outW, os.Stderr
	if err := server.Start(); err != nil {
		return fail(err)
	}
	inR.Close()
	outW.Close()
	sleeper := 0
	if os.Getenv(lingerEnv) == "true" {
		sleep := exec.Command("sleep", "100000")
		sleep.ExtraFiles = []*os.File{inW} // fd 3: the server's input stays open
		if err := sleep.Start(); err != nil {
			return fail(err)
		}
		sleeper = sleep.Process.Pid
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "killed-agent", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		return fail(err)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "next"})
	if err != nil {
		return fail(err)
	}
	sc, _ := res.StructuredContent.(map[string]any)
	id, _ := sc["id"].(string)
	if id == "" {
		return fail(fmt.Errorf("next claimed nothing: %+v", res))
	}
	fmt.Printf("%s %d %d\n", id, server.Process.Pid, sleeper)
	select {} // until SIGKILL
}
