// Command linkfloor links every package pickup's command links and exits as
// soon as main starts: scripts/bench times it (built with pickup's tags) as
// the cost of starting pickup's executable before it does anything — the Go
// runtime, loading a binary of that size and the init of every package,
// urfave/cli, yaml and toml included. What a pickup process costs above it
// is pickup's own work.
package main

import _ "github.com/pickup-dev/pickup/internal/cli"

func main() {}
