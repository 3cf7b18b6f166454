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
// wait on, the descriptor to report an exec failure on, the command's path,
// and its arguments, argv[0] first. It returns only if the command does not
// run.
func gate(args []string, diag io.Writer) int {
	if len(args) < 4 {
		fmt.Fprintf(diag, "pickup %s: internal command; pickup runs it to start commands\n", ArgGate)
		return 2
	}
	fd, err1 := strconv.Atoi(args[0])
	status, err2 := strconv.Atoi(args[1])
	if err1 != nil || err2 != nil || fd < 3 || status < 3 {
		fmt.Fprintf(diag, "pickup %s: bad descriptors %q %q\n", ArgGate, args[0], args[1])
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
	// The status pipe closes when the exec succeeds; pickup reads end of
	// file then, and the command never sees the descriptor.
	syscall.CloseOnExec(status)
	err = syscall.Exec(args[2], args[3:], os.Environ())
	// The command never ran: pickup reads why from the status pipe (an
	// exit status cannot tell: a command may exit 127 itself). The exit
	// status is still a shell's, 127 for a command that is not there and
	// 126 for one that cannot run, for whoever looks at that alone.
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		errno = syscall.ENOEXEC
	}
	if _, werr := syscall.Write(status, strconv.AppendInt(nil, int64(errno), 10)); werr != nil {
		fmt.Fprintf(diag, "pickup: run %s: %v\n", args[2], err)
	}
	if errno == syscall.ENOENT {
		return 127
	}
	return 126
}
