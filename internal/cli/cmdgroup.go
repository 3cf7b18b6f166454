package cli

// What `work` and `lock run` share about the commands they start: the
// watchdog that kills them if pickup dies (internal/lifeline), and job
// control. Each command leads a process group of its own, so that it and
// everything it starts can be signalled and killed together; the price is
// that a terminal's Ctrl-C and Ctrl-Z, which go to pickup's group, no
// longer reach the commands by themselves: pickup passes them on.

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/pickup-dev/pickup/internal/lifeline"
	"golang.org/x/sys/unix"
)

// startLifeline starts the watchdog for the commands pickup is about to
// run. If it cannot start, the commands run anyway (refusing would stop
// pickup from working where it worked before, in a sandbox without /proc
// say): pickup says what they then lack, and returns nil, with which
// lifeline still gives them process groups and PR_SET_PDEATHSIG.
func (r *run) startLifeline(what string) *lifeline.Lifeline {
	if r.env.Lifeline == nil {
		return nil
	}
	l, err := r.env.Lifeline()
	if err != nil {
		fmt.Fprintf(r.env.Stderr, "pickup: %s: %v; running commands without it: if pickup is killed with SIGKILL, what they started may keep running\n", what, err)
		return nil
	}
	return l
}

// endGroup cleans up after a command whose first process has exited and
// been waited for: whatever it left behind in its group is killed before
// the run counts as over.
func (r *run) endGroup(g *lifeline.Group, what string) {
	if err := g.End(); err != nil {
		fmt.Fprintf(r.env.Stderr, "pickup: %s: %v\n", what, err)
	}
}

// controllingTTY opens pickup's controlling terminal, or returns nil if it
// has none.
func controllingTTY() *os.File {
	// O_NOCTTY: opening must never make /dev/tty this process's terminal.
	fd, err := unix.Open("/dev/tty", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	return os.NewFile(uintptr(fd), "/dev/tty")
}

// foregroundGroup is tty's foreground process group, or -1.
func foregroundGroup(tty *os.File) int {
	pgrp, err := unix.IoctlGetInt(int(tty.Fd()), unix.TIOCGPGRP)
	if err != nil {
		return -1
	}
	return pgrp
}

// setForeground makes pgrp tty's foreground group. Called from a
// background group (pickup's, while its command has the terminal), that
// would stop pickup with SIGTTOU: it is ignored meanwhile. (Not for longer:
// commands would inherit the ignoring.)
func setForeground(tty *os.File, pgrp int) error {
	signal.Ignore(syscall.SIGTTOU)
	defer signal.Reset(syscall.SIGTTOU)
	return unix.IoctlSetPointerInt(int(tty.Fd()), unix.TIOCSPGRP, pgrp)
}

// jobControl stops pickup as a shell expects of a job after Ctrl-Z, and
// tells when it is continued.
type jobControl struct {
	cont chan os.Signal
}

func newJobControl() *jobControl {
	j := &jobControl{cont: make(chan os.Signal, 1)}
	signal.Notify(j.cont, syscall.SIGCONT)
	return j
}

func (j *jobControl) close() { signal.Stop(j.cont) }

// stopSelf stops pickup and returns once it is continued (fg or bg in the
// shell). The caller stops its command groups first and continues them
// after: they are not in pickup's group, so the shell's SIGCONT misses
// them.
func (j *jobControl) stopSelf() {
	for len(j.cont) > 0 {
		<-j.cont
	}
	// SIGSTOP to pickup alone: the terminal's SIGTSTP reached the rest of
	// its group already, and a SIGTSTP sent to pickup by hand was meant for
	// pickup alone.
	if err := syscall.Kill(os.Getpid(), syscall.SIGSTOP); err != nil {
		return // not stopped: no SIGCONT to wait for
	}
	<-j.cont
}

// leaderExit is how a command's first process ended.
type leaderExit struct {
	ws  syscall.WaitStatus
	err error
}

// waitLeader waits for the first process of a command, pid, reporting each
// time it stops on stopped (and waiting on resumed before it waits again),
// and its end on exited. Unlike exec.Cmd.Wait it sees stops: a command
// stopped by Ctrl-Z or by reading the terminal from the background must
// stop pickup too, or the shell would wait for pickup forever.
func waitLeader(pid int, exited chan<- leaderExit, stopped chan<- struct{}, resumed <-chan struct{}) {
	for {
		var ws syscall.WaitStatus
		_, err := syscall.Wait4(pid, &ws, syscall.WUNTRACED, nil)
		switch {
		case err == syscall.EINTR:
			continue
		case err == nil && ws.Stopped():
			stopped <- struct{}{}
			<-resumed
			continue
		}
		exited <- leaderExit{ws: ws, err: err}
		return
	}
}
