// Command pickup-postgres is pickup's helper for boards that PostgreSQL
// arbitrates (pickup init --shared postgres://…). pickup starts it and
// speaks a line protocol with it (see internal/arbiter/postgres): it keeps pgx, and
// with it package net, out of the pickup binary that hooks start at every
// tool call. It is not meant to be run by hand.
//
// Without arguments it serves its standard input and output on a
// connection of its own and exits when its input ends. With --serve
// SOCKET URL it is the machine's daemon for that database: it serves every
// pickup process on the unix socket with a pool of connections, and exits
// after --idle without a client or when the socket is removed.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/pickup-dev/pickup/internal/arbiter/postgres/pgserver"
)

func main() {
	serve := flag.String("serve", "", "serve pickup processes on this unix socket (a daemon)")
	idle := flag.Duration("idle", 60*time.Second, "with --serve: exit after this long without a client")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "pickup-postgres: pickup's PostgreSQL helper; pickup starts it (see `pickup help postgres`)")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *serve != "" {
		if flag.NArg() != 1 {
			flag.Usage()
			os.Exit(2)
		}
		pgserver.Detach()
		d := &pgserver.Daemon{Socket: *serve, URL: flag.Arg(0), Idle: *idle}
		if err := d.Run(); err != nil && !errors.Is(err, pgserver.ErrRunning) {
			fmt.Fprintf(os.Stderr, "pickup-postgres: %v\n", err)
			os.Exit(1)
		}
		return
	}
	if flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := pgserver.Serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "pickup-postgres: %v\n", err)
		os.Exit(1)
	}
}
