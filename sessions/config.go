package sessions

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/pickup-dev/pickup/internal/fsx"
)

// ConfigFile is the board's settings file, <board>/config.yaml. It is
// committed with the board, so every clone and worktree shares it.
const ConfigFile = "config.yaml"

// Config holds the board's settings. Every field has a default; a missing
// file means all defaults.
type Config struct {
	// Stale is how long an owner whose liveness cannot be checked may go
	// without a heartbeat before reap returns its sessions (default 30m).
	Stale time.Duration
	// Commit makes every transition a git commit (default false).
	Commit bool
	// KeepOnSessionEnd keeps an agent's claims when its Claude Code
	// session ends instead of releasing them (default false).
	KeepOnSessionEnd bool
	// AutoNext makes pickup's Stop hook feed an interactive Claude Code
	// session that stops holding nothing the next session by priority
	// (default false; one session opts in or out with $PICKUP_AUTO_NEXT).
	AutoNext bool
	// MaxAttempts is how many times a session may fail under pickup work
	// or be reaped from a dead owner before it is set aside in failed/
	// (0: the default, 3; a negative value: never).
	MaxAttempts int
	// Shared names the git remote whose board branch arbitrates every
	// transition (pickup init --shared); "" for a board of this clone only.
	Shared string
	// SharedBranch is the remote's branch that holds a shared board
	// (default "pickup"); SharedFetch how often next --wait fetches it
	// (default 10s).
	SharedBranch string
	SharedFetch  time.Duration
	// NetworkTimeout is how long pickup waits for a git remote that
	// moves no bytes, and the most one fetch or push of a shared board
	// may take (0: the default, 30s).
	NetworkTimeout time.Duration
	// History names the git remote whose board branch (SharedBranch)
	// receives a PostgreSQL board's history in batches ("off": none;
	// pickup init --shared postgres://… sets it to the clone's remote).
	History string
	// HistoryEvery is the least time between two history pushes (0: the
	// default, a minute).
	HistoryEvery time.Duration
	// LineupAge is how long a one-shot next trusts a full listing of
	// todo/ (Board.LineupAge): 0 is the default (1s); "0s" in the file
	// is stored as a negative value, listing every time.
	LineupAge time.Duration
}

// The range of Config.NetworkTimeout: under a second, a healthy remote
// across a continent would be given up; over ten minutes, an agent would
// wait that long behind a remote that stopped answering.
const (
	minNetworkTimeout = time.Second
	maxNetworkTimeout = 10 * time.Minute
)

// Config reads and checks <board>/config.yaml. A mistake in it (an
// unknown setting, a value of the wrong kind, YAML that does not parse) is
// a *ConfigError, matching ErrBadConfig, that lists each one with its line.
// A link, named pipe or device in its place is refused (an
// *UnsafePathError), never followed or waited on.
func (b *Board) Config() (Config, error) {
	path := filepath.Join(b.Dir, ConfigFile)
	data, err := fsx.ReadRegular(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Config{}, nil
	}
	if err != nil {
		return Config{}, fmt.Errorf("read %s: %w", path, err)
	}
	c, _, err := parseConfig(path, data)
	return c, err
}
