package cli

// pickup lock run, once the lock is taken: run the command in a process
// group of its own that dies with pickup, with the terminal if pickup has
// it, heartbeat the lock meanwhile, and pass signals and job control on.

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"golang.org/x/sys/unix"
)

// run runs argv holding the lock info, then releases it.
func (lr *lockRunner) run(info claim.LockInfo, argv []string, sigs <-chan os.Signal) error {
	r := lr.r
	release := func() error {
		err := lr.locks.Unlock(lr.key, info.Token)
		if err != nil && (errors.Is(err, claim.ErrNotHolder) || errors.Is(err, claim.ErrLockNotHeld)) {
			return nil // reported as lost by the heartbeat, or lost at the very end
		}
		return err
	}
	ll := r.startLifeline("lock run")
	defer ll.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), envLockKey+"="+lr.key)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = r.rawEnv().Stdin, r.rawEnv().Stdout, r.rawEnv().Stderr // the command's own output
	// In the foreground of a terminal, the command's group gets the
	// terminal (in the child, before exec: no read can come first). In the
	// background it would be stopped as soon as it read from the terminal,
	// git asking for a password say; and the terminal's Ctrl-C and Ctrl-Z
	// reach it directly, as they would without pickup.
	var tty *os.File
	if r.env.TTY != nil {
		tty = r.env.TTY()
	}
	if tty != nil {
		defer tty.Close()
		if foregroundGroup(tty) == unix.Getpgrp() {
			cmd.SysProcAttr = &syscall.SysProcAttr{Foreground: true, Ctty: int(tty.Fd())}
		}
	}
	g, err := ll.Start(cmd)
	if err != nil {
		_ = release()
		code := 126
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			code = 127
		}
		return exitError{code: code, err: fmt.Errorf("lock run: %w", err)}
	}
	// takeTerminal gives the terminal back to pickup's group if the
	// command's group has it; handTerminal gives it to the command's group
	// if pickup's group has it.
	takeTerminal := func() {
		if tty != nil && foregroundGroup(tty) == g.PGID() {
			_ = setForeground(tty, unix.Getpgrp())
		}
	}
	handTerminal := func() {
		if tty != nil && foregroundGroup(tty) == unix.Getpgrp() {
			_ = setForeground(tty, g.PGID())
		}
	}
	exited := make(chan leaderExit, 1)
	stopped := make(chan struct{})
	resumed := make(chan struct{})
	go waitLeader(cmd.Process.Pid, exited, stopped, resumed)
	tstp := make(chan os.Signal, 1)
	signal.Notify(tstp, syscall.SIGTSTP)
	defer signal.Stop(tstp)
	jc := newJobControl()
	defer jc.close()

	hb := time.NewTicker(lr.beatEvery())
	defer hb.Stop()
	var stopping bool
	var kill <-chan time.Time
	var lost error
	stopCmd := func(s syscall.Signal, why string) {
		if stopping {
			_ = g.Signal(syscall.SIGKILL)
			return
		}
		stopping = true
		kill = time.After(lr.grace)
		fmt.Fprintf(r.env.Stderr, "pickup: lock run: %s: sending %s to %s, killing it after %s (signal again to kill now)\n", why, signalName(s), sanitize(argv[0]), lr.grace)
		_ = g.Signal(s)
	}
	var end leaderExit
loop:
	for {
		select {
		case end = <-exited:
			break loop
		case <-stopped:
			// The command stopped (Ctrl-Z, or it read the terminal from
			// the background): so does pickup, for the shell to see the
			// job stopped; once continued, so is the command.
			takeTerminal()
			jc.stopSelf()
			handTerminal()
			_ = g.Signal(syscall.SIGCONT)
			resumed <- struct{}{}
		case <-tstp:
			_ = g.Signal(syscall.SIGTSTP) // pickup stops when the command does
		case s := <-sigs:
			sig, _ := s.(syscall.Signal)
			stopCmd(sig, signalName(s))
		case <-kill:
			_ = g.Signal(syscall.SIGKILL)
		case <-hb.C:
			if lost != nil {
				continue
			}
			if err := lr.beat(info); err != nil {
				lost = err
				stopCmd(syscall.SIGTERM, "lock "+lockName(lr.key)+" was taken away")
			}
		}
	}
	// The terminal first: pickup is about to write to it.
	takeTerminal()
	r.endGroup(g, "lock run")
	// waitLeader has reaped the command already: Wait only finishes
	// os/exec's copying of streams that are not files (its error says that
	// there was no process left to wait for), and Release frees the
	// process handle that Wait would have.
	_ = cmd.Wait()
	_ = cmd.Process.Release()
	relErr := release()
	if err := g.StartErr(); err != nil {
		// The gate could not exec the command: said as when Start says
		// so, with a shell's exit status.
		code := 126
		if errors.Is(err, os.ErrNotExist) {
			code = 127
		}
		return exitError{code: code, err: fmt.Errorf("lock run: %w", err)}
	}
	if lost != nil {
		return exitError{code: ExitClaimLost, err: fmt.Errorf("lock run: %w; %s was stopped", lost, sanitize(argv[0]))}
	}
	if end.err != nil {
		return fmt.Errorf("lock run: wait for %s: %w", sanitize(argv[0]), end.err)
	}
	code := end.ws.ExitStatus()
	if end.ws.Signaled() {
		code = 128 + int(end.ws.Signal())
	}
	if relErr != nil {
		fmt.Fprintf(r.env.Stderr, "pickup: lock run: release lock %s: %v\n", lockName(lr.key), relErr)
		if code == 0 {
			code = ExitError
		}
	}
	if code != 0 {
		return exitError{code: code, err: fmt.Errorf("%s exited %d", sanitize(argv[0]), code), quiet: true}
	}
	return nil
}
