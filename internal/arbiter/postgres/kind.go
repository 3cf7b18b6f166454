package postgres

// A board that PostgreSQL arbitrates (pickup init --shared postgres://…):
// the steps a front end takes before or without an open arbiter
// (arbiter.Kind), and what the open one says of itself (Sync, Status,
// Heard, in asarbiter.go).

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/pickup-dev/pickup/internal/arbiter"
	"github.com/pickup-dev/pickup/internal/arbiter/dburl"
	"github.com/pickup-dev/pickup/internal/boardhook"
	"github.com/pickup-dev/pickup/sessions"
)

// Kind is a board whose ownership a PostgreSQL database decides.
type Kind struct{}

var _ arbiter.Kind = Kind{}

// OpenArbiter opens b's database (config.yaml's shared:) as its
// arbiter, bounded by the network deadline (o.NetTimeout, else
// config.yaml's network_timeout), with the history hook config.yaml asks
// for when the front end pushes history (o.OnHistoryDue).
func OpenArbiter(ctx context.Context, b *sessions.Board, cfg sessions.Config, o arbiter.Options) (Arbiter, error) {
	opts := historyOptions(&cfg, b.Dir, o)
	opts.NetworkTimeout = netTimeout(cfg, o)
	pg, err := OpenWith(ctx, b, cfg.Shared, opts)
	if err != nil {
		return Arbiter{}, err
	}
	pg.Leases = o.Leases
	if o.Host != "" {
		pg.Host = o.Host // named with its heartbeats
	}
	if pg.Warning != "" && o.Warn != nil {
		o.Warn(pg.Warning)
	}
	return Arbiter{PG: pg, cfg: cfg, opts: o}, nil
}

// Init is `pickup init --shared postgres://…`: it connects (creating or
// migrating the schema), records the URL without its password in
// config.yaml, and puts the board's sessions into the database.
func (Kind) Init(ctx context.Context, b *sessions.Board, url string, o arbiter.Options) (arbiter.Report, error) {
	redacted, hadPassword := dburl.Redact(url)
	cfg, err := b.Config()
	if err != nil {
		return arbiter.Report{}, err
	}
	if cfg.Shared != "" && cfg.Shared != redacted {
		return arbiter.Report{}, &arbiter.Advice{Err: fmt.Errorf("init --shared %s: the board is shared through %s already (config.yaml)", redacted, cfg.Shared),
			Fix: "edit shared: in config.yaml if the database moved; nothing was changed", Code: 2}
	}
	pg, err := OpenWith(ctx, b, url, Options{NetworkTimeout: netTimeout(cfg, o)})
	if err != nil {
		return arbiter.Report{}, err
	}
	pg.Leases = o.Leases
	defer pg.Close()
	boardhook.ClearArbiter(b) // joining is not a transition
	if cfg.Shared == "" {
		if err := arbiter.AppendConfig(b, "shared: "+redacted+"\n"); err != nil {
			return arbiter.Report{}, err
		}
	}
	imported, total, err := pg.Join(ctx, true)
	if err != nil {
		return arbiter.Report{}, err
	}
	historyLine, err := initHistory(b)
	if err != nil {
		return arbiter.Report{}, err
	}
	var rep arbiter.Report
	if hadPassword {
		rep.Warnings = append(rep.Warnings, "the password in the URL was not written to config.yaml; give it to later commands in ~/.pgpass or $PGPASSWORD")
	}
	rep.JSON = map[string]any{"dir": b.Dir, "database": redacted, "sessions": total, "imported": imported, "history": historyLine}
	rep.Text = []string{fmt.Sprintf("postgres board ready at %s: %s (%d sessions, %d imported from this board)", b.Dir, redacted, total, imported), historyLine}
	return rep, nil
}

// netTimeout is the network deadline: o's, else config.yaml's.
func netTimeout(cfg sessions.Config, o arbiter.Options) time.Duration {
	if o.NetTimeout > 0 {
		return o.NetTimeout
	}
	return cfg.NetworkTimeout
}

// BeforeCommand: every transition is in the database once it stands;
// nothing is queued.
func (Kind) BeforeCommand(context.Context, *sessions.Board, sessions.Config, arbiter.Options) error {
	return nil
}

// BeatDue: a hook starts a detached heartbeat when this board last
// recorded owner's more than every ago (one stat).
func (Kind) BeatDue(dir, owner string, every time.Duration, now time.Time) bool {
	return BeatDue(dir, owner, every, now)
}

// TransitionsBeat: a transition records its owner's heartbeat in the
// same statement.
func (Kind) TransitionsBeat() bool { return true }

// ViewsFresh: a database read is cheap.
func (Kind) ViewsFresh() bool { return true }

// HoldsLocks: the database holds every named lock too.
func (Kind) HoldsLocks() bool { return true }

// Findings is what pickup doctor checks on a PostgreSQL board: that the
// helper every command needs is installed where pickup looks for it, and
// that the database answers (connecting, and the schema this pickup
// knows). Either failing makes every command on the board fail (exit 8):
// the finding says why and what to do. The board directory itself is
// checked as on any board.
func (Kind) Findings(ctx context.Context, b *sessions.Board, cfg sessions.Config, o arbiter.Options) []sessions.Finding {
	finding := func(msg string) []sessions.Finding {
		return []sessions.Finding{{Kind: "postgres", Path: filepath.Join(b.Dir, sessions.ConfigFile), Message: msg}}
	}
	if _, err := FindHelper(); err != nil {
		return finding(fmt.Sprintf("this board's database (shared: %s) is reached through the helper %s, which is neither beside pickup nor on PATH: every command on this board fails; install it beside pickup: go install github.com/pickup-dev/pickup/internal/cmd/pickup-postgres@latest (the release archives and the npm package ship it beside pickup)",
			cfg.Shared, HelperName))
	}
	// Opening sets the board's arbiter and id suffix: doctor keeps its own.
	arb, suffix := boardhook.ArbiterOf[sessions.Event](b), boardhook.IDSuffixOf(b)
	defer func() { boardhook.SetArbiter(b, arb); boardhook.SetIDSuffix(b, suffix) }()
	pg, err := OpenWith(ctx, b, cfg.Shared, Options{NetworkTimeout: netTimeout(cfg, o)})
	if err != nil {
		hint := ""
		var h interface{ Hint() string }
		if errors.As(err, &h) {
			hint = h.Hint()
		}
		return finding(fmt.Sprintf("the database does not answer: %v; %s", err, hint))
	}
	pg.Close()
	return nil
}

// Repair: a database keeps its own history; there is nothing to repair
// from a remote.
func (Kind) Repair(context.Context, *sessions.Board, sessions.Config, arbiter.Options) (arbiter.Report, error) {
	return arbiter.Report{}, fmt.Errorf("%w: --repair is for a board shared through a git remote; PostgreSQL keeps its own history", arbiter.ErrUsage)
}
