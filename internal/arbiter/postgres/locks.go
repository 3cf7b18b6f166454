package postgres

import (
	"time"

	"github.com/pickup-dev/pickup/internal/arbiter"
)

// LockArbiter holds a board's named locks in the database, so that a key
// is held once across every machine (internal/cli adapts it to claim.LockArbiter): each
// request is one statement, and time is judged on the server's clock.
type LockArbiter struct {
	s *Board
	// now is this machine's clock, to which the server's ages are
	// converted (a holder silent for 3 minutes there has a HeartbeatAt 3
	// minutes before now here), so that every reader of a LockInfo judges
	// by the server's clock without knowing it.
	now func() time.Time
}

// Locks returns the board's lock arbiter.
func (s *Board) Locks(now func() time.Time) *LockArbiter {
	if now == nil {
		now = time.Now
	}
	return &LockArbiter{s: s, now: now}
}

func (a *LockArbiter) info(x *LockRow) arbiter.Lock {
	if x == nil {
		return arbiter.Lock{}
	}
	now := a.now().UTC()
	ttl := time.Duration(x.TTLMS) * time.Millisecond
	return arbiter.Lock{Key: x.Key, Owner: x.Owner, Process: x.Process, Token: x.Token, TTL: ttl,
		AcquiredAt:  now.Add(-time.Duration(x.HeldMS) * time.Millisecond),
		HeartbeatAt: now.Add(-time.Duration(x.SilentMS) * time.Millisecond),
		Age:         time.Duration(x.HeldMS) * time.Millisecond,
		Run:         x.Run, Superseded: x.Superseded, Stale: x.Stale}
}

// AcquireLock acquires mine (replacing replace, if given and still
// there); on false the lock is the holder's.
func (a *LockArbiter) AcquireLock(mine arbiter.Lock, replace *arbiter.Lock) (bool, arbiter.Lock, error) {
	req := &LockRequest{Key: mine.Key, Owner: mine.Owner, Token: mine.Token, Process: mine.Process, TTLMS: mine.TTL.Milliseconds(), Run: mine.Run}
	if replace != nil {
		req.Replace = replace.Token
		req.ReplaceStale = replace.Stale
	}
	res, err := a.s.call("acquire lock "+mine.Key, Request{Op: "lock", Lock: req})
	if err != nil {
		return false, arbiter.Lock{}, err
	}
	if res.Lost && (res.Lock == nil || res.Lock.Token != mine.Token) {
		return false, a.info(res.Lock), nil
	}
	// Won, or won by an earlier try whose answer was lost (retry.go):
	// the token names this acquisition.
	return true, a.info(res.Lock), nil
}

// ReleaseLock is claim.LockArbiter's, in the arbiter's records.
func (a *LockArbiter) ReleaseLock(key, owner, token string, force bool) (arbiter.Lock, error) {
	res, err := a.s.call("release lock "+key, Request{Op: "unlock", Lock: &LockRequest{Key: key, Owner: owner, Token: token, Force: force}})
	if err == nil && res.Retried && token != "" && res.Lost && res.Lock == nil {
		// An earlier try released it and its answer was lost
		// (retry.go): that acquisition's lock is gone either way.
		return arbiter.Lock{Key: key, Owner: owner, Token: token}, nil
	}
	return a.outcome("release", key, res, err)
}

// HeartbeatLock is claim.LockArbiter's, in the arbiter's records.
func (a *LockArbiter) HeartbeatLock(key, owner string) error {
	res, err := a.s.call("heartbeat lock "+key, Request{Op: "lockbeat", Lock: &LockRequest{Key: key, Owner: owner}})
	_, err = a.outcome("heartbeat", key, res, err)
	return err
}

// outcome is a release's or heartbeat's answer as claim has it.
func (a *LockArbiter) outcome(op, key string, res Response, err error) (arbiter.Lock, error) {
	switch {
	case err != nil:
		return arbiter.Lock{}, &arbiter.LockRefusal{Op: op, Key: key, Err: err}
	case res.Lost && res.Lock == nil:
		return arbiter.Lock{}, &arbiter.LockRefusal{Op: op, Key: key, Err: arbiter.ErrLockNotHeld}
	case res.Lost:
		h := a.info(res.Lock)
		return arbiter.Lock{}, &arbiter.LockRefusal{Op: op, Key: key, Holder: &h, Err: arbiter.ErrNotHolder}
	}
	return a.info(res.Lock), nil
}

// ReadLocks is claim.LockArbiter's, in the arbiter's records.
func (a *LockArbiter) ReadLocks(key string) ([]arbiter.Lock, error) {
	res, err := a.s.call("read locks", Request{Op: "locks", Lock: &LockRequest{Key: key}})
	if err != nil {
		return nil, err
	}
	out := make([]arbiter.Lock, 0, len(res.Locks))
	for i := range res.Locks {
		out = append(out, a.info(&res.Locks[i]))
	}
	return out, nil
}

// NewLockWaiter opens a waiter whose Wait returns when a lock is released
// on any machine (LISTEN/NOTIFY), or after at most its timeout.
func (s *Board) NewLockWaiter() (*Waiter, error) {
	w, err := s.NewWaiter()
	if err == nil {
		w.channel = LockChannel
	}
	return w, err
}

// NewWaiter opens a waiter for released locks (see NewLockWaiter).
func (a *LockArbiter) NewWaiter() (arbiter.LockWaiter, error) {
	w, err := a.s.NewLockWaiter()
	if err != nil {
		return nil, err // not a nil *Waiter in an interface
	}
	return w, nil
}

var _ arbiter.LockBook = (*LockArbiter)(nil)

// Supersede asks the `pickup lock run` that holds key with token (on
// another machine) to stop: it does at its next heartbeat. It reports
// false if that acquisition no longer holds key, or is no run.
func (a *LockArbiter) Supersede(key, token string) (bool, error) {
	res, err := a.s.call("supersede lock "+key, Request{Op: "supersede", Lock: &LockRequest{Key: key, Token: token}})
	if err != nil {
		return false, err
	}
	return !res.Lost, nil
}
