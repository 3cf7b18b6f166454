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
//
// The same file orders each session's history. A transition's line is
// appended to the event log after its rename, so two moves of one session
// (a release, then another owner's next) could be logged the other way
// round, and the log would say the session's last move was one that came
// before it. So a move of session id also holds a byte of the file that id
// picks (an open file description lock, fcntl(2) F_OFD_SETLK, exclusive:
// see orderLockOffset) from before its rename until its line is written.
// The next move of that session renames only after the previous one's
// rename, so it takes the byte after the previous one wrote its line: the
// log lists each session's moves in the order they happened, on this
// machine, whoever made them. Sessions share a byte only by chance (one in
// orderLocks), and then a move waits for the other's rename and write,
// microseconds. (Elsewhere than Linux there are no such locks; there the
// order is the appends'.)

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

// orderLocks is how many bytes of the guard file order sessions' moves.
const orderLocks = 4096

// orderLockOffset is the byte of the guard file that orders session id's
// moves (FNV-1a of the id).
func orderLockOffset(id string) int64 {
	h := uint32(2166136261)
	for i := 0; i < len(id); i++ {
		h = (h ^ uint32(id[i])) * 16777619
	}
	return int64(h % orderLocks)
}

// openGuard opens (creating it, and .pickup/, if needed) the guard file.
// Reading is enough for flock, so an account that may not write it can
// still take it; writable says whether it was opened for writing too, as
// an exclusive fcntl lock needs.
func (b *Board) openGuard(write bool) (fd int, writable bool, err error) {
	p := filepath.Join(b.RuntimeDir(), moveGuardFile)
	made := false
	for {
		mode := unix.O_RDONLY
		if write {
			mode = unix.O_RDWR
		}
		fd, err := unix.Open(p, mode|unix.O_CREAT|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o644)
		switch {
		case err == unix.EINTR:
			continue
		case write && (err == unix.EACCES || err == unix.EROFS || err == unix.EPERM):
			write = false // another account's file: the guard, unordered
			continue
		case err == unix.ENOENT && !made:
			made = true
			if err := b.CheckDir(RuntimeDirName); err != nil {
				return -1, false, err
			}
			if err := os.MkdirAll(b.RuntimeDir(), 0o755); err != nil {
				return -1, false, err
			}
			continue
		case err != nil:
			return -1, false, &os.PathError{Op: "open", Path: p, Err: err}
		}
		return fd, write, nil
	}
}

// enterGuard takes the guard shared or exclusive (how), polling until it
// gets it or wait has passed; with an id, it then takes that session's
// byte of the file too (see orderLockOffset), as long again at most.
// leave releases both (closing the file releases its locks).
func (b *Board) enterGuard(how int, wait time.Duration, id string) (leave func(), err error) {
	fd, writable, err := b.openGuard(id != "")
	if err != nil {
		return nil, err
	}
	path := filepath.Join(b.RuntimeDir(), moveGuardFile)
	if err := poll(wait, func() error { return unix.Flock(fd, how|unix.LOCK_NB) }); err != nil {
		unix.Close(fd)
		switch {
		case err != errWaited:
			return nil, fmt.Errorf("flock %s: %w", path, err)
		case how == unix.LOCK_SH:
			return nil, fmt.Errorf("wait %s for %s: %w", wait, path, ErrRepairRunning)
		}
		return nil, fmt.Errorf("take %s: moves of sessions held it for %s", path, wait)
	}
	if id != "" && writable {
		at := orderLockOffset(id)
		if err := poll(wait, func() error { return lockOrder(fd, at) }); err != nil {
			unix.Close(fd)
			if err == errWaited {
				return nil, fmt.Errorf("wait %s for byte %d of %s, which orders session %s's moves: another process holds it (one stopped in the middle of a move?)", wait, at, path, id)
			}
			return nil, fmt.Errorf("lock byte %d of %s: %w", at, path, err)
		}
	}
	return func() { unix.Close(fd) }, nil
}

// errWaited is poll's error when wait passed.
var errWaited = errors.New("waited in vain")

// poll calls try until it succeeds, fails other than by finding the lock
// held (EWOULDBLOCK, EAGAIN, EACCES), or wait has passed since the first
// time it found it held (errWaited), backing off from 100µs to 10ms.
func poll(wait time.Duration, try func() error) error {
	var deadline time.Time
	pause := 100 * time.Microsecond
	for {
		err := try()
		switch err {
		case nil:
			return nil
		case unix.EINTR:
			continue
		case unix.EWOULDBLOCK, unix.EACCES: // EAGAIN is EWOULDBLOCK on Linux
		default:
			return err
		}
		now := time.Now()
		if deadline.IsZero() {
			deadline = now.Add(wait)
		}
		if !now.Before(deadline) {
			return errWaited
		}
		time.Sleep(min(pause, deadline.Sub(now)))
		pause = min(2*pause, 10*time.Millisecond)
	}
}

// enterRepair holds the move guard exclusive (no move of a session file is
// in flight on this machine until leave) and, on a board in a git work
// tree, that work tree's sync gate shared, as a move does (see EnterMove).
func (b *Board) enterRepair() (leave func(), err error) {
	return b.enterGuardAndGate(unix.LOCK_EX, repairGuardWait, "")
}
