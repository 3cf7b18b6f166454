// Package location is the one place that reads config.yaml's shared: and
// opens the arbiter it names (as restic's location registry picks a
// backend): nothing for a board that is not shared (arbiter.Local), a
// PostgreSQL database for a libpq URL (internal/arbiter/postgres), a git remote's
// board branch for anything else (internal/arbiter/gitremote).
//
// Its guarantee: Open either attaches the arbiter to the board (every
// transition of the board then goes through it) and brings the board in
// line with it, or fails and attaches nothing. It has no package-level
// state and registers nothing: the kinds are a switch.
package location

import (
	"context"
	"fmt"
	"time"

	"github.com/pickup-dev/pickup/internal/arbiter/dburl"

	"github.com/pickup-dev/pickup/internal/arbiter"
	"github.com/pickup-dev/pickup/internal/arbiter/gitremote"
	"github.com/pickup-dev/pickup/internal/arbiter/postgres"
	"github.com/pickup-dev/pickup/internal/proc"
	"github.com/pickup-dev/pickup/sessions"
)

// IsDatabase reports whether shared (config.yaml's shared:) names a
// PostgreSQL database rather than a git remote.
func IsDatabase(shared string) bool { return dburl.IsURL(shared) }

// Options are Open's and Follow's (see arbiter.Options).
type Options = arbiter.Options

// Open attaches b's arbiter, as cfg (b's config.yaml) names it, and
// brings the board in line with it (unless o.NoReady). A board that is
// not shared gets arbiter.Local, which does nothing.
func Open(ctx context.Context, b *sessions.Board, cfg sessions.Config, o Options) (arbiter.Arbiter, error) {
	var a arbiter.Arbiter
	switch {
	case cfg.Shared == "":
		return arbiter.Local{}, nil
	case IsDatabase(cfg.Shared):
		// Its errors are the database's own (the command line shows them
		// as they are; claim.New names the board), as a git remote's.
		pa, err := postgres.OpenArbiter(ctx, b, cfg, o)
		if err != nil {
			return nil, err
		}
		a = pa
	default:
		ga, err := gitremote.OpenArbiter(ctx, b, cfg, o)
		if err != nil {
			return nil, err
		}
		a = ga
	}
	if !o.NoReady {
		if err := a.Ready(ctx, o.TrustRecent); err != nil {
			_ = a.Close()
			return nil, err
		}
	}
	return a, nil
}

// Follow is the follower of b's arbiter, as cfg (b's config.yaml) names
// it, for a live view (see arbiter.Follower); nil for a board that is not
// shared. It attaches no arbiter: the view only shows. A database that
// does not answer yet is no error (the follower connects at its first
// Refresh); a git-shared board that is not in a clone of its remote is.
func Follow(ctx context.Context, b *sessions.Board, cfg sessions.Config, o Options) (arbiter.Follower, error) {
	switch {
	case cfg.Shared == "":
		return nil, nil
	case IsDatabase(cfg.Shared):
		timeout := cfg.NetworkTimeout
		if o.NetTimeout > 0 {
			timeout = o.NetTimeout
		}
		every := o.PollEvery
		if every <= 0 {
			every = time.Second
		}
		return postgres.NewFollower(b, cfg.Shared, postgres.Options{NetworkTimeout: timeout}, every, o.Leases), nil
	default:
		sb, err := gitremote.OpenBoard(ctx, b, cfg.Shared, cfg.SharedBranch, cfg, o)
		if err != nil {
			return nil, fmt.Errorf("open shared board (shared: %s in config.yaml): %w", cfg.Shared, err)
		}
		return gitremote.NewFollower(ctx, sb, cfg), nil
	}
}

// KindOf is the kind of arbiter that shared (config.yaml's shared:, or
// init --shared's target) names: a libpq URL is a PostgreSQL database,
// anything else (and "", init --shared's default) a git remote.
func KindOf(shared string) arbiter.Kind {
	if IsDatabase(shared) {
		return postgres.Kind{}
	}
	return gitremote.Kind{}
}

// NotSharedHere refuses a board whose config.yaml says it is not shared
// in a clone that joined it as a git-shared board (config.yaml lost it);
// nil otherwise. It runs no git.
func NotSharedHere(b *sessions.Board, cfg sessions.Config) error {
	return gitremote.NotSharedHere(b, cfg)
}

// ViewHolders are the processes of the owners that work in other boards
// of this machine, read from their leases, for a view that shows a
// git-shared board as this clone last fetched it.
func ViewHolders(b *sessions.Board) func(owner string) []proc.Process {
	return gitremote.ViewHolders(b, "")
}

// PushHistory pushes the history of b's arbiter to git now, if it keeps
// one there (a PostgreSQL board's history: REMOTE): the detached pusher
// that Options.OnHistoryDue starts calls it. Its failure is recorded in
// the board's runtime folder, for status.
func PushHistory(b *sessions.Board, cfg sessions.Config, o Options) error {
	if !IsDatabase(cfg.Shared) {
		return nil
	}
	return postgres.PushHistory(b, cfg, o)
}

// Redact is url without its password.
func Redact(url string) string {
	r, _ := dburl.Redact(url)
	return r
}
