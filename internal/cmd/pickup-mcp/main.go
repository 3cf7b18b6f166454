// Command pickup-mcp is pickup's MCP server over stdio: `pickup mcp` hands
// over to it (as git runs git-foo), so that the MCP SDK and the network
// code it links never load into the pickup that agents' hooks start at
// every tool call. It serves one board to one client; see `pickup help mcp`.
//
// Install it beside pickup:
//
//	go install github.com/pickup-dev/pickup/internal/cmd/pickup-mcp@latest
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pickup-dev/pickup/internal/boardloc"
	"github.com/pickup-dev/pickup/internal/mcpserver"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

// Exit codes, as pickup's: 1 an error, 2 a usage error.
func run(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("pickup mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "", "the board directory (default: $PICKUP_DIR, else the repository's .spx/sessions)")
	owner := fs.String("owner", "", "the owner of every claim (default: $PICKUP_OWNER, else one per connection)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "pickup: error: mcp takes no arguments\n")
		return 2
	}
	dirSet := false
	fs.Visit(func(f *flag.Flag) { dirSet = dirSet || f.Name == "dir" })
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(stderr, "pickup: error: %v\n", err)
		return 1
	}
	board, err := boardloc.Find(*dir, dirSet, os.Getenv, wd)
	if err != nil {
		fmt.Fprintf(stderr, "pickup: error: %v\n", err)
		return 2
	}
	if *owner == "" {
		*owner = os.Getenv("PICKUP_OWNER")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go watchParent(ctx, cancel)
	cfg := mcpserver.Config{Dir: board, Owner: *owner, Version: version(), Log: stderr}
	if err := mcpserver.Run(ctx, cfg, &mcp.StdioTransport{}); err != nil {
		fmt.Fprintf(stderr, "pickup: error: mcp: %v\n", err)
		return 1
	}
	return 0
}

// watchParent ends the server when the process that started it is gone
// (it was reparented), even if its standard input is still open in some
// other process: a server with no client gives back and exits.
func watchParent(ctx context.Context, cancel context.CancelFunc) {
	parent := os.Getppid()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if os.Getppid() != parent {
				cancel()
				return
			}
		}
	}
}

// version is the module version go install recorded, else "devel".
func version() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "devel"
}
