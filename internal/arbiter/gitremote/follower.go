package gitremote

import (
	"context"
	"sync"
	"time"

	"github.com/pickup-dev/pickup/internal/arbiter"
	"github.com/pickup-dev/pickup/internal/arbiter/retry"
	"github.com/pickup-dev/pickup/sessions"
)

// Follower is a git remote's board branch as a live view follows it: a
// fetch every shared_fetch, and the machines of the owners of other
// clones from their heartbeat commits.
type Follower struct {
	sb    *Board
	where string // config.yaml's shared:
	every time.Duration
	mu    sync.Mutex
	hosts map[string]string // owner → machine of its last heartbeat
}

// NewFollower follows sb, whose config.yaml says cfg. It reads the
// machines of the owners heard so far (no fetch), so that a view shows
// them before its first fetch.
func NewFollower(ctx context.Context, sb *Board, cfg sessions.Config) *Follower {
	every := DefaultFetch
	if cfg.SharedFetch > 0 {
		every = cfg.SharedFetch
	}
	f := &Follower{sb: sb, where: cfg.Shared, every: every}
	f.hosts, _ = sb.PeerHosts(ctx)
	return f
}

// Refresh fetches; heard are the owners whose machine changed. A failure
// to read the heartbeats keeps what was known.
func (f *Follower) Refresh(ctx context.Context) (bool, []string, error) {
	moved, err := f.sb.Refresh(ctx)
	if err != nil {
		return false, nil, err
	}
	hosts, herr := f.sb.PeerHosts(ctx)
	if herr != nil {
		return moved, nil, nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var heard []string
	for owner, host := range hosts {
		if f.hosts[owner] != host {
			heard = append(heard, owner)
		}
	}
	f.hosts = hosts
	return moved, heard, nil
}

// Wait waits d: a remote says nothing of its transitions.
func (f *Follower) Wait(ctx context.Context, d time.Duration) error {
	return retry.Pause(ctx, d)
}

func (f *Follower) Every() time.Duration { return f.every }
func (f *Follower) Listens() bool        { return false }
func (f *Follower) Where() string        { return f.where }
func (f *Follower) Say(err error) string { return err.Error() }
func (f *Follower) Close() error         { return nil }

// Elsewhere: a lease this clone keeps for an owner with no process here
// is an owner of another clone (its heartbeats renew it).
func (f *Follower) Elsewhere(owner string, keptLease bool) (string, bool) {
	if !keptLease {
		return "", false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hosts[owner], true
}

var _ arbiter.Follower = (*Follower)(nil)
