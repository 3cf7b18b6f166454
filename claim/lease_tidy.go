package claim

import (
	"os"

	"github.com/pickup-dev/pickup/sessions"
)

// Tidy removes owner's lease if the owner is dead and holds no session:
// what every run of pickup work leaves when it exits, and no problem, but
// clutter in .pickup/leases/. It judges the owner again under its guard, so
// that a new run of the owner that registers meanwhile keeps its lease. It
// reports whether the lease was removed.
func (l *Leases) Tidy(owner string) (bool, error) {
	if err := sessions.ValidateOwner(owner); err != nil {
		return false, err
	}
	unlock, err := l.guard(owner)
	if err != nil {
		return false, err
	}
	defer unlock()
	if state, _, _ := l.judge(owner, 0, l.sys.Self()); state != OwnerDead {
		return false, nil
	}
	if list, err := l.Board.ListOwner(owner); err != nil || len(list) > 0 {
		return false, err
	}
	if err := l.remove(owner); err != nil {
		return false, err
	}
	_ = os.Remove(l.Board.StateDir(sessions.Doing, owner)) // only if empty
	return true, nil
}
