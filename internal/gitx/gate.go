package gitx

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// The gate keeps pickup's moves of session files out of the window in which
// git rewrites the work tree that holds the board. While a `pull --rebase`
// runs (or stands stopped on a conflict), the work tree shows the remote's
// state with this clone's commits not yet replayed: a session that an owner
// here holds shows in todo/ again. A claim made then lands in a second
// doing/ folder once the rebase is aborted or finished. So:
//
//   - every move (claim, next, done, release, reopen, requeue, reap, new,
//     doctor's repairs) holds the gate shared for the length of its rename,
//     and refuses to move while the work tree is in the middle of a
//     stopped rebase, merge, cherry-pick or revert (a sync that died with
//     its rebase stopped leaves one; so does a user's);
//   - pickup sync holds it exclusive for each attempt (pull, abort, push).
//
// The gate is flock(2) on GateFile in the git directory of the work tree
// that holds the board (where git keeps rebase-merge/): moves share it
// without waiting for each other, and the kernel releases it when a holder
// dies, so a crashed sync never leaves it held.

// GateFile is the gate's file name in the work tree's git directory.
const GateFile = "pickup-sync.lock"

// DefaultGateWait is how long a move waits for a sync that holds the gate
// (a sync holds it through a slow push), and a sync for moves in flight.
const DefaultGateWait = 2 * time.Minute

// Errors of the gate, checked with errors.Is.
var (
	// ErrStopped: the work tree is in the middle of a stopped rebase,
	// merge, cherry-pick or revert. It comes as a *StoppedError.
	ErrStopped = errors.New("a git operation is stopped in the work tree")
	// ErrSyncRunning: a pickup sync held the gate for the whole wait. It
	// comes as a *GateBusyError.
	ErrSyncRunning = errors.New("a pickup sync holds the work tree")
)

// Gate is the gate of one work tree. It must not be copied after first
// use.
type Gate struct {
	// Top is the work tree's top directory, GitDir its git directory.
	Top, GitDir string
	// Wait bounds the wait for the other side (DefaultGateWait if zero).
	Wait time.Duration

	once  sync.Once
	file  string   // GitDir/GateFile
	marks []string // GitDir/<each of stops>
	// clean is the modification time (ns) of GitDir when Stopped last
	// found nothing, if that time was over a second old then; 0: none.
	// While GitDir's time stays that, no marker was created since: one
	// stat instead of five. (A younger time may be shared by a change made
	// in the same clock tick, after the check: it is not trusted.)
	clean atomic.Int64
}

func (g *Gate) init() {
	g.once.Do(func() {
		g.file = filepath.Join(g.GitDir, GateFile)
		for _, s := range stops {
			g.marks = append(g.marks, filepath.Join(g.GitDir, s.name))
		}
	})
}

// FindGate returns the gate of the git work tree that contains dir, or nil
// if dir is in none. It runs no git: it looks for .git in dir and its
// parents, as git does (a directory, or a file "gitdir: PATH" in a linked
// worktree or a submodule), a few lstat(2) calls.
func FindGate(dir string) *Gate {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	for d := abs; ; d = filepath.Dir(d) {
		dotgit := filepath.Join(d, ".git")
		if info, err := os.Stat(dotgit); err == nil {
			if info.IsDir() {
				return &Gate{Top: d, GitDir: dotgit}
			}
			if gd, ok := readGitFile(d, dotgit); ok {
				return &Gate{Top: d, GitDir: gd}
			}
			return nil
		}
		if filepath.Dir(d) == d {
			return nil
		}
	}
}

func readGitFile(dir, path string) (string, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	gd, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
	if !ok {
		return "", false
	}
	gd = strings.TrimSpace(gd)
	if !filepath.IsAbs(gd) {
		gd = filepath.Join(dir, gd)
	}
	return filepath.Clean(gd), true
}

// stops are the files by which git marks an operation stopped half-way, with
// how to finish and how to abort it.
var stops = [...]struct{ name, op, cont, abort string }{
	{"rebase-merge", "rebase", "git rebase --continue", "git rebase --abort"},
	{"rebase-apply", "rebase", "git rebase --continue", "git rebase --abort"}, // or git am
	{"MERGE_HEAD", "merge", "git commit", "git merge --abort"},
	{"CHERRY_PICK_HEAD", "cherry-pick", "git cherry-pick --continue", "git cherry-pick --abort"},
	{"REVERT_HEAD", "revert", "git revert --continue", "git revert --abort"},
}

// StoppedError is a work tree in the middle of a stopped git operation:
// its files are not where its branch has them, so pickup moves nothing.
type StoppedError struct {
	Top    string
	Op     string // rebase, merge, cherry-pick, revert
	Marker string // the file that says so
	cont   string
	abort  string
}

func (e *StoppedError) Error() string {
	return fmt.Sprintf("the git work tree %s is in the middle of a %s (%s exists), so the board's files there are not where its branch has them: nothing was moved", e.Top, e.Op, e.Marker)
}

func (e *StoppedError) Unwrap() error { return ErrStopped }

