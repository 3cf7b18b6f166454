package cli

import (
	"errors"

	"github.com/pickup-dev/pickup/claim"
	arbiterapi "github.com/pickup-dev/pickup/internal/arbiter"
	"github.com/pickup-dev/pickup/internal/proc"
)

// sharedLocks is an arbiter's named locks (a database's) as
// claim.LockArbiter: the arbiter packages keep their own lock records
// (they cannot import claim), and this turns them into claim's.
type sharedLocks struct{ arbiterapi.LockBook }

func lockInfo(l arbiterapi.Lock) claim.LockInfo {
	if l.Key == "" && l.Token == "" {
		return claim.LockInfo{}
	}
	i := claim.LockInfo{Key: l.Key, Owner: l.Owner, Process: claim.Holder(l.Process), Token: l.Token, TTL: l.TTL,
		AcquiredAt: l.AcquiredAt, HeartbeatAt: l.HeartbeatAt, Age: l.Age, Run: l.Run, Superseded: l.Superseded,
		State: claim.LockAlive}
	if l.Stale {
		i.State = claim.LockStale
	}
	return i
}

func arbiterLock(i claim.LockInfo) arbiterapi.Lock {
	return arbiterapi.Lock{Key: i.Key, Owner: i.Owner, Process: proc.Process(i.Process), Token: i.Token, TTL: i.TTL,
		AcquiredAt: i.AcquiredAt, HeartbeatAt: i.HeartbeatAt, Age: i.Age, Run: i.Run, Superseded: i.Superseded,
		Stale: i.State == claim.LockStale}
}

// lockErr is a refusal as claim's *LockError.
func lockErr(err error) error {
	var r *arbiterapi.LockRefusal
	if !errors.As(err, &r) {
		return err
	}
	e := &claim.LockError{Op: r.Op, Key: r.Key, Err: r.Err}
	if r.Holder != nil {
		h := lockInfo(*r.Holder)
		e.Holder = &h
	}
	return e
}

func (p sharedLocks) AcquireLock(mine claim.LockInfo, replace *claim.LockInfo) (bool, claim.LockInfo, error) {
	var rep *arbiterapi.Lock
	if replace != nil {
		r := arbiterLock(*replace)
		rep = &r
	}
	ok, h, err := p.LockBook.AcquireLock(arbiterLock(mine), rep)
	return ok, lockInfo(h), lockErr(err)
}

func (p sharedLocks) ReleaseLock(key, owner, token string, force bool) (claim.LockInfo, error) {
	l, err := p.LockBook.ReleaseLock(key, owner, token, force)
	return lockInfo(l), lockErr(err)
}

func (p sharedLocks) HeartbeatLock(key, owner string) error {
	return lockErr(p.LockBook.HeartbeatLock(key, owner))
}

func (p sharedLocks) ReadLocks(key string) ([]claim.LockInfo, error) {
	ls, err := p.LockBook.ReadLocks(key)
	if err != nil {
		return nil, lockErr(err)
	}
	out := make([]claim.LockInfo, 0, len(ls))
	for _, l := range ls {
		out = append(out, lockInfo(l))
	}
	return out, nil
}
