package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pickup-dev/pickup/internal/claude"
	"github.com/pickup-dev/pickup/sessions"
)

// detachWait is how long `hook --detach session-end` waits for its release
// before it returns and leaves the release to finish on its own: under
// Claude Code's 1.5 s budget for SessionEnd hooks, with room for starting.
const detachWait = time.Second

// detachSessionEnd runs `hook session-end` in a process of its own session
// and waits for it at most detachWait, when the release does git work
// (commit mode, a shared board); a release of renames only is done here. Claude Code 2.1.331 applies a
// plugin's SessionEnd hooks its default budget of 1.5 s whatever their
// timeout says, and cancels what outlives it, its children included; a
// release in commit mode (a git commit) on a loaded machine can take
// longer. Returning in time means nothing is cancelled: the release goes
// on, in its own session, and what it prints goes where it can (it
// ignores SIGPIPE). The owner's process, which the lease follows, is found
// here and passed on with --pid: the release's own parent is this process.
func (r *run) detachSessionEnd(a *claude.Agent, need int) {
	fail := func(err error) {
		fmt.Fprintf(r.env.Stderr, "pickup: hook session-end: %s\n", sanitize(err.Error()))
	}
	input, err := io.ReadAll(r.env.Stdin)
	if err != nil {
		fail(fmt.Errorf("read input: %w", err))
		return
	}
	if !r.sessionEndUsesGit(input) {
		// Renames only, a few milliseconds: done here, in one process.
		signal.Ignore(syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGPIPE)
		if err := r.hook("session-end", a, need, bytes.NewReader(input)); err != nil {
			fail(err)
		}
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
	// The same command line (global flags such as --commit and --dir
	// included), without --detach.
	for _, a := range os.Args[1:] {
		if a != "--detach" && a != "-detach" && !strings.HasPrefix(a, "--detach=") {
			args = append(args, a)
		}
	}
	cmd := exec.Command(exe, args...)
	cmd.Stdin = bytes.NewReader(input)
	cmd.Stdout, cmd.Stderr = r.rawEnv().Stdout, r.rawEnv().Stderr
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

// sessionEndUsesGit reports whether the board that a SessionEnd input's
// cwd leads to commits (config.yaml, --commit, $PICKUP_COMMIT) or pushes
// its transitions (or cannot be read: then
// the release is detached too, to be safe).
func (r *run) sessionEndUsesGit(input []byte) bool {
	var in struct {
		Cwd string `json:"cwd"`
	}
	_ = json.Unmarshal(input, &in)
	if filepath.IsAbs(in.Cwd) {
		env := *r.env
		env.Getwd = func() (string, error) { return in.Cwd, nil }
		r.env = &env
	}
	dir, err := r.boardDir()
	if err != nil {
		return true
	}
	b, err := sessions.Open(dir)
	if err != nil {
		return true
	}
	cfg, err := b.Config()
	if err != nil || cfg.Commit || cfg.Shared != "" || r.commit {
		return true
	}
	on, set, err := commitEnv(r.env.Getenv)
	return err != nil || set && on
}
