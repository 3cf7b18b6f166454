package cli

import "github.com/pickup-dev/pickup/sessions"

// transitionsBeat is a kind of arbiter whose transitions record their
// owner's heartbeat themselves (a PostgreSQL board: one statement), so a
// claim needs no detached heartbeat; the hooks, which make no
// transition, still start one.
type transitionsBeat interface{ transitionsBeat() }

func (pgKind) transitionsBeat() {}

// spawnClaimBeat is spawnBeat after a claim registered its owner.
func (r *run) spawnClaimBeat(b *sessions.Board, owner string) {
	if cfg := r.shared.config(); cfg != nil {
		if _, ok := kindOf(cfg.Shared).(transitionsBeat); ok {
			return
		}
	}
	r.spawnBeat(b, owner)
}
