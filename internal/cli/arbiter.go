package cli

// A shared board's arbiter decides, beyond this clone, whether a
// transition stands: the git remote's board branch (pickup init --shared
// REMOTE, internal/arbiter/gitremote) or a PostgreSQL database (pickup init --shared
// postgres://…, internal/arbiter/postgres). The transitions reach it through
// the board's arbiter (internal/boardhook), which each sets when it opens; everything else
// the commands need of it (bring the board in line, keep waiters woken,
// heartbeats, sync, doctor) goes through arbiter.Arbiter, which
// location.Open attaches as it does for every door, and arbiter.Kind
// (kinds.go), so that no command knows which one it has. config.yaml's
// shared: names it, and internal/arbiter/location is the one place that
// tells the kinds apart.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	arbiterapi "github.com/pickup-dev/pickup/internal/arbiter"
	"github.com/pickup-dev/pickup/internal/boardhook"

	"github.com/pickup-dev/pickup/internal/arbiter/location"
	"github.com/pickup-dev/pickup/sessions"
	ucli "github.com/urfave/cli/v2"
)

// kindOf is the kind of arbiter that shared names (location.KindOf: a
// libpq URL is a PostgreSQL database, anything else a git remote), as the
// command line runs its steps (kinds.go).
func kindOf(shared string) kindSteps { return kindSteps{location.KindOf(shared)} }

// sharedMode attaches a shared board's arbiter to the board before the
// command changes anything. Its zero value is ready.
type sharedMode struct {
	proxy  func() string       // Repo.Proxy of the boards it opens (Env.GitProxy)
	getenv func(string) string // Env.Getenv, for $PICKUP_NETWORK_TIMEOUT
	// hostname names this machine in the heartbeats (Env.Hostname).
	hostname func() (string, error)
	// stderr takes the warnings of opening a board (Env.Stderr).
	stderr io.Writer
	// netCfg is config.yaml's network_timeout (ns): read without mu,
	// which ready holds while it opens the board.
	netCfg atomic.Int64
	mu     sync.Mutex
	cfg    *sessions.Config
	arb    arbiterapi.Arbiter // nil: not shared, or not ready yet
	// flushErr: beforeCommand failed (ready refuses to go on).
	flushErr error
	// trustRecent: the command claims or moves sessions (next without
	// --wait, claim, done, release, reopen); see arbiter.ready.
	trustRecent bool
}

func (m *sharedMode) useConfig(cfg sessions.Config) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cfg = &cfg
	m.netCfg.Store(int64(cfg.NetworkTimeout))
}

// config is config.yaml as the command read it (nil before).
func (m *sharedMode) config() *sessions.Config {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cfg
}

// ready makes b's transitions go through its arbiter if config.yaml says
// `shared: …`, after bringing the board in line with it: a session made
// or moved in another clone is seen here first.
func (m *sharedMode) ready(b *sessions.Board) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cfg == nil || m.arb != nil {
		return nil
	}
	if m.flushErr != nil {
		return m.flushErr
	}
	if m.cfg.Shared == "" {
		// Not shared, says config.yaml; unless the clone joined a
		// shared board (its git config says so) and the file was lost.
		return notSharedHere(b, *m.cfg)
	}
	ctx := context.Background()
	arb, err := kindOf(m.cfg.Shared).open(ctx, m, b, *m.cfg)
	if err != nil {
		return err
	}
	if err := arb.Ready(ctx, m.trustRecent); err != nil {
		boardhook.ClearArbiter(b)
		_ = arb.Close()
		return err
	}
	m.arb = arb
	return nil
}

// arbiter returns the open arbiter, or nil if the board is not shared (or
// ready has not run).
func (m *sharedMode) arbiter() arbiterapi.Arbiter {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.arb
}

// adopt makes arb the command's arbiter (a command that opened one
// without ready: shared-beat).
func (m *sharedMode) adopt(arb arbiterapi.Arbiter) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.arb = arb
}

// isShared reports whether the board's config.yaml says shared:.
func (m *sharedMode) isShared() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cfg != nil && m.cfg.Shared != ""
}

