package sessions

import (
	"sync"

	"github.com/pickup-dev/pickup/internal/gitx"
)

// gitGate is the sync gate of the git work tree that holds a board, found
// on the board's first move.
type gitGate struct {
	once sync.Once
	gate *gitx.Gate // nil: the board is in no git work tree
}

// EnterMove is called around every move of a session file on the board
// (a transition's rename, a new session's publication, a doctor repair);
// leave ends it. On a board inside a git work tree it holds that work
// tree's sync gate shared, so that no move happens while `pickup sync`
// pulls (its rebase shows this clone's claimed sessions in todo/ again),
// and it refuses with a *gitx.StoppedError (gitx.ErrStopped) while the
// work tree is in the middle of a stopped rebase, merge, cherry-pick or
// revert; it fails with gitx.ErrSyncRunning if a sync holds the gate for
// longer than gitx.DefaultGateWait. Moves never wait for each other.
//
// Its cost is an open, a flock and a close, and a stat per kind of stopped
// operation; outside a git work tree, nothing (after a few lstat calls on
// the first move to find out).
func (b *Board) EnterMove() (leave func(), err error) {
	b.git.once.Do(func() { b.git.gate = gitx.FindGate(b.Dir) })
	if b.git.gate == nil {
		return func() {}, nil
	}
	return b.git.gate.Enter()
}

// gitStopped returns a *gitx.StoppedError if the board's git work tree is
// in the middle of a stopped operation, else nil (no lock taken).
func (b *Board) gitStopped() error {
	b.git.once.Do(func() { b.git.gate = gitx.FindGate(b.Dir) })
	if b.git.gate == nil {
		return nil
	}
	return b.git.gate.Stopped()
}
