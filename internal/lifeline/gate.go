package lifeline

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"syscall"
)

// gate is the gate's main (see Lifeline.Start): args are the descriptor to
// wait on, the command's path, and its arguments, argv[0] first. It returns
// only if the command does not run.
func gate(args []string, diag io.Writer) int {
	if len(args) < 3 {
		fmt.Fprintf(diag, "pickup %s: internal command; pickup runs it to start commands\n", ArgGate)
		return 2
	}
	fd, err := strconv.Atoi(args[0])
	if err != nil || fd < 3 {
		fmt.Fprintf(diag, "pickup %s: bad descriptor %q\n", ArgGate, args[0])
		return 2
	}
	var b [1]byte
	n, err := syscall.Read(fd, b[:])
	for errors.Is(err, syscall.EINTR) {
		n, err = syscall.Read(fd, b[:])
	}
	syscall.Close(fd) // not the command's
	if n != 1 || b[0] != gateOpen {
		// pickup died before it could list this command's group: the
		// command must not run unwatched. (Nobody is left to read why.)
		return 1
	}
	err = syscall.Exec(args[1], args[2:], os.Environ())
	// As a shell would: 127 for a command that is not there, 126 for one
	// that cannot run.
	fmt.Fprintf(diag, "pickup: run %s: %v\n", args[1], err)
	if errors.Is(err, syscall.ENOENT) {
		return 127
	}
	return 126
}
