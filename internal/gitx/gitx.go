// Package gitx runs git for pickup: it finds the repository that holds a
// board, commits exactly the paths a transition moved (never a user's own
// staged changes), waits out another git's index.lock and reports one left
// by a crashed git, and syncs with a remote (pull --rebase, push) with
// retries, exponential backoff and jitter, aborting any rebase that stops.
//
// It runs the git program; it does not serialize pickup's own git calls
// (callers do that with a named lock, see Syncer.Lock), it only copes with
// other programs' git commands.
package gitx

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Errors, checked with errors.Is.
var (
	// ErrNotRepo: the directory is not inside a git work tree.
	ErrNotRepo = errors.New("not inside a git work tree")
	// ErrIndexLocked: another git process holds a lock file (index.lock,
	// a ref's .lock) for longer than we wait, or one is left over from a
	// git that crashed. It comes as an *IndexLockError.
	ErrIndexLocked = errors.New("git lock file exists")
	// ErrConflict: pull --rebase stopped on conflicts; the rebase was
	// aborted. It comes as a *ConflictError.
	ErrConflict = errors.New("rebase stopped on conflicts")
	// ErrSyncFailed: every attempt of a sync failed. It comes as a
	// *SyncError.
	ErrSyncFailed = errors.New("sync failed")
	// ErrNoRemote: the repository has no remote to sync with.
	ErrNoRemote = errors.New("no remote")
	// ErrDetachedHead: HEAD is not on a branch, so there is nothing to
	// push to.
	ErrDetachedHead = errors.New("HEAD is detached")
	// ErrRebaseInProgress: a rebase that this package did not start is in
	// progress; it is never aborted for the user.
	ErrRebaseInProgress = errors.New("a rebase is in progress")
)

// Defaults of Repo.
const (
	// DefaultLockWait is how long a command waits for another git's lock
	// file to go away before it reports it.
	DefaultLockWait = 10 * time.Second
	// DefaultStaleLock is the age from which a lock file is reported at
	// once as left by a crashed git: no git command holds one that long
	// (except `git commit` waiting for its editor).
	DefaultStaleLock = 10 * time.Minute
)

// Repo is a git work tree.
type Repo struct {
	// Top is the top directory of the work tree (symlinks resolved, as git
	// reports it).
	Top string
	// GitDir is the work tree's git directory: .git in the main work tree,
	// .git/worktrees/<name> in a linked one. index.lock and a rebase in
	// progress live here.
	GitDir string
	// CommonDir is the repository's shared git directory.
	CommonDir string

	// Git is the git program (default "git", found in $PATH).
	Git string
	// Env is added to the environment of every git command.
	Env []string
	// Proxy is the program git runs as core.gitProxy for the commands
	// that talk to a remote: pickup's own executable, which relays git://
	// connections with TCP_NODELAY (see proxy.go). "" leaves git alone.
	Proxy string
	// NetTimeout is the deadline of each command that talks to a remote
	// whose context has none, and the time after which a transfer that
	// moves no bytes is given up (default DefaultNetTimeout; see
	// deadline.go).
	NetTimeout time.Duration
	// LockWait is how long to wait for another git's lock file (default
	// DefaultLockWait); StaleLock is the age from which one is reported at
	// once (default DefaultStaleLock).
	LockWait, StaleLock time.Duration
	// Now replaces time.Now, Sleep a pause (it returns early with ctx's
	// error); both for tests.
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
}

