package gitx

// Deadlines of the git commands that talk to a remote.
//
// A remote that accepts a connection and never answers (a dead VPN, a
// hung proxy, a server whose git process hangs) keeps a git fetch or push
// waiting for ever: git has no timeout of its own for git://, and none by
// default for ssh. pickup runs such commands while other processes of the
// clone wait for it, so each one has a deadline (Repo.NetTimeout, the
// board's network_timeout):
//
//   - a stalled transfer, one that moves no bytes for NetTimeout, is
//     given up by whatever sees the bytes: pickup's own git:// relay
//     (proxy.go), curl for http(s) (http.lowSpeedLimit/lowSpeedTime), ssh
//     for ssh (ConnectTimeout, ServerAliveInterval, set through
//     GIT_SSH_COMMAND only when the user chose no ssh command of their
//     own);
//   - the command as a whole is bounded by its context's deadline, or by
//     NetTimeout when the context has none: past it, pickup sends SIGTERM
//     to the command's process group (git, its remote helper, ssh, the
//     relay), so that git removes its lock files, and SIGKILL shortly
//     after to whatever is left.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// DefaultNetTimeout is Repo.NetTimeout's default.
const DefaultNetTimeout = 30 * time.Second

// LongTransfers bounds, in network deadlines, a transfer whose size is the
// user's (a sync's pull of a code branch, the first fetch of a shared
// board): it may take that many times NetTimeout as long as its bytes
// keep moving.
const LongTransfers = 10

// StallEnv gives pickup's git:// relay the stall bound, in milliseconds.
const StallEnv = "PICKUP_GIT_PROXY_STALL_MS"

// killGrace is how long a command past its deadline has, after SIGTERM,
// before its process group is killed.
const killGrace = 2 * time.Second

// ErrNetTimeout: a git command that talks to a remote went past its
// deadline, or moved no bytes for the stall bound. It comes as a
// *NetTimeoutError inside an *Error.
var ErrNetTimeout = errors.New("the remote did not answer in time")

// NetTimeoutError is a git command given up on its deadline.
type NetTimeoutError struct {
	// Limit is the bound that was reached; Stalled: no bytes moved for
	// that long (else the whole command took that long).
	Limit   time.Duration
	Stalled bool
}

func (e *NetTimeoutError) Error() string {
	if e.Stalled {
		return fmt.Sprintf("the remote moved no bytes for %s: gave up (network_timeout)", e.Limit.Round(time.Millisecond))
	}
	return fmt.Sprintf("the remote did not answer within %s: gave up (network_timeout)", e.Limit.Round(time.Millisecond))
}

func (e *NetTimeoutError) Unwrap() error { return ErrNetTimeout }

func (r *Repo) netTimeout() time.Duration {
	if r.NetTimeout > 0 {
		return r.NetTimeout
	}
	return DefaultNetTimeout
}

// NetTimeoutOf returns r's network deadline (NetTimeout or its default).
func (r *Repo) NetTimeoutOf() time.Duration { return r.netTimeout() }

// netContext bounds a remote command: ctx's own deadline, or NetTimeout
// from now if it has none. It returns the bound.
func (r *Repo) netContext(ctx context.Context) (context.Context, context.CancelFunc, time.Duration) {
	if dl, ok := ctx.Deadline(); ok {
		// The caller's deadline: the lead of a group commit shares one
		// among its round trips (the error names the setting's value),
		// a long transfer has a longer one.
		ctx, cancel := context.WithCancel(ctx)
		return ctx, cancel, max(time.Until(dl), r.netTimeout())
	}
	t := r.netTimeout()
	ctx, cancel := context.WithTimeout(ctx, t)
	return ctx, cancel, t
}

// withDeadline adds to a remote command's arguments and environment what
// makes git, curl and ssh give up a stalled transfer after NetTimeout.
func (r *Repo) withDeadline(args, env []string) ([]string, []string) {
	t := r.netTimeout()
	secs := int((t + time.Second - 1) / time.Second)
	env = append(env, StallEnv+"="+strconv.FormatInt(t.Milliseconds(), 10))
	if os.Getenv("GIT_HTTP_LOW_SPEED_LIMIT") == "" && os.Getenv("GIT_HTTP_LOW_SPEED_TIME") == "" {
		args = append([]string{"-c", "http.lowSpeedLimit=1", "-c", "http.lowSpeedTime=" + strconv.Itoa(secs)}, args...)
	}
	if !r.userSSH() {
		alive := max(1, secs/3)
		env = append(env, fmt.Sprintf("GIT_SSH_COMMAND=ssh -o ConnectTimeout=%d -o ServerAliveInterval=%d -o ServerAliveCountMax=3", secs, alive))
	}
	return args, env
}

// userSSH reports whether the user chose how git runs ssh ($GIT_SSH,
// $GIT_SSH_COMMAND, core.sshCommand in the repository's or the user's
// git config): then pickup leaves ssh alone and relies on its overall
// deadline. It reads the config files, it runs no git.
func (r *Repo) userSSH() bool {
	if os.Getenv("GIT_SSH_COMMAND") != "" || os.Getenv("GIT_SSH") != "" {
		return true
	}
	var files []string
	if r.CommonDir != "" {
		files = append(files, filepath.Join(r.CommonDir, "config"))
	}
	if home := os.Getenv("HOME"); home != "" {
		files = append(files, filepath.Join(home, ".gitconfig"))
	}
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if xdg == "" && os.Getenv("HOME") != "" {
		xdg = filepath.Join(os.Getenv("HOME"), ".config")
	}
	if xdg != "" {
		files = append(files, filepath.Join(xdg, "git", "config"))
	}
	if gc := os.Getenv("GIT_CONFIG_GLOBAL"); gc != "" {
		files = append(files, gc)
	}
	for _, f := range files {
		// An include could hide one: a false "none" only costs the user's
		// own ssh options being joined by pickup's timeouts.
		if data, err := os.ReadFile(f); err == nil && strings.Contains(strings.ToLower(string(data)), "sshcommand") {
			return true
		}
	}
	return false
}

// inGroup makes cmd a process group of its own, ended as a whole when ctx
// ends: SIGTERM first (git removes its lock files), then, after
// killGrace, SIGKILL to the group.
func inGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = killGrace
}

// endGroup kills what is left of cmd's process group once it was
// cancelled (a helper that ignored SIGTERM, or that git left behind).
func endGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// timedOut returns the *NetTimeoutError of a remote command that failed,
// if it failed on a deadline: the context's (bound), or a stall that the
// relay, curl or ssh reported in stderr.
func timedOut(ctxErr error, bound, stall time.Duration, stderr string) error {
	if errors.Is(ctxErr, context.DeadlineExceeded) {
		return &NetTimeoutError{Limit: bound}
	}
	for _, s := range []string{relayStallMark, "Operation too slow", "Operation timed out", "Connection timed out", "not responding"} {
		if strings.Contains(stderr, s) {
			return &NetTimeoutError{Limit: stall, Stalled: true}
		}
	}
	return nil
}
