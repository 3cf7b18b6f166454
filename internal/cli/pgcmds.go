package cli

// A board that PostgreSQL arbitrates (pickup init --shared postgres://…):
// the transitions go through the database, whose conditional UPDATE is
// the compare-and-swap. See internal/arbiter/postgres.

import (
	"context"
	"fmt"
	"time"

	"github.com/pickup-dev/pickup/internal/arbiter/dburl"
	"github.com/pickup-dev/pickup/internal/boardhook"

	"github.com/pickup-dev/pickup/internal/arbiter/postgres"
	"github.com/pickup-dev/pickup/internal/leasebook"
	"github.com/pickup-dev/pickup/sessions"
	ucli "github.com/urfave/cli/v2"
)

// pgKind is a board whose ownership a PostgreSQL database decides.
type pgKind struct{}

// pgArbiter is a PostgreSQL database as a board's arbiter.
type pgArbiter struct{ pg *postgres.Board }

// open starts the helper, connects and makes the database b's arbiter.
func (pgKind) open(ctx context.Context, m *sharedMode, b *sessions.Board, cfg sessions.Config) (_ arbiter, err error) {
	opts := pgOptions(&cfg, b.Dir) // pghistory.go
	if opts.NetworkTimeout, err = m.netTimeout(); err != nil {
		return nil, err
	}
	pg, err := postgres.OpenWith(ctx, b, cfg.Shared, opts)
	if err != nil {
		return nil, err
	}
	pg.Leases = leasebook.Of(b)
	if m.hostname != nil {
		pg.Host, _ = m.hostname() // named with its heartbeats
	}
	if pg.Warning != "" && m.stderr != nil {
		fmt.Fprintf(m.stderr, "pickup: warning: %s\n", sanitize(pg.Warning))
	}
	return &pgArbiter{pg: pg}, nil
}

// beforeCommand: every transition is in the database once it stands;
// nothing is queued.
func (pgKind) beforeCommand(*sharedMode, *sessions.Board, sessions.Config) error { return nil }

// beatDue: a hook starts a detached heartbeat when this board last
// recorded owner's more than every ago (one stat; see postgres.BeatDue).
func (pgKind) beatDue(dir, owner string, every time.Duration, now time.Time) bool {
	return postgres.BeatDue(dir, owner, every, now)
}

func (pgKind) viewsFresh() bool { return true }

// findings: the helper installed and the database answering (pgdoctor.go);
// doctor looks at the board directory as on any board.
func (pgKind) findings(r *run, b *sessions.Board, cfg sessions.Config) []sessions.Finding {
	return r.pgFindings(b, cfg)
}

func (pgKind) repair(*run, *sessions.Board, sessions.Config) error {
	return usageError("--repair is for a board shared through a git remote; PostgreSQL keeps its own history")
}

// ready brings the board directory in line with the database (one read
// of what changed).
func (a *pgArbiter) ready(ctx context.Context, _ bool) error {
	_, err := a.pg.Refresh(ctx)
	return err
}

// answerAgain: ready always read the database.
func (a *pgArbiter) answerAgain(context.Context, error, ...error) (bool, error) { return false, nil }

func (a *pgArbiter) close() { a.pg.Close() }

// heartbeat records owner's heartbeat in the database (the server's
// clock judges it); one round trip, so every is not needed.
func (a *pgArbiter) heartbeat(_ context.Context, owner string, _ time.Duration) error {
	return a.pg.Beat(owner)
}

// settle: the database named where it has the session already.
func (a *pgArbiter) settle(_ context.Context, err error) error { return err }

// sync imports sessions made by hand (a todo/*.md that the database does
// not have) and brings the board in line: every transition is in the
// database already.
func (a *pgArbiter) sync(ctx context.Context, r *run) error {
	pg := a.pg
	imported, total, err := pg.Join(ctx, false)
	if err != nil {
		return err
	}
	history, line := r.syncHistory(pg) // pghistory.go
	if r.json {
		return r.printJSON(map[string]any{"database": pg.URL, "sessions": total, "imported": imported, "shared": true, "history": history})
	}
	r.printf("postgres board: in line with %s (%d sessions, %d imported)\n", pg.URL, total, imported)
	r.printLines(line) // pghistory_rewind.go
	return nil
}

// watch: see postgres.Arbiter.Watch (LISTEN/NOTIFY, and a fallback poll).
func (a *pgArbiter) watch(ctx context.Context, warn func(error)) func() {
	return postgres.Arbiter{PG: a.pg}.Watch(ctx, warn)
}

// initBoard is `pickup init --shared postgres://…`: it connects (creating
// or migrating the schema), records the URL without its password in
// config.yaml, and puts the board's sessions into the database.
func (pgKind) initBoard(r *run, _ *ucli.Context, url string) error {
	redacted, hadPassword := dburl.Redact(url)
	dir, err := r.boardDir()
	if err != nil {
		return err
	}
	b, err := sessions.Init(dir)
	if err != nil {
		return err
	}
	cfg, err := b.Config()
	if err != nil {
		return err
	}
	if cfg.Shared != "" && cfg.Shared != redacted {
		return refuse(fmt.Errorf("init --shared %s: the board is shared through %s already (config.yaml)", redacted, cfg.Shared), "edit shared: in config.yaml if the database moved")
	}
	r.noSync = r.noSync || b.NoSync
	ctx := context.Background()
	pg, err := r.pgOpen(ctx, b, url, cfg)
	if err != nil {
		return err
	}
	pg.Leases = leasebook.Of(b)
	defer pg.Close()
	boardhook.ClearArbiter(b) // joining is not a transition
	if cfg.Shared == "" {
		if err := appendConfig(b, "shared: "+redacted+"\n"); err != nil {
			return err
		}
	}
	imported, total, err := pg.Join(ctx, true)
	if err != nil {
		return err
	}
	historyLine, err := r.initHistory(b) // pghistory.go
	if err != nil {
		return err
	}
	if hadPassword {
		fmt.Fprintf(r.env.Stderr, "pickup: warning: the password in the URL was not written to config.yaml; give it to later commands in ~/.pgpass or $PGPASSWORD\n")
	}
	if r.json {
		return r.printJSON(map[string]any{"dir": b.Dir, "database": redacted, "sessions": total, "imported": imported, "history": historyLine})
	}
	r.printf("postgres board ready at %s: %s (%d sessions, %d imported from this board)\n%s\n", b.Dir, redacted, total, imported, historyLine)
	return nil
}
