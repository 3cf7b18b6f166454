package pgboard

import (
	"os"
	"path/filepath"
	"time"

	"github.com/pickup-dev/pickup/sessions"
)

// Heartbeats that a Claude Code hook sends: the hook starts a detached
// `pickup shared-beat` at most once per interval (BeatDue: one stat), and
// that process records the heartbeat with Beat (the owner's row in
// pickup_beats and its named locks, on the server's clock).

// beatMark is the file whose mtime is owner's last heartbeat recorded in
// the database from this board (runtime directory, never committed).
func beatMark(boardDir, owner string) string {
	return filepath.Join(boardDir, sessions.RuntimeDirName, "pg-beats", owner)
}

// BeatDue reports whether owner's last heartbeat from this board is
// older than every (or never happened).
func BeatDue(boardDir, owner string, every time.Duration, now time.Time) bool {
	info, err := os.Lstat(beatMark(boardDir, owner))
	if err != nil || every <= 0 {
		return true
	}
	age := now.Sub(info.ModTime())
	return age < 0 || age >= every
}

// markBeat records that owner's heartbeat from this board was recorded
// in the database now.
func markBeat(boardDir, owner string) {
	mark := beatMark(boardDir, owner)
	_ = os.MkdirAll(filepath.Dir(mark), 0o755)
	if err := os.WriteFile(mark, nil, 0o644); err == nil {
		now := time.Now()
		_ = os.Chtimes(mark, now, now)
	}
}
