package lifeline

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Arg is the hidden first argument that makes pickup's executable a
// watchdog (see the package documentation).
const Arg = "__lifeline"

// ArgGate is the hidden first argument that makes pickup's executable a
// command's gate: it waits until pickup has listed its group, then becomes
// the command (see Lifeline.Start).
const ArgGate = "__lifeline_gate"

// readyTimeout bounds how long Start waits for a new watchdog to say it is
// ready. Go starts in milliseconds; a race-instrumented test binary on a
// busy machine can take a good part of a second.
const readyTimeout = 10 * time.Second

// ErrNotReady reports a watchdog that did not say it was ready: the
// executable does not run lifeline.RunRole first (see internal/roles), or
// it failed at once.
var ErrNotReady = errors.New("watchdog did not start")

// Lifeline is pickup's end of the watchdog. Its methods are safe for
// concurrent use, and a nil *Lifeline is valid: groups then get their own
// process group and (on Linux) PR_SET_PDEATHSIG, but no watchdog.
type Lifeline struct {
	cmd  *exec.Cmd
	warn io.Writer
	// exe and argv0 start gates as the watchdog was started.
	exe, argv0 string

	mu   sync.Mutex
	w    *os.File // the pipe to the watchdog; nil once closed
	lost bool     // a write failed: the watchdog is gone, warned once
}

// Start starts the watchdog: pickup's executable run again with argv0 as
// its name (as pickup was called: tests and wrappers may choose what to run
// by it) and Arg as its first argument. Messages about a watchdog that is
// lost later are written to warn.
//
// When Start fails, the caller can still start commands with a nil
// *Lifeline; it should tell the user that they are then killed with pickup
// only as far as PR_SET_PDEATHSIG reaches.
func Start(argv0 string, warn io.Writer) (*Lifeline, error) {
	exe, err := executable()
	if err != nil {
		return nil, fmt.Errorf("start watchdog: find own executable: %w", err)
	}
	pr, pw, err := os.Pipe() // pickup -> watchdog: the group list
	if err != nil {
		return nil, fmt.Errorf("start watchdog: %w", err)
	}
	rr, rw, err := os.Pipe() // watchdog -> pickup: "ready"
	if err != nil {
		pr.Close()
		pw.Close()
		return nil, fmt.Errorf("start watchdog: %w", err)
	}
	defer rr.Close()
	// Stdin and Stdout are *os.File: the child gets the descriptors
	// themselves and no copying goroutine runs. Dir "/": a watchdog must
	// not keep pickup's working directory busy (an unmount).
	cmd := &exec.Cmd{
		Path: exe, Args: []string{argv0, Arg}, Dir: "/",
		Stdin: pr, Stdout: rw, Stderr: os.Stderr,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	err = cmd.Start()
	pr.Close()
	rw.Close()
	if err != nil {
		pw.Close()
		return nil, fmt.Errorf("start watchdog %s: %w", exe, err)
	}
	l := &Lifeline{cmd: cmd, w: pw, warn: warn, exe: exe, argv0: argv0}
	if err := awaitReady(rr); err != nil {
		_ = cmd.Process.Kill()
		pw.Close()
		_ = cmd.Wait()
		return nil, fmt.Errorf("start watchdog %s: %w", exe, err)
	}
	return l, nil
}

// awaitReady reads the watchdog's one-byte "ready", sent once it ignores
// the signals it must survive and reads its pipe.
func awaitReady(r *os.File) error {
	if err := r.SetReadDeadline(time.Now().Add(readyTimeout)); err != nil {
		return err
	}
	var b [1]byte
	n, err := r.Read(b[:])
	if n == 1 && b[0] == readyByte {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		return ErrNotReady
	}
	return fmt.Errorf("%w: %w", ErrNotReady, err)
}

// readyByte is what a watchdog writes once it is ready.
const readyByte = '!'

// PID is the watchdog's process id, or 0 for a nil *Lifeline. The
// watchdog outlives pickup until every group it lists is empty, so a
// record of pickup's live processes should name it too.
func (l *Lifeline) PID() int {
	if l == nil {
		return 0
	}
	return l.cmd.Process.Pid
}

// Close tells the watchdog that pickup is done and waits for it to exit.
// It kills whatever groups are still listed first: none, when every Group
// has ended.
func (l *Lifeline) Close() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	w := l.w
	l.w = nil
	l.mu.Unlock()
	if w == nil {
		return nil
	}
	w.Close()
	if err := l.cmd.Wait(); err != nil {
		return fmt.Errorf("watchdog: %w", err)
	}
	return nil
}

// send writes one line of the protocol: op is '+' or '-'. A watchdog that
// is gone is reported once; the caller goes on, its commands protected by
// PR_SET_PDEATHSIG alone.
func (l *Lifeline) send(op byte, pgid int) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w == nil || l.lost {
		return
	}
	// One write of a few bytes: atomic on a pipe.
	line := strconv.AppendInt([]byte{op}, int64(pgid), 10)
	if _, err := l.w.Write(append(line, '\n')); err != nil {
		l.lost = true
		fmt.Fprintf(l.warn, "pickup: the watchdog (pid %d) that kills commands if pickup dies is gone (%v); from now on, if pickup is killed, only their first processes die with it\n", l.PID(), err)
	}
}
