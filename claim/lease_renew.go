package claim

import (
	"time"

	"github.com/pickup-dev/pickup/sessions"
)

// Renew is Heartbeat for callers that run often, such as Claude Code's
// SessionStart hook, run again at every /clear and /compact: when owner's
// lease already holds every one of holders and heartbeated within refresh,
// it is returned as it is. A lease is replaced whole, a new file renamed
// over the old one, which on ext4 costs a new inode, the old one's eviction
// and a start of writeback: most of what that hook did.
func (l *Leases) Renew(owner string, refresh time.Duration, holders ...Holder) (Lease, error) {
	if err := sessions.ValidateOwner(owner); err != nil {
		return Lease{}, err
	}
	if lease, ok := l.current(owner, refresh, holders); ok {
		return lease, nil
	}
	return l.Heartbeat(owner, holders...)
}

// current returns owner's lease if it holds every one of holders and
// heartbeated within refresh.
func (l *Leases) current(owner string, refresh time.Duration, holders []Holder) (Lease, bool) {
	old, err := l.Get(owner)
	if err != nil || l.now().Sub(old.Heartbeat) >= refresh || !holdsAll(old, holders) {
		return Lease{}, false
	}
	return old, true
}