// Hint says what to do.
func (e *StoppedError) Hint() string {
	return fmt.Sprintf("finish the %s (resolve, `git add`, `%s`) or abort it (`%s`) in %s, then run the command again; if a `pickup sync` stopped there (it aborts its own rebase, unless it was killed), abort it and run `pickup sync` again", e.Op, e.cont, e.abort, e.Top)
}

// Stopped returns a *StoppedError if the work tree is in the middle of a
// stopped rebase, merge, cherry-pick or revert, else nil: a stat(2) of the
// git directory, and one per kind when that directory changed since the
// last check.
func (g *Gate) Stopped() error {
	g.init()
	info, err := os.Stat(g.GitDir)
	var mtime time.Time
	if err == nil {
		mtime = info.ModTime()
		if c := g.clean.Load(); c != 0 && c == mtime.UnixNano() {
			return nil
		}
	}
	var st unix.Stat_t
	for i, s := range stops {
		if unix.Lstat(g.marks[i], &st) == nil {
			return &StoppedError{Top: g.Top, Op: s.op, Marker: g.marks[i], cont: s.cont, abort: s.abort}
		}
	}
	if err == nil && time.Since(mtime) > time.Second {
		g.clean.Store(mtime.UnixNano())
	}
	return nil
}

// GateBusyError is a move that waited for a running sync in vain.
type GateBusyError struct {
	Top  string
	Wait time.Duration
}

func (e *GateBusyError) Error() string {
	return fmt.Sprintf("%v %s: waited %s for it to finish pulling and pushing; nothing was moved", ErrSyncRunning, e.Top, e.Wait)
}

func (e *GateBusyError) Unwrap() error { return ErrSyncRunning }

// Hint says what to do.
func (e *GateBusyError) Hint() string {
	return "a `pickup sync` (or a doctor --fix) is still running in this repository, probably on a slow remote: try again when it has finished"
}

func (g *Gate) wait() time.Duration {
	if g.Wait > 0 {
		return g.Wait
	}
	return DefaultGateWait
}

// open opens (creating if needed) the gate file for flock; reading is
// enough for flock, so a user without write access to an existing file can
// still take it.
func (g *Gate) open() (int, error) {
	g.init()
	p := g.file
	for {
		fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CREAT|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o644)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return -1, &os.PathError{Op: "open", Path: p, Err: err}
		}
		return fd, nil
	}
}

// Enter holds the gate shared for one move: it waits (up to Wait) while a
// sync holds it, then refuses if the work tree is in the middle of a
// stopped operation. leave releases it. Moves never wait for each other.
//
// A gate file that cannot be opened (a git directory this user may not
// write) is no gate: the check for a stopped operation is still made.
func (g *Gate) Enter() (leave func(), err error) {
	fd, err := g.open()
	if err != nil {
		if st := g.Stopped(); st != nil {
			return nil, st
		}
		return func() {}, nil
	}
	if err := flockWait(context.Background(), fd, unix.LOCK_SH, g.wait(), 2*time.Millisecond, 100*time.Millisecond); err != nil {
		unix.Close(fd)
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, &GateBusyError{Top: g.Top, Wait: g.wait()}
		}
		return nil, err
	}
	if st := g.Stopped(); st != nil {
		unix.Close(fd)
		return nil, st
	}
	return func() { unix.Close(fd) }, nil
}

// Close holds the gate exclusive, for a sync's attempt: it waits for the
// moves in flight (each holds it for a rename), up to Wait or the end of
// ctx. open releases it.
func (g *Gate) Close(ctx context.Context) (open func(), err error) {
	fd, err := g.open()
	if err != nil {
		return nil, fmt.Errorf("take the board's sync gate: %w", err)
	}
	if err := flockWait(ctx, fd, unix.LOCK_EX, g.wait(), time.Millisecond, 20*time.Millisecond); err != nil {
		unix.Close(fd)
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return nil, fmt.Errorf("take the board's sync gate %s: moves of sessions held it for %s", filepath.Join(g.GitDir, GateFile), g.wait())
		}
		return nil, err
	}
	return func() { unix.Close(fd) }, nil
}

// flockWait takes flock how on fd, polling (from first, doubling up to
// most) until it gets it, wait has passed (context.DeadlineExceeded) or
// ctx ends. Polling rather than a blocking flock: a blocked flock(2)
// cannot be given up.
func flockWait(ctx context.Context, fd, how int, wait, first, most time.Duration) error {
	var deadline time.Time
	pause := first
	for {
		err := unix.Flock(fd, how|unix.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case err == unix.EINTR:
			continue
		case err != unix.EWOULDBLOCK:
			return fmt.Errorf("flock: %w", err)
		}
		now := time.Now()
		if deadline.IsZero() {
			deadline = now.Add(wait)
		}
		if !now.Before(deadline) {
			return context.DeadlineExceeded
		}
		if err := sleepCtx(ctx, min(pause, deadline.Sub(now))); err != nil {
			return err
		}
		pause = min(2*pause, most)
	}
}
