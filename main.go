// Command pickup lets many processes on one machine, such as several AI
// coding agents side by side, share one backlog of work sessions safely.
// See README.md, `pickup help` and `pickup help topics`.
package main

import (
	"os"

	"github.com/pickup-dev/pickup/internal/cli"
	"github.com/pickup-dev/pickup/internal/roles"
)

func main() {
	// pickup starts itself again as a watchdog or a gate, and git starts
	// it as its proxy: those hidden roles come before any argument parsing.
	if code, ok := roles.Run(os.Args); ok {
		os.Exit(code)
	}
	os.Exit(cli.Main(cli.OSEnv(), os.Args))
}
