package cli

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/pickup-dev/pickup/internal/arbiter/postgres"
	"github.com/pickup-dev/pickup/internal/boardhook"
	"github.com/pickup-dev/pickup/sessions"
)

// pgOpen opens b's database at url as a command's arbiter does, bounded
// by the network deadline ($PICKUP_NETWORK_TIMEOUT, else config.yaml's
// network_timeout): for the commands that open it themselves (doctor,
// init --shared, history).
func (r *run) pgOpen(ctx context.Context, b *sessions.Board, url string, cfg sessions.Config) (*postgres.Board, error) {
	timeout, err := r.shared.netTimeout()
	if err != nil {
		return nil, err
	}
	if timeout == 0 {
		timeout = cfg.NetworkTimeout
	}
	return postgres.OpenWith(ctx, b, url, postgres.Options{NetworkTimeout: timeout})
}

// pgFindings is what pickup doctor checks on a PostgreSQL board (its
// kind's findings): that the helper every command needs is installed
// where pickup looks for it, and that the database answers (connecting,
// and the schema this pickup knows). Either failing makes every command on
// the board fail (exit 8): the finding says why and what to do. The board
// directory itself is checked as on any board.
func (r *run) pgFindings(b *sessions.Board, cfg sessions.Config) []sessions.Finding {
	finding := func(msg string) []sessions.Finding {
		return []sessions.Finding{{Kind: "postgres", Path: filepath.Join(b.Dir, sessions.ConfigFile), Message: msg}}
	}
	if _, err := postgres.FindHelper(); err != nil {
		return finding(fmt.Sprintf("this board's database (shared: %s) is reached through the helper %s, which is neither beside pickup nor on PATH: every command on this board fails; install it beside pickup: go install github.com/pickup-dev/pickup/internal/cmd/pickup-postgres@latest (the release archives and the npm package ship it beside pickup)",
			cfg.Shared, postgres.HelperName))
	}
	// Open sets the board's arbiter and id suffix: doctor keeps its own.
	arbiter, suffix := boardhook.ArbiterOf[sessions.Event](b), boardhook.IDSuffixOf(b)
	defer func() { boardhook.SetArbiter(b, arbiter); boardhook.SetIDSuffix(b, suffix) }()
	pg, err := r.pgOpen(context.Background(), b, cfg.Shared, cfg)
	if err != nil {
		return finding(fmt.Sprintf("the database does not answer: %v; %s", err, hintOf(err)))
	}
	pg.Close()
	return nil
}
