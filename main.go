// Command pickup lets many processes on one machine, such as several AI
// coding agents side by side, share one backlog of work sessions safely.
// See README.md, `pickup help` and `pickup help topics`.
package main

import (
	"os"

	"github.com/pickup-dev/pickup/internal/cli"
)

func main() {
	os.Exit(cli.Main(cli.OSEnv(), os.Args))
}
