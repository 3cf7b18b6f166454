package cli

import (
	"os"
	"syscall"

	ucli "github.com/urfave/cli/v2"
)

// mcpProgram is the MCP server's executable. It is a program of its own
// (internal/cmd/pickup-mcp) so that the MCP SDK, which links net/http and
// TLS, never links into pickup, which agents' hooks start at every tool
// call.
const mcpProgram = "pickup-mcp"

// mcpInstall is how to install it beside pickup.
const mcpInstall = "go install github.com/pickup-dev/pickup/internal/cmd/pickup-mcp@latest"

// mcpHasTopic: `pickup help mcp` is the mcp topic, which is this command's
// whole manual (see helpTopic).
const mcpHasTopic = "mcp"

func (r *run) mcpCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "mcp",
		Usage:     "serve the board to one agent over MCP (stdio): tools next, claim, done, release, new, list, show",
		UsageText: "pickup mcp    (started by the agent: claude mcp add pickup -- pickup mcp)",
		Description: "An MCP server on standard input and output for agents that take tools by MCP (Claude Code,\n" +
			"Codex, Gemini CLI, Cursor, ...). Each connection is its own owner, named after the client\n" +
			"(claude-code-mcp-3fa85f64), unless --owner or $PICKUP_OWNER names one; its lease follows the\n" +
			"agent that started the server, and its claims come back when the client goes. The board is\n" +
			"found as for every command (--dir, $PICKUP_DIR, the repository's). Setup for each agent, the\n" +
			"tools, owners and limits: pickup help mcp.\n\n" +
			"The server is a program of its own, pickup-mcp, found beside pickup or on $PATH:\n   " +
			mcpInstall,
		Action: func(c *ucli.Context) error {
			if c.NArg() > 0 {
				return usageError("mcp takes no arguments")
			}
			dir, err := r.boardDir()
			if err != nil {
				return err
			}
			prog, ok := findCompanion(r.env.Getenv("PATH"), mcpProgram)
			if !ok {
				return exitError{code: ExitUsage, err: mcpMissing{}}
			}
			args := []string{mcpProgram, "--dir", dir}
			if r.ownerSet || r.owner != "" {
				args = append(args, "--owner", r.owner)
			}
			// Handed over, as git runs git-foo: the same process, so the
			// agent's pipes and the process the lease follows stay.
			return syscall.Exec(prog, args, os.Environ())
		},
	}
}

// mcpMissing: pickup-mcp is neither beside pickup nor on $PATH.
type mcpMissing struct{}

func (mcpMissing) Error() string {
	return "the MCP server " + mcpProgram + " is not installed (looked beside pickup and on $PATH)"
}
func (mcpMissing) Hint() string {
	return "install it beside pickup: " + mcpInstall + " (release archives and npm ship it beside pickup)"
}
