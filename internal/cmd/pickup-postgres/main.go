// Command pickup-postgres is pickup's helper for boards that PostgreSQL
// arbitrates (pickup init --shared postgres://…). pickup starts it and
// speaks a line protocol with it on its standard input and output (see
// internal/pgboard): it keeps pgx, and with it package net, out of the
// pickup binary that hooks start at every tool call. It is not meant to be
// run by hand; it exits when its standard input ends.
package main

import (
	"fmt"
	"os"

	"github.com/pickup-dev/pickup/internal/pgboard/pgserver"
)

func main() {
	if len(os.Args) > 1 {
		fmt.Fprintln(os.Stderr, "pickup-postgres: pickup's PostgreSQL helper; pickup starts it (see `pickup help postgres`)")
		os.Exit(2)
	}
	if err := pgserver.Serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "pickup-postgres: %v\n", err)
		os.Exit(1)
	}
}
