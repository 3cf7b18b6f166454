package cli

// Heartbeats of an owner on a PostgreSQL board from the Claude Code
// hooks: like a git-shared board's, in a detached `pickup shared-beat`
// (a hook never waits for the database, nor for a helper to start), at
// most once per a quarter of the stale period. The heartbeat lands in
// pickup_beats on the server's clock; other machines renew their view of
// the owner when it moves, so a live session there is not reaped, and a
// silent one is, `stale` after its last heartbeat.

import (
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/pickup-dev/pickup/internal/pgboard"
	"github.com/pickup-dev/pickup/sessions"
)

// spawnPGBeat is spawnBeat on a PostgreSQL board.
func (r *run) spawnPGBeat(b *sessions.Board, owner string, cfg *sessions.Config) {
	if !pgboard.BeatDue(b.Dir, owner, beatEvery(cfg), time.Now()) {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	cmd := exec.Command(exe, "--dir", b.Dir, "--owner", owner, "shared-beat")
	cmd.Dir = b.Dir
	cmd.Env = os.Environ()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if cmd.Start() == nil {
		_ = cmd.Process.Release()
	}
}

// pgSharedBeat is shared-beat on a PostgreSQL board: it records owner's
// heartbeat in the database if still due, and nothing else.
func (r *run) pgSharedBeat(b *sessions.Board, owner string) error {
	cfg := r.shared.cfg
	if !pgboard.BeatDue(b.Dir, owner, beatEvery(cfg), time.Now()) {
		return nil
	}
	return pgboard.Heartbeat(b, cfg.Shared, owner)
}