// Find returns the work tree that contains dir.
func Find(ctx context.Context, dir string) (*Repo, error) {
	r := &Repo{Top: dir}
	out, err := r.Run(ctx, "rev-parse", "--path-format=absolute", "--show-toplevel", "--git-dir", "--git-common-dir")
	if err != nil {
		var ge *Error
		if errors.As(err, &ge) && ge.Code > 0 {
			return nil, fmt.Errorf("%w: %s: %s", ErrNotRepo, dir, ge.Summary())
		}
		return nil, err
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 3 || lines[0] == "" {
		return nil, fmt.Errorf("%w: %s (git rev-parse said %q)", ErrNotRepo, dir, out)
	}
	r.Top, r.GitDir, r.CommonDir = filepath.Clean(lines[0]), filepath.Clean(lines[1]), filepath.Clean(lines[2])
	return r, nil
}

func (r *Repo) git() string {
	if r.Git != "" {
		return r.Git
	}
	return "git"
}

func (r *Repo) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Repo) sleep(ctx context.Context, d time.Duration) error {
	if r.Sleep != nil {
		return r.Sleep(ctx, d)
	}
	return sleepCtx(ctx, d)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// scrubbed are variables that would point git at another repository or
// index than the one Find located (set when pickup runs inside a git hook).
var scrubbed = map[string]bool{
	"GIT_DIR": true, "GIT_WORK_TREE": true, "GIT_INDEX_FILE": true, "GIT_COMMON_DIR": true,
	"GIT_PREFIX": true, "GIT_NAMESPACE": true, "GIT_OBJECT_DIRECTORY": true,
	"GIT_ALTERNATE_OBJECT_DIRECTORIES": true, "GIT_CEILING_DIRECTORIES": true,
}

func (r *Repo) env() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if scrubbed[k] {
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"LC_ALL=C",                // messages pickup reads, in English
		"GIT_TERMINAL_PROMPT=0",   // never wait for a password on a terminal
		"GIT_OPTIONAL_LOCKS=0",    // status must not take index.lock to refresh
		"GIT_LITERAL_PATHSPECS=1", // paths are paths, never globs
		"GIT_EDITOR=true",         // never wait for an editor
		"GIT_MERGE_AUTOEDIT=no",
	)
}

// Error is a git command that failed: its arguments, exit code (-1 if it
// did not run or was killed) and output.
type Error struct {
	Args   []string
	Code   int
	Stdout string
	Stderr string
	Err    error
}

func (e *Error) Error() string {
	return "git " + strings.Join(e.Args, " ") + ": " + e.Summary()
}

func (e *Error) Unwrap() error { return e.Err }

// Summary is the gist of what git said: its error, fatal, rejection and
// conflict lines, or its last line of output.
func (e *Error) Summary() string {
	if errors.Is(e.Err, ErrNetTimeout) {
		return e.Err.Error()
	}
	var keep []string
	all := strings.Split(strings.TrimSpace(e.Stderr+"\n"+e.Stdout), "\n")
	for _, l := range all {
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, "error:"), strings.HasPrefix(t, "fatal:"),
			strings.HasPrefix(t, "! "), strings.HasPrefix(t, "CONFLICT"),
			strings.HasPrefix(t, "Unable to create"):
			if len(keep) < 4 {
				keep = append(keep, t)
			}
		}
	}
	if len(keep) == 0 {
		for i := len(all) - 1; i >= 0; i-- {
			if t := strings.TrimSpace(all[i]); t != "" {
				keep = append(keep, t)
				break
			}
		}
	}
	if len(keep) == 0 {
		if e.Err != nil {
			return e.Err.Error()
		}
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return strings.Join(keep, "; ")
}

// Run runs git in the work tree and returns its standard output. A failure
// is an *Error. When ctx ends git gets SIGINT, so that it removes its lock
// files, and is killed only if it does not exit within 10 seconds.
func (r *Repo) Run(ctx context.Context, args ...string) (string, error) {
	return r.RunIn(ctx, nil, nil, args...)
}

// IndexLockError reports a git lock file that stayed: another git process
// is still working (a `git commit` waiting for its editor holds index.lock)
// or one crashed and left it. It is never removed for the user.
type IndexLockError struct {
	Path  string
	Age   time.Duration
	Stale bool // older than Repo.StaleLock: almost surely left by a crash
}

func (e *IndexLockError) Error() string {
	if e.Stale {
		return fmt.Sprintf("%v: %s is %s old, so a git process probably crashed and left it", ErrIndexLocked, e.Path, e.Age.Round(time.Second))
	}
	return fmt.Sprintf("%v: another git process has held %s for %s (pickup's own git commands take turns, so it is not one of them)", ErrIndexLocked, e.Path, e.Age.Round(time.Second))
}

func (e *IndexLockError) Unwrap() error { return ErrIndexLocked }

