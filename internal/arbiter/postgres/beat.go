package postgres

import (
	"time"

	"github.com/pickup-dev/pickup/internal/beatmark"
)

// Heartbeats that a Claude Code hook sends: the hook starts a detached
// `pickup shared-beat` at most once per interval (BeatDue: one stat), and
// that process records the heartbeat with Beat (the owner's row in
// pickup_beats and its named locks, on the server's clock).

// beatKind is the folder of the runtime directory where this board marks
// the last heartbeat of each owner it recorded in the database (package
// beatmark).
const beatKind = "pg-beats"

// BeatDue reports whether owner's last heartbeat from this board is
// older than every (or never happened): one stat, no database.
func BeatDue(boardDir, owner string, every time.Duration, now time.Time) bool {
	return beatmark.Due(boardDir, beatKind, owner, every, now)
}

// markBeat records that owner's heartbeat from this board was recorded
// in the database now.
func markBeat(boardDir, owner string) { beatmark.Mark(boardDir, beatKind, owner) }
