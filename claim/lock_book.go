package claim

import (
	"errors"

	"github.com/pickup-dev/pickup/internal/arbiter"
	"github.com/pickup-dev/pickup/internal/proc"
)

// bookLocks is an arbiter's named locks (a database's) as a lockArbiter:
// the arbiter packages keep their own lock records (they cannot import
// claim), and this turns them into claim's.
type bookLocks struct{ arbiter.LockBook }

func lockInfoOf(l arbiter.Lock) LockInfo {
	if l.Key == "" && l.Token == "" {
		return LockInfo{}
	}
	i := LockInfo{Key: l.Key, Owner: l.Owner, Process: Holder(l.Process), Token: l.Token, TTL: l.TTL,
		AcquiredAt: l.AcquiredAt, HeartbeatAt: l.HeartbeatAt, Age: l.Age, Run: l.Run, Superseded: l.Superseded,
		State: LockAlive}
	if l.Stale {
		i.State = LockStale
	}
	return i
}

func arbiterLock(i LockInfo) arbiter.Lock {
	return arbiter.Lock{Key: i.Key, Owner: i.Owner, Process: proc.Process(i.Process), Token: i.Token, TTL: i.TTL,
		AcquiredAt: i.AcquiredAt, HeartbeatAt: i.HeartbeatAt, Age: i.Age, Run: i.Run, Superseded: i.Superseded,
		Stale: i.State == LockStale}
}

// lockErr is a refusal as claim's *LockError.
func lockRefusal(err error) error {
	var r *arbiter.LockRefusal
	if !errors.As(err, &r) {
		return err
	}
	e := &LockError{Op: r.Op, Key: r.Key, Err: r.Err}
	if r.Holder != nil {
		h := lockInfoOf(*r.Holder)
		e.Holder = &h
	}
	return e
}

func (p bookLocks) AcquireLock(mine LockInfo, replace *LockInfo) (bool, LockInfo, error) {
	var rep *arbiter.Lock
	if replace != nil {
		r := arbiterLock(*replace)
		rep = &r
	}
	ok, h, err := p.LockBook.AcquireLock(arbiterLock(mine), rep)
	return ok, lockInfoOf(h), lockRefusal(err)
}

func (p bookLocks) ReleaseLock(key, owner, token string, force bool) (LockInfo, error) {
	l, err := p.LockBook.ReleaseLock(key, owner, token, force)
	return lockInfoOf(l), lockRefusal(err)
}

func (p bookLocks) HeartbeatLock(key, owner string) error {
	return lockRefusal(p.LockBook.HeartbeatLock(key, owner))
}

func (p bookLocks) ReadLocks(key string) ([]LockInfo, error) {
	ls, err := p.LockBook.ReadLocks(key)
	if err != nil {
		return nil, lockRefusal(err)
	}
	out := make([]LockInfo, 0, len(ls))
	for _, l := range ls {
		out = append(out, lockInfoOf(l))
	}
	return out, nil
}

// Locks returns the named locks of c's board (BoardLocks), held beyond
// this machine too where its arbiter holds them: on a PostgreSQL board a
// key is held once across every machine, as with `pickup lock`. On a
// board shared through a git remote, and on one that is not shared, the
// locks are this machine's.
func (c *Client) Locks() *Locks {
	l := BoardLocks(c.Board)
	if h, ok := c.arbiterOf().(arbiter.LockHolder); ok {
		l.shared = bookLocks{h.Locks(c.Board.Now)}
	}
	return l
}
