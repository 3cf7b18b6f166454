package gitx

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/pickup-dev/pickup/internal/arbiter/retry"
)

// Plumbing for pickup's shared board, which builds commits of a branch of
// its own without a work tree: objects are written with hash-object, trees
// in a private index (GIT_INDEX_FILE), commits with commit-tree. None of it
// touches the user's HEAD, index, branches or staged files.

// RunIn runs git like Run, with stdin as its standard input and env added
// to its environment (GIT_INDEX_FILE for a private index, say).
//
// A command that talks to a remote (fetch, push, pull, ls-remote, clone)
// has a deadline: ctx's, or Repo.NetTimeout if ctx has none, and gives up
// a transfer that moves no bytes for NetTimeout (see deadline.go). It runs
// in a process group of its own, which is ended as a whole at the
// deadline; the error then wraps ErrNetTimeout.
func (r *Repo) RunIn(ctx context.Context, stdin []byte, env []string, args ...string) (string, error) {
	if !remoteCommands[subcommand(args)] {
		return r.runOnce(ctx, stdin, env, false, 0, args)
	}
	ctx, cancel, bound := r.netContext(ctx)
	defer cancel()
	// A remote that refused the connection (a git daemon restarting, a
	// server rebooting) took nothing: tried again until the deadline, as
	// a database's requests are (internal/arbiter/retry).
	p := retry.Policy{Budget: bound, Transient: func(err error) bool { return NotConnected(err) }}
	var out string
	err := p.Do(ctx, func(int) error {
		var err error
		out, err = r.runOnce(ctx, stdin, env, true, bound, args)
		return err
	})
	var gave *retry.GaveUpError
	if errors.As(err, &gave) {
		err = gave.Err // the command's own *Error: its message names the remote
	}
	return out, err
}

// runOnce runs git once; remote: it talks to a remote, within bound.
func (r *Repo) runOnce(ctx context.Context, stdin []byte, env []string, remote bool, bound time.Duration, args []string) (string, error) {
	gitArgs, env := r.withProxy(args, env)
	if remote {
		gitArgs, env = r.withDeadline(gitArgs, env)
	}
	cmd := exec.CommandContext(ctx, r.git(), append([]string{"-C", r.Top}, gitArgs...)...)
	cmd.Env = append(append(r.env(), r.Env...), env...)
	if remote {
		inGroup(cmd)
	} else {
		cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
		cmd.WaitDelay = 10 * time.Second
	}
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if remote && ctx.Err() != nil {
		endGroup(cmd)
	}
	if err == nil {
		return stdout.String(), nil
	}
	e := &Error{Args: args, Code: -1, Stdout: stdout.String(), Stderr: stderr.String(), Err: err}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		e.Code = ee.ExitCode()
	}
	if ctx.Err() != nil {
		e.Err = ctx.Err()
	}
	if remote {
		if te := timedOut(ctx.Err(), bound, r.netTimeout(), e.Stderr); te != nil {
			e.Err = te
		}
	}
	return stdout.String(), e
}

// CatBlobs reads the blobs named by shas with one cat-file --batch.
func (r *Repo) CatBlobs(ctx context.Context, shas ...string) (map[string][]byte, error) {
	out := map[string][]byte{}
	if len(shas) == 0 {
		return out, nil
	}
	in := strings.Join(shas, "\n") + "\n"
	raw, err := r.RunIn(ctx, []byte(in), nil, "cat-file", "--batch")
	if err != nil {
		return nil, err
	}
	data := []byte(raw)
	for len(data) > 0 {
		nl := bytes.IndexByte(data, '\n')
		if nl < 0 {
			break
		}
		head := strings.Fields(string(data[:nl]))
		data = data[nl+1:]
		if len(head) != 3 {
			continue // "<sha> missing"
		}
		var size int
		for _, c := range head[2] {
			size = size*10 + int(c-'0')
		}
		if size > len(data) {
			break
		}
		out[head[0]] = data[:size]
		data = data[min(size+1, len(data)):]
	}
	return out, nil
}

// PushRejected reports whether a failed push was refused because the
// remote's ref is not where the pusher saw it (someone pushed first), as
// opposed to the remote being unreachable or refusing the push itself
// (permissions, a protected branch, a hook).
func PushRejected(err error) bool {
	var ge *Error
	if !errors.As(err, &ge) {
		return false
	}
	text := ge.Stderr + ge.Stdout
	for _, s := range []string{"non-fast-forward", "fetch first", "stale info", "[rejected]", "cannot lock ref", "failed to update ref", "reference already exists"} {
		if strings.Contains(text, s) && !strings.Contains(text, "hook declined") && !strings.Contains(text, "pre-receive hook") {
			return true
		}
	}
	return false
}
