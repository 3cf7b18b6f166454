package lifeline

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"syscall"
	"time"
)

// RunRole runs the watchdog or a gate when args (a process's os.Args) say
// this process was started as one, and returns its exit code with ok true;
// otherwise it does nothing and returns ok false. Every executable that can
// start them (one whose code calls Start: pickup, and test binaries that run
// pickup in-process) calls it first thing in main or TestMain, before it
// looks at any argument: see internal/roles.
func RunRole(args []string) (code int, ok bool) {
	if len(args) < 2 {
		return 0, false
	}
	switch args[1] {
	case Arg:
		return watchdog(os.Stdin, os.Stdout, os.Stderr), true
	case ArgGate:
		return gate(args[2:], os.Stderr), true
	}
	return 0, false
}

// watchdog is the watchdog's main: it reads the group list from in until
// end of file, then kills every group still listed. It reports ready on
// ready before reading. Problems go to diag.
func watchdog(in *os.File, ready *os.File, diag io.Writer) int {
	// A Ctrl-C, a hangup or a kill of pickup's process group must not end
	// the watchdog before it has done its work: it is in a group of its own,
	// and ignores the signals that end or stop a process by default.
	// SIGPIPE: diag may be a pipe whose reader is gone.
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGPIPE,
		syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU)
	if fi, err := in.Stat(); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		// Run by hand, say: a terminal is not pickup's pipe.
		fmt.Fprintf(diag, "pickup %s: internal command; pickup runs it with a pipe as its standard input\n", Arg)
		return 2
	}
	if _, err := ready.Write([]byte{readyByte}); err != nil {
		// pickup is gone already; what it listed, if anything, is in the pipe.
		fmt.Fprintf(diag, "pickup: watchdog: report ready: %v\n", err)
	}
	ready.Close()
	groups := readGroups(in, diag)
	if len(groups) == 0 {
		return 0
	}
	return killAll(groups, diag)
}

// readGroups reads "+PGID" and "-PGID" lines until end of file and returns
// the groups listed and not unlisted.
func readGroups(in io.Reader, diag io.Writer) map[int]bool {
	groups := map[int]bool{}
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || (line[0] != '+' && line[0] != '-') {
			fmt.Fprintf(diag, "pickup: watchdog: ignoring the line %q\n", line)
			continue
		}
		pgid, err := strconv.Atoi(line[1:])
		if err != nil || pgid <= 1 {
			fmt.Fprintf(diag, "pickup: watchdog: ignoring the line %q\n", line)
			continue
		}
		if line[0] == '+' {
			groups[pgid] = true
		} else {
			delete(groups, pgid)
		}
	}
	if err := sc.Err(); err != nil {
		// A read error is no end of file, but the pipe can tell no more:
		// pickup's commands must not run on unwatched.
		fmt.Fprintf(diag, "pickup: watchdog: read: %v\n", err)
	}
	return groups
}

// killAll sends SIGKILL to every group and waits until all are empty;
// it returns 1 if one did not empty in time.
func killAll(groups map[int]bool, diag io.Writer) int {
	pgids := make([]int, 0, len(groups))
	for pgid := range groups {
		pgids = append(pgids, pgid)
		if err := signalGroup(pgid, syscall.SIGKILL); err != nil {
			fmt.Fprintf(diag, "pickup: watchdog: kill process group %d: %v\n", pgid, err)
		}
	}
	sort.Ints(pgids)
	deadline := time.Now().Add(emptyTimeout)
	code := 0
	for _, pgid := range pgids {
		if !awaitEmpty(pgid, deadline) {
			fmt.Fprintf(diag, "pickup: watchdog: process group %d: %v\n", pgid, ErrSurvived)
			code = 1
		}
	}
	return code
}
