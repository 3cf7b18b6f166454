package sessions

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// The move guard keeps repairs and moves of session files apart on one
// machine. Transitions never need it among themselves: each is one
// no-replace rename, and of racing renames exactly one wins. A repair is
// different: it decides from what it saw (a session found in two places)
// and then moves one of them aside, and a claim made between the two turns
// a right decision into a lost session (a file seen in todo/ and then, a
// moment later, in doing/w3/ is one file that moved, not two). So:
//
//   - every move of a session file (claim, next, release, done, reopen,
//     requeue, reap, new, work's rewrite of a claimed session) holds the
//     guard shared for the length of its rename (see EnterMove): moves
//     never wait for each other;
//   - a repair holds it exclusive (see enterRepair) while it looks again at
//     every place the session can be and moves what it does not keep: with
//     no move in flight, what it sees is what is there.
//
// The guard is flock(2) on moveGuardFile in the board's .pickup/ (never
// committed, so per machine: a board shared through git is arbitrated by
// its remote, not by this). The kernel releases it when a holder dies, so a
// killed doctor never leaves it held.

// moveGuardFile is the guard's file name in the board's .pickup/.
const moveGuardFile = "moves.lock"

// Guard waits: a move waits at most moveGuardWait for a repair (which
// holds the guard for a few renames), a repair at most repairGuardWait for
// a moment with no move in flight.
const (
	moveGuardWait   = 30 * time.Second
	repairGuardWait = 30 * time.Second
)

// ErrRepairRunning is a move that waited in vain for a repair holding the
// board's move guard.
var ErrRepairRunning = errors.New("a repair holds the board's move guard")

// openGuard opens (creating it, and .pickup/, if needed) the guard file.
// Reading is enough for flock, so an account that may not write it can
// still take it.
func (b *Board) openGuard() (int, error) {
	p := filepath.Join(b.RuntimeDir(), moveGuardFile)
	made := false
	for {
		fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CREAT|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o644)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.ENOENT && !made:
			made = true
			if err := b.CheckDir(RuntimeDirName); err != nil {
				return -1, err
			}
			if err := os.MkdirAll(b.RuntimeDir(), 0o755); err != nil {
				return -1, err
			}
			continue
		case err != nil:
			return -1, &os.PathError{Op: "open", Path: p, Err: err}
		}
		return fd, nil
	}
}

// enterGuard takes the guard shared or exclusive (how), polling until it
// gets it or wait has passed.
func (b *Board) enterGuard(how int, wait time.Duration) (leave func(), err error) {
	fd, err := b.openGuard()
	if err != nil {
		return nil, err
	}
	var deadline time.Time
	pause := 100 * time.Microsecond
	for {
		err := unix.Flock(fd, how|unix.LOCK_NB)
		if err == nil {
			return func() { unix.Close(fd) }, nil
		}
		if err == unix.EINTR {
			continue
		}
		if err != unix.EWOULDBLOCK {
			unix.Close(fd)
			return nil, fmt.Errorf("flock %s: %w", filepath.Join(b.RuntimeDir(), moveGuardFile), err)
		}
		now := time.Now()
		if deadline.IsZero() {
			deadline = now.Add(wait)
		}
		if !now.Before(deadline) {
			unix.Close(fd)
			if how == unix.LOCK_SH {
				return nil, fmt.Errorf("wait %s for %s: %w", wait, filepath.Join(b.RuntimeDir(), moveGuardFile), ErrRepairRunning)
			}
			return nil, fmt.Errorf("take %s: moves of sessions held it for %s", filepath.Join(b.RuntimeDir(), moveGuardFile), wait)
		}
		time.Sleep(min(pause, deadline.Sub(now)))
		pause = min(2*pause, 10*time.Millisecond)
	}
}

// enterRepair holds the move guard exclusive (no move of a session file is
// in flight on this machine until leave) and, on a board in a git work
// tree, that work tree's sync gate shared, as a move does (see EnterMove).
func (b *Board) enterRepair() (leave func(), err error) {
	return b.enterGuardAndGate(unix.LOCK_EX, repairGuardWait)
}
