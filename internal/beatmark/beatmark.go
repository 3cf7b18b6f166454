// Package beatmark records when an owner's heartbeat last reached a shared
// board's arbiter (the git remote, a PostgreSQL database) from this board,
// as the modification time of an empty file in the board's runtime
// directory, so that a Claude Code hook can tell with one stat, without
// the network, whether another heartbeat is due.
//
// The mark is a hint for spacing heartbeats, not a record: a lost or
// wrong mark only sends one heartbeat early or late (the arbiter judges
// liveness on its own clock).
package beatmark

import (
	"os"
	"path/filepath"
	"time"

	"github.com/pickup-dev/pickup/sessions"
)

// Path is owner's mark on the board at boardDir for one kind of arbiter
// (a folder name of the runtime directory: "shared-beats", "pg-beats").
func Path(boardDir, kind, owner string) string {
	return filepath.Join(boardDir, sessions.RuntimeDirName, kind, owner)
}

// Due reports whether owner's last heartbeat from this board is older
// than every, never happened, or is in the future (a clock set back).
func Due(boardDir, kind, owner string, every time.Duration, now time.Time) bool {
	info, err := os.Lstat(Path(boardDir, kind, owner))
	if err != nil || every <= 0 {
		return true
	}
	age := now.Sub(info.ModTime())
	return age < 0 || age >= every
}

// Mark records that owner's heartbeat from this board reached the
// arbiter now. A failure is ignored: the next hook sends one early.
func Mark(boardDir, kind, owner string) {
	mark := Path(boardDir, kind, owner)
	_ = os.MkdirAll(filepath.Dir(mark), 0o755)
	if err := os.WriteFile(mark, nil, 0o644); err == nil {
		now := time.Now()
		_ = os.Chtimes(mark, now, now)
	}
}
