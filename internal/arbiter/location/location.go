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
	"os"
	"time"

	"github.com/pickup-dev/pickup/internal/arbiter/dburl"
	"github.com/pickup-dev/pickup/internal/boardhook"

	"github.com/pickup-dev/pickup/internal/arbiter"
	"github.com/pickup-dev/pickup/internal/arbiter/gitremote"
	"github.com/pickup-dev/pickup/internal/arbiter/postgres"
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
		sb, err := gitremote.Open(ctx, b, cfg.Shared, cfg.SharedBranch)
		if err != nil {
			boardhook.ClearArbiter(b)
			return nil, &arbiter.Advice{Err: err, Code: 2,
				Fix: "a shared board (shared: in config.yaml) must be in a clone of the repository whose remote holds it; nothing was changed"}
		}
		sb.Leases = o.Leases
		if o.GitProxy != "" {
			sb.Repo.Proxy = o.GitProxy
		}
		sb.Repo.NetTimeout = cfg.NetworkTimeout
		if o.NetTimeout > 0 {
			sb.Repo.NetTimeout = o.NetTimeout
		}
		if o.Host != "" {
			sb.Host = o.Host
		} else if h, err := hostname(); err == nil {
			sb.Host = h
		}
		ga := gitremote.NewArbiter(sb, cfg)
		if err := ga.FlushPending(ctx); err != nil {
			_ = ga.Close()
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
		sb, err := gitremote.Open(ctx, b, cfg.Shared, cfg.SharedBranch)
		if err != nil {
			return nil, fmt.Errorf("open shared board (shared: %s in config.yaml): %w", cfg.Shared, err)
		}
		sb.Leases = o.Leases
		if o.GitProxy != "" {
			sb.Repo.Proxy = o.GitProxy
		}
		sb.Repo.NetTimeout = cfg.NetworkTimeout
		if o.NetTimeout > 0 {
			sb.Repo.NetTimeout = o.NetTimeout
		}
		return gitremote.NewFollower(ctx, sb, cfg), nil
	}
}

// KindOf is the kind of arbiter that shared (config.yaml's shared:, or
// init --shared's target) names: a libpq URL is a PostgreSQL database,
// anything else a git remote.
func KindOf(shared string) arbiter.Kind {
	if IsDatabase(shared) {
		return postgres.Kind{}
	}
	return nil // the git remote's Kind: see internal/cli until it moves
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

func hostname() (string, error) { return os.Hostname() }