// beforeCommand runs the kind's step before any command reads the board.
func (m *sharedMode) beforeCommand(b *sessions.Board, cfg sessions.Config) error {
	if cfg.Shared == "" {
		return nil
	}
	err := kindOf(cfg.Shared).beforeCommand(m, b, cfg)
	m.mu.Lock()
	m.flushErr = err
	m.mu.Unlock()
	return err
}

// sharedHeartbeat records owner's heartbeat with the arbiter, at most once
// per a quarter of the stale period (force: now), so that other machines
// do not reap a live owner of this one. A failure is a warning: the claim
// stands.
func (r *run) sharedHeartbeat(owner string, force bool) {
	arb := r.shared.arbiter()
	if arb == nil {
		return
	}
	every := 0 * time.Second
	if !force {
		every = beatEvery(r.shared.config())
	}
	if err := arb.Heartbeat(context.Background(), owner, every); err != nil {
		fmt.Fprintf(r.env.Stderr, "pickup: warning: %s\n", sanitize(err.Error()))
	}
}

// initShared is `pickup init --shared [TARGET]`: TARGET is a git remote
// (default: the one this clone joined, else origin) or a PostgreSQL URL.
func (r *run) initShared(c *ucli.Context) error {
	if c.NArg() > 1 {
		return usageError("init --shared takes at most one argument, the remote (default: the one this clone joined, else origin) or a postgres:// URL")
	}
	target := ""
	if c.NArg() == 1 {
		target = c.Args().First()
	}
	return kindOf(target).initBoard(r, c, target)
}

// syncShared is `pickup sync` on a shared board.
func (r *run) syncShared(b *sessions.Board, repair bool) error {
	cfg := r.shared.config()
	kind := kindOf(cfg.Shared)
	if repair {
		return kind.repair(r, b, *cfg)
	}
	if err := r.shared.ready(b); err != nil {
		return err
	}
	rep, err := r.shared.arbiter().Sync(context.Background())
	if err != nil {
		return err
	}
	return r.printReport(rep)
}

// sharedFindings are doctor's findings about a shared board.
func (r *run) sharedFindings(b *sessions.Board) []sessions.Finding {
	cfg, err := b.Config()
	if err != nil {
		return nil // configFindings reports it
	}
	if cfg.Shared == "" {
		if err := notSharedHere(b, cfg); err != nil {
			return []sessions.Finding{{Kind: "shared", Path: configPath(b), Message: err.Error() + "; " + hintOf(err)}}
		}
		return nil
	}
	return kindOf(cfg.Shared).findings(r, b, cfg)
}

// viewBoard is board for commands that only show it (list, show, status):
// where the kind of arbiter makes it cheap, it first brings the board
// directory in line, so that owners on every machine are shown. An
// arbiter that does not answer is a warning: the board's last view is
// shown.
func (r *run) viewBoard() (*sessions.Board, error) {
	b, err := r.board()
	if err != nil {
		return b, err
	}
	cfg := r.shared.config()
	if cfg == nil || cfg.Shared == "" {
		return b, nil
	}
	if !kindOf(cfg.Shared).viewsFresh() {
		// A git-shared board is shown as this clone last saw it; the
		// owners that work in other clones of this machine are judged by
		// their processes, read from those clones' leases.
		if boardhook.HeardOf(b) == nil {
			boardhook.SetHeard(b, location.ViewHolders(b))
		}
		return b, nil
	}
	if err := r.shared.ready(b); err != nil {
		fmt.Fprintf(r.env.Stderr, "pickup: warning: showing this board's last view of %s: %s\n", cfg.Shared, sanitize(err.Error()))
	}
	return b, nil
}

// notSharedHere: see location.NotSharedHere.
func notSharedHere(b *sessions.Board, cfg sessions.Config) error {
	return location.NotSharedHere(b, cfg)
}

// notShared refuses a command that would treat the board as a board of
// this clone only (sync of the code branch) when the clone joined it as a
// shared board and config.yaml lost that.
func (m *sharedMode) notShared(b *sessions.Board) error {
	m.mu.Lock()
	cfg := m.cfg
	m.mu.Unlock()
	if cfg == nil {
		return nil
	}
	return notSharedHere(b, *cfg)
}

func hintOf(err error) string {
	var h interface{ Hint() string }
	if errors.As(err, &h) {
		return h.Hint()
	}
	return ""
}
