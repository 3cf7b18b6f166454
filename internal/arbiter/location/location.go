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

// Options are Open's.
type Options struct {
	// Leases are this machine's lease records (claim's), where the
	// arbiter records reaps and heartbeats of owners elsewhere.
	Leases arbiter.Leases
	// NetTimeout bounds every git command that talks to a remote, and
	// how long a database's requests ride over its failures (0:
	// config.yaml's network_timeout, else the default).
	NetTimeout time.Duration
	// Host names this machine in heartbeats ("": os.Hostname).
	Host string
	// Warn takes what opening survives (a PostgreSQL board that does not
	// use the machine's daemon); nil drops it.
	Warn func(string)
	// NoReady: attach without bringing the board in line (the caller
	// calls Ready itself).
	NoReady bool
	// TrustRecent is Ready's (see arbiter.Arbiter.Ready).
	TrustRecent bool
}

// Open attaches b's arbiter, as cfg (b's config.yaml) names it, and
// brings the board in line with it (unless o.NoReady). A board that is
// not shared gets arbiter.Local, which does nothing.
func Open(ctx context.Context, b *sessions.Board, cfg sessions.Config, o Options) (arbiter.Arbiter, error) {
	var a arbiter.Arbiter
	switch {
	case cfg.Shared == "":
		return arbiter.Local{}, nil
	case IsDatabase(cfg.Shared):
		timeout := cfg.NetworkTimeout
		if o.NetTimeout > 0 {
			timeout = o.NetTimeout
		}
		pg, err := postgres.OpenWith(ctx, b, cfg.Shared, postgres.Options{NetworkTimeout: timeout})
		if err != nil {
			return nil, fmt.Errorf("open board %s (shared: %s in config.yaml): %w", b.Dir, Redact(cfg.Shared), err)
		}
		pg.Leases = o.Leases
		if o.Host != "" {
			pg.Host = o.Host
		}
		if pg.Warning != "" && o.Warn != nil {
			o.Warn(pg.Warning)
		}
		a = postgres.Arbiter{PG: pg}
	default:
		sb, err := gitremote.Open(ctx, b, cfg.Shared, cfg.SharedBranch)
		if err != nil {
			boardhook.ClearArbiter(b)
			return nil, fmt.Errorf("open board %s (shared: %s in config.yaml; a shared board must be in a clone of the repository whose remote holds it): %w", b.Dir, cfg.Shared, err)
		}
		sb.Leases = o.Leases
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

// Redact is url without its password.
func Redact(url string) string {
	r, _ := dburl.Redact(url)
	return r
}

func hostname() (string, error) { return os.Hostname() }
