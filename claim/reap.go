package claim

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/pickup-dev/pickup/internal/fsx"
	"github.com/pickup-dev/pickup/sessions"
)

// Reaped is one session returned to todo/ because its owner was dead or
// stale (or, in a dry run, one that would be).
type Reaped struct {
	ID     string     `json:"id"`
	Owner  string     `json:"owner"`
	State  OwnerState `json:"owner_state"`
	Reason string     `json:"reason"`
	At     time.Time  `json:"at"`
	// Err is why this session could not be returned (a conflict in todo/);
	// empty when it was.
	Err string `json:"error,omitempty"`
}

// ReapOptions choose which owners Reap takes sessions from.
type ReapOptions struct {
	// Stale is how long an owner whose liveness cannot be checked may go
	// without a heartbeat (DefaultStale if zero).
	Stale time.Duration
	// OnlyDead skips stale owners: only owners whose process is known to
	// be gone are reaped (what next does on its own).
	OnlyDead bool
	// DryRun reports what would be reaped and changes nothing.
	DryRun bool
	// Except is never reaped (the caller itself).
	Except string
}

// Reap returns every session of dead or stale owners to todo/, each with
// one no-replace rename: of several concurrent reapers exactly one moves
// each session, the others see it gone and skip it. Each reaped session is
// recorded under .pickup/reaped/<owner>/<id>, so that the owner's later
// done, release or heartbeat of it fails with ErrClaimLost (fencing). A dead
// owner's lease is removed; its sessions are reaped at once.
func (l *Leases) Reap(opts ReapOptions) ([]Reaped, error) {
	owners, err := l.Board.Owners()
	if err != nil {
		return nil, err
	}
	var out []Reaped
	for _, owner := range owners {
		if owner == opts.Except {
			continue
		}
		if opts.OnlyDead {
			// Cheap path for next: only an owner with a lease can be
			// known dead.
			if _, err := os.Stat(l.path(owner)); err != nil {
				continue
			}
		}
		state, _, reason := l.Judge(owner, opts.Stale)
		if state != OwnerDead && (state != OwnerStale || opts.OnlyDead) {
			continue
		}
		list, err := l.Board.ListOwner(owner)
		if err != nil {
			return out, err
		}
		c := &Client{Board: l.Board, Owner: owner}
		for _, s := range list {
			r := Reaped{ID: s.ID, Owner: owner, State: state, Reason: reason, At: l.now()}
			if !opts.DryRun {
				err := c.move("reap", s.ID, s.Path, l.Board.Path(sessions.Todo, "", s.ID), false)
				if errors.Is(err, ErrSessionNotFound) || errors.Is(err, ErrSessionNotAvailable) {
					continue // another reaper, or the owner itself, moved it first
				}
				if err != nil {
					r.Err = err.Error()
				} else {
					l.recordReaped(r)
				}
			}
			out = append(out, r)
		}
		if !opts.DryRun && state == OwnerDead {
			_ = l.Remove(owner)
			_ = os.Remove(l.Board.StateDir(sessions.Doing, owner)) // only if empty
		}
	}
	return out, nil
}

func (l *Leases) reapedPath(owner, id string) string {
	return filepath.Join(l.Board.RuntimeDir(), "reaped", owner, id)
}

func (l *Leases) recordReaped(r Reaped) {
	p := l.reapedPath(r.Owner, r.ID)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return
	}
	data, _ := json.Marshal(r)
	_ = fsx.WriteReplace(p, append(data, '\n'), 0o644, false)
}

// WasReaped returns the record of owner's session id having been reaped.
func (l *Leases) WasReaped(owner, id string) (Reaped, bool) {
	data, err := os.ReadFile(l.reapedPath(owner, id))
	if err != nil {
		return Reaped{}, false
	}
	var r Reaped
	if json.Unmarshal(data, &r) != nil {
		return Reaped{}, false
	}
	return r, true
}
