package sessions

import (
	"sync"
	"time"

	"github.com/pickup-dev/pickup/internal/gitx"
	"golang.org/x/sys/unix"
)

// gitGate is the sync gate of the git work tree that holds a board, found
// on the board's first move.
type gitGate struct {
	once sync.Once
	gate *gitx.Gate // nil: the board is in no git work tree
}

// EnterMove is called around every move of a session file on the board
// (a transition's rename, a new session's publication, a rewrite of a
// claimed session); leave ends it. It holds the board's move guard shared
// (see moveGuardFile), so that no move happens while a repair (doctor
// --fix) looks again and moves what it does not keep; it fails with
// ErrRepairRunning if a repair holds the guard for longer than
// moveGuardWait. On a board inside a git work tree it also holds that work
// tree's sync gate shared, so that no move happens while `pickup sync`
// pulls (its rebase shows this clone's claimed sessions in todo/ again),
// and it refuses with a *gitx.StoppedError (gitx.ErrStopped) while the
// work tree is in the middle of a stopped rebase, merge, cherry-pick or
// revert; it fails with gitx.ErrSyncRunning if a sync holds the gate for
// longer than gitx.DefaultGateWait. Moves never wait for each other.
//
// Its cost is an open, a flock and a close for the guard; in a git work
// tree as much again for the gate, and a stat per kind of stopped
// operation.
func (b *Board) EnterMove() (leave func(), err error) {
	return b.enterGuardAndGate(unix.LOCK_SH, moveGuardWait, "")
}

// enterMoveOf is EnterMove for a move of session id that writes its line
// in the event log before leave: it also holds the byte of the guard file
// that orders id's moves (see moveGuardFile), so that the log lists the
// session's moves in the order of their renames. pickup's own packages
// reach it through boardhook.EnterMoveOf. A caller must not hold it for
// the same session twice at once: the second waits for the first.
func (b *Board) enterMoveOf(id string) (leave func(), err error) {
	return b.enterGuardAndGate(unix.LOCK_SH, moveGuardWait, id)
}

// enterGuardAndGate holds the move guard as how says (shared for a move,
// exclusive for a repair) and, on a board in a git work tree, that work
// tree's sync gate shared; leave releases both, the gate first. It is the
// one path for moves and repairs, so both take the two locks in the same
// order.
func (b *Board) enterGuardAndGate(how int, wait time.Duration, id string) (leave func(), err error) {
	unguard, err := b.enterGuard(how, wait, id)
	if err != nil {
		return nil, err
	}
	b.git.once.Do(func() { b.git.gate = findGate(b.Dir) })
	if b.git.gate == nil {
		return unguard, nil
	}
	ungate, err := b.git.gate.Enter()
	if err != nil {
		unguard()
		return nil, err
	}
	return func() { ungate(); unguard() }, nil
}

func findGate(dir string) *gitx.Gate { return gitx.FindGate(dir) }

// gitStopped returns a *gitx.StoppedError if the board's git work tree is
// in the middle of a stopped operation, else nil (no lock taken).
func (b *Board) gitStopped() error {
	b.git.once.Do(func() { b.git.gate = findGate(b.Dir) })
	if b.git.gate == nil {
		return nil
	}
	return b.git.gate.Stopped()
}