// Hint says what to do.
func (e *IndexLockError) Hint() string {
	return fmt.Sprintf("a git process may have crashed: check `ps` for running git commands (and editors of a `git commit`), then remove %s if none is running", e.Path)
}

// IndexLock reports whether the work tree's index.lock exists, and its age.
func (r *Repo) IndexLock() (path string, age time.Duration, exists bool) {
	path = filepath.Join(r.GitDir, "index.lock")
	age, exists = r.lockAge(path)
	return path, age, exists
}

func (r *Repo) lockAge(path string) (time.Duration, bool) {
	info, err := os.Lstat(path)
	if err != nil {
		return 0, false
	}
	return max(r.now().Sub(info.ModTime()), 0), true
}

// lockFileMsg is compiled on first use: most pickup processes never run git.
var lockFileMsg = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`Unable to create '([^']+\.lock)': File exists`)
})

// RunLocked runs a git command that takes the index lock (add, commit,
// reset, ...). If another git holds index.lock, or the command fails
// because some lock file exists, it waits up to LockWait for it to go away
// and runs the command again; a lock file older than StaleLock, or one that
// outlasts the wait, is reported as an *IndexLockError, never removed.
func (r *Repo) RunLocked(ctx context.Context, args ...string) (string, error) {
	wait := r.LockWait
	if wait <= 0 {
		wait = DefaultLockWait
	}
	stale := r.StaleLock
	if stale <= 0 {
		stale = DefaultStaleLock
	}
	deadline := r.now().Add(wait)
	pause := 20 * time.Millisecond
	for {
		lock := ""
		var age time.Duration
		if p, a, ok := r.IndexLock(); ok {
			lock, age = p, a
		} else {
			out, err := r.Run(ctx, args...)
			var ge *Error
			if err == nil || !errors.As(err, &ge) {
				return out, err
			}
			m := lockFileMsg().FindStringSubmatch(ge.Stderr)
			if m == nil {
				return out, err
			}
			lock = m[1]
			age, _ = r.lockAge(lock) // 0 if gone already: run again after a pause
		}
		if age >= stale {
			return "", &IndexLockError{Path: lock, Age: age, Stale: true}
		}
		if !r.now().Before(deadline) {
			return "", &IndexLockError{Path: lock, Age: age}
		}
		if err := r.sleep(ctx, pause); err != nil {
			return "", err
		}
		pause = min(2*pause, 500*time.Millisecond)
	}
}

// Rel returns path relative to the top of the work tree, with '/'
// separators, resolving symlinks in its directories (git reports Top with
// symlinks resolved). The file itself need not exist.
func (r *Repo) Rel(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	dir, rest := filepath.Dir(abs), []string{filepath.Base(abs)}
	for {
		real, err := filepath.EvalSymlinks(dir)
		if err == nil {
			dir = real
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		rest = append([]string{filepath.Base(dir)}, rest...)
		dir = parent
	}
	full := filepath.Join(append([]string{dir}, rest...)...)
	rel, err := filepath.Rel(r.Top, full)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is outside the git work tree %s", path, r.Top)
	}
	return filepath.ToSlash(rel), nil
}

// RebaseInProgress reports whether a rebase is stopped in the work tree.
func (r *Repo) RebaseInProgress() bool {
	for _, d := range []string{"rebase-merge", "rebase-apply"} {
		if _, err := os.Stat(filepath.Join(r.GitDir, d)); err == nil {
			return true
		}
	}
	return false
}

// Branch returns the current branch, or ErrDetachedHead.
func (r *Repo) Branch(ctx context.Context) (string, error) {
	out, err := r.Run(ctx, "symbolic-ref", "--short", "-q", "HEAD")
	if err != nil {
		var ge *Error
		if errors.As(err, &ge) && ge.Code == 1 {
			return "", fmt.Errorf("%w in %s: check out a branch first", ErrDetachedHead, r.Top)
		}
		return "", err
	}
	return strings.TrimSpace(out), nil
}

// Head returns the commit HEAD points at, or "" in a repository without
// commits.
func (r *Repo) Head(ctx context.Context) string {
	out, err := r.Run(ctx, "rev-parse", "-q", "--verify", "HEAD")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}
