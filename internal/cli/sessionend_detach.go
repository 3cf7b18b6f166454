package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// detachWait is how long `hook --detach session-end` waits for its release
// before it returns and leaves the release to finish on its own: under
// Claude Code's 1.5 s budget for SessionEnd hooks, with room for starting.
const detachWait = time.Second

// detachSessionEnd runs `hook session-end` in a process of its own session
// and waits for it at most detachWait. Claude Code 2.1.331 applies a
// plugin's SessionEnd hooks its default budget of 1.5 s whatever their
// timeout says, and cancels what outlives it, its children included; a
// release in commit mode (a git commit) on a loaded machine can take
// longer. Returning in time means nothing is cancelled: the release goes
// on, in its own session, and what it prints goes where it can (it
// ignores SIGPIPE). The owner's process, which the lease follows, is found
// here and passed on with --pid: the release's own parent is this process.
func (r *run) detachSessionEnd(need int) {
	fail := func(err error) {
		fmt.Fprintf(r.env.Stderr, "pickup: hook session-end: %s\n", sanitize(err.Error()))
	}
	input, err := io.ReadAll(r.env.Stdin)
	if err != nil {
		fail(fmt.Errorf("read input: %w", err))
		return
	}
	exe, err := pickupCommand()
	if err != nil {
		fail(fmt.Errorf("start the release: %w", err))
		return
	}
	var args []string
	if pid, err := r.explicitPID(); err == nil && pid == 0 {
		if p, err := r.invokerProcess(); err == nil {
			args = append(args, "--pid", strconv.Itoa(p.PID))
		}
	}
	args = append(args, "hook", "--need", strconv.Itoa(need), "session-end")
	cmd := exec.Command(exe, args...)
	cmd.Stdin = bytes.NewReader(input)
	cmd.Stdout, cmd.Stderr = r.env.Stdout, r.env.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		fail(fmt.Errorf("start the release: %w", err))
		return
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(detachWait):
	}
}

// pickupCommand is the program this process was started as: os.Args[0],
// found on the PATH as the shell found it (Claude Code runs `pickup` by
// name), else the executable. The name, not the executable's path, so that
// a multi-call binary started through a link (a test binary, say) runs as
// pickup again.
func pickupCommand() (string, error) {
	if name := os.Args[0]; name != "" {
		if strings.ContainsRune(name, os.PathSeparator) {
			return name, nil
		}
		if path, err := exec.LookPath(name); err == nil {
			return path, nil
		}
	}
	return os.Executable()
}
