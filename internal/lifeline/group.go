package lifeline

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// ErrSurvived reports a process group that still had live processes after
// SIGKILL and a wait (a process in uninterruptible sleep).
var ErrSurvived = errors.New("process group still has live processes after SIGKILL")

// emptyTimeout bounds each wait for a killed group to empty. SIGKILLed
// processes are gone within milliseconds unless the kernel holds them in
// uninterruptible sleep, which no wait can shorten.
const emptyTimeout = 5 * time.Second

// Group is the process group of one command that pickup started.
type Group struct {
	l    *Lifeline
	pgid int
	// path is the command's; status reads what its gate reports if it
	// cannot exec it (nil without a gate).
	path   string
	status *os.File
	once   sync.Once
	// startErr is what status said, read once.
	startErr error
}

// Start starts cmd as the leader of a new process group that dies with
// pickup. cmd.SysProcAttr may be set already (Foreground, for a terminal);
// Start adds what it needs. After cmd's leader has exited and been waited
// for, call End.
//
// The group must be listed with the watchdog before the command can start
// a process of its own, or a pickup killed in between would leave that
// process running: listing it after cmd.Start returns is not enough, as
// the command runs from its exec on and pickup may be slow to write. So
// the process starts as a gate, pickup's executable run with ArgGate,
// which waits on a pipe until pickup has listed its group and then execs
// the command in its place: same process, same group, the command's own
// argv[0]. If pickup dies first, the gate reads end of file and the
// command never runs. On Linux the kernel also kills the leader if pickup
// dies (PR_SET_PDEATHSIG), which is all a nil *Lifeline gives.
func (l *Lifeline) Start(cmd *exec.Cmd) (*Group, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pgid = 0 // a new group, its id the leader's pid
	setDeathSignal(cmd.SysProcAttr)
	if l == nil {
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		return &Group{pgid: cmd.Process.Pid}, nil
	}
	if cmd.Err != nil {
		return nil, cmd.Err // the command was not found: nothing to gate
	}
	wait, open, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	defer open.Close()
	// The gate's report of an exec that failed; it is not the command's.
	status, report, err := os.Pipe()
	if err != nil {
		wait.Close()
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	path, args, extra := cmd.Path, cmd.Args, cmd.ExtraFiles
	files, waitFD, reportFD, closeCopies := gateFiles(extra, wait, report)
	cmd.Path = l.exe
	cmd.Args = append([]string{l.argv0, ArgGate, strconv.Itoa(waitFD), strconv.Itoa(reportFD), path}, args...)
	cmd.ExtraFiles = files
	err = cmd.Start()
	closeCopies()
	wait.Close()
	report.Close()                                         // the gate's alone now: end of file once it execs or exits
	cmd.Path, cmd.Args, cmd.ExtraFiles = path, args, extra // as the caller made it
	if err != nil {
		status.Close()
		return nil, err
	}
	g := &Group{l: l, pgid: cmd.Process.Pid, path: path, status: status}
	l.send('+', g.pgid)
	// The gate may be gone already (a signal): then there is nothing to
	// open.
	_, _ = open.Write([]byte{gateOpen})
	return g, nil
}

// gateOpen is what a gate waits for.
const gateOpen = 'g'

// StartErr tells whether the command itself ran: nil if it did, or if
// that cannot be told (no watchdog: then Start itself returned such an
// error), else a *fs.PathError (Op "exec") whose Err is the errno of the
// gate's failed exec: syscall.ENOENT for a command that is not there,
// EACCES for one that is not executable, ENOEXEC for one the system cannot
// run. The gate then exits 127 or 126 as a shell would, but a command may
// exit so itself: only StartErr tells the two apart. Call it once the
// leader has exited and been waited for.
func (g *Group) StartErr() error {
	g.once.Do(func() {
		if g.status == nil {
			return
		}
		defer g.status.Close()
		data, err := io.ReadAll(g.status)
		if err != nil || len(data) == 0 {
			return // it ran (end of file at its exec)
		}
		n, err := strconv.Atoi(string(data))
		if err != nil {
			g.startErr = &fs.PathError{Op: "exec", Path: g.path, Err: fmt.Errorf("the gate reported %q", data)}
			return
		}
		g.startErr = &fs.PathError{Op: "exec", Path: g.path, Err: syscall.Errno(n)}
	})
	return g.startErr
}

// PGID is the group's id, the pid of its leader.
func (g *Group) PGID() int { return g.pgid }

// Signal sends sig to every process of the group. A group that is empty
// already is not an error.
func (g *Group) Signal(sig syscall.Signal) error {
	return signalGroup(g.pgid, sig)
}

// End kills whatever is left of the group (processes the command started
// and left behind) and waits until nothing of it runs, then takes it off
// the watchdog's list. Call it once the leader has been waited for: until
// then the leader, a zombie, keeps the group's id from being reused.
// If the group does not empty within a few seconds, End returns an error
// wrapping ErrSurvived and the watchdog keeps it listed, to kill it again
// when pickup exits.
func (g *Group) End() error {
	_ = g.StartErr() // reads what is left of the gate's report and closes it
	if err := signalGroup(g.pgid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("end process group %d: %w", g.pgid, err)
	}
	if !awaitEmpty(g.pgid, time.Now().Add(emptyTimeout)) {
		return fmt.Errorf("end process group %d: %w", g.pgid, ErrSurvived)
	}
	g.l.send('-', g.pgid)
	return nil
}

// signalGroup is kill(-pgid, sig), with ESRCH (no process left in the
// group) as success. pgid 0 and 1 would address pickup's own group and
// every process there is: never.
func signalGroup(pgid int, sig syscall.Signal) error {
	if pgid <= 1 {
		return fmt.Errorf("signal process group %d: invalid group", pgid)
	}
	for {
		err := syscall.Kill(-pgid, sig)
		switch {
		case err == nil || errors.Is(err, syscall.ESRCH):
			return nil
		case !errors.Is(err, syscall.EINTR):
			return err
		}
	}
}

// awaitEmpty polls, more and more slowly, until no live process is left in
// group pgid or deadline passes; it reports whether the group is empty.
func awaitEmpty(pgid int, deadline time.Time) bool {
	pause := time.Millisecond
	for {
		if !groupAlive(pgid) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pause)
		pause = min(2*pause, 50*time.Millisecond)
	}
}

// groupAlive reports whether group pgid has a process that is not a
// zombie. kill(-pgid, 0) answers for most groups at once; zombies count as
// members there, and an orphan's zombie waits for init to reap it, which
// some inits (in containers) do only every few seconds: hasLiveMember
// looks closer where it can.
func groupAlive(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	return hasLiveMember(pgid)
}
