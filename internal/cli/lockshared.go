package cli

// Named locks on a PostgreSQL board: the database holds every lock too
// (claim's, through internal/claimhook.ShareLocks), so that a key is held once across machines; a
// waiter wakes when a lock is released on any machine (LISTEN/NOTIFY),
// and reads the lock at least every lockWatchPollMax anyway (a holder
// that dies or goes stale sends nothing).

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/pickup-dev/pickup/claim"
	arbiterapi "github.com/pickup-dev/pickup/internal/arbiter"
	"github.com/pickup-dev/pickup/internal/arbiter/location"
	"github.com/pickup-dev/pickup/internal/claimhook"
	"github.com/pickup-dev/pickup/sessions"
)

// arbitrateLocks makes the board's arbiter the arbiter of l where it
// holds locks (a PostgreSQL database); other boards keep their locks on
// this machine (and are not read: a git remote is not fetched for a
// lock).
func (r *run) arbitrateLocks(b *sessions.Board, l *claim.Locks) error {
	cfg := r.shared.config()
	if cfg == nil || cfg.Shared == "" {
		return nil
	}
	if k := location.KindOf(cfg.Shared); k == nil || !k.HoldsLocks() {
		return nil
	}
	if err := r.shared.ready(b); err != nil {
		return err
	}
	if h, ok := r.shared.arbiter().(arbiterapi.LockHolder); ok {
		claimhook.ShareLocks(l, h.Locks(b.Now))
	}
	return nil
}

// awaitArbitrated is awaitRelease for a lock that the database gives to
// someone on another board (h has no file here): it returns when a lock
// is released anywhere (NOTIFY) or at the next poll, if the lock on key
// is no longer h's live one; it fails at the timeout or when ctx ends.
func awaitArbitrated(ctx context.Context, locks *claim.Locks, key string, h claim.LockInfo, wait time.Duration, expired <-chan time.Time) error {
	var w arbiterapi.LockWaiter
	if a, ok := claimhook.BookOf(locks); ok {
		if w, _ = a.NewWaiter(); w != nil {
			defer w.Close()
			_ = w.Wait(0) // LISTEN before the lock is read again
		}
	}
	for {
		cur, alive, err := locks.Check(key)
		if err != nil || !alive || cur.Token != h.Token {
			return err
		}
		woke := make(chan struct{})
		go func() {
			defer close(woke)
			if w == nil || w.Wait(lockPollPG()) != nil {
				time.Sleep(lockWatchPollMax / 5)
			}
		}()
		select {
		case <-woke:
		case <-expired:
			if w != nil {
				w.Close()
			}
			<-woke
			return &claim.LockError{Op: "acquire", Key: key, Holder: &h, Err: fmt.Errorf("%w after %s", claim.ErrLockTimeout, wait)}
		case <-ctx.Done():
			if w != nil {
				w.Close()
			}
			<-woke
			return &claim.LockError{Op: "acquire", Key: key, Holder: &h, Err: ctx.Err()}
		}
	}
}

// pgRunBeat is how often a `pickup lock run` on a PostgreSQL board
// renews its lock at most: it also learns there that a newer run on
// another machine superseded it.
const pgRunBeat = time.Second

// beatEvery is how often lock run renews its lock.
func (lr *lockRunner) beatEvery() time.Duration {
	every := lockBeatEvery(lr.ttl)
	if _, shared := claimhook.BookOf(lr.locks); shared {
		every = min(every, pgRunBeat)
	}
	return every
}

// supersedeElsewhere is --supersede for a `pickup lock run` that holds
// the lock on another machine (a PostgreSQL board): its process cannot
// be signalled from here, so the database marks it superseded; it stops
// at its next heartbeat as if it got SIGTERM (its command gets --grace,
// its own, to exit) and releases the lock, which this run then takes. A
// run that took the lock after this one started is newer: this one gives
// up, as on one machine. handled false: h is not such a holder.
func (lr *lockRunner) supersedeElsewhere(ctx context.Context, h claim.LockInfo) (handled, again bool, err error) {
	a, ok := claimhook.BookOf(lr.locks)
	if !ok || h.Path != "" || !h.Run || h.Process.Host == lr.self.Host {
		return false, false, nil
	}
	if h.AcquiredAt.After(lr.started) {
		return true, false, &lockError{fmt.Sprintf("lock %s is held by a newer `pickup lock run` on %s, %s; this older run is superseded and did not run",
			lockName(lr.key), sanitize(h.Process.Host), h.Holder()), &claim.LockHeldError{Key: lr.key, Holder: h}}
	}
	if !h.Superseded {
		fmt.Fprintf(lr.r.env.Stderr, "pickup: lock run: superseding the `pickup lock run` on %s that holds %s, %s: it stops at its next heartbeat\n",
			sanitize(h.Process.Host), lockName(lr.key), h.Holder())
		if marked, err := a.Supersede(lr.key, h.Token); err != nil || !marked {
			return true, err == nil, err // !marked: it changed hands; look again
		}
	}
	// It stops its command (its --grace) and releases the lock; if its
	// machine died instead, the lock goes stale after its TTL.
	limit := pgRunBeat + lockRunGrace + lockKillWait + h.TTL
	deadline := time.Now().Add(limit)
	for {
		cur, alive, err := lr.locks.Check(lr.key)
		if err != nil {
			return true, false, err
		}
		if !alive || cur.Token != h.Token {
			return true, true, nil
		}
		if time.Now().After(deadline) {
			return true, false, fmt.Errorf("supersede lock %s: the run on %s did not release it within %s", lockName(lr.key), sanitize(h.Process.Host), limit)
		}
		select {
		case <-ctx.Done():
			return true, false, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// stopIfSuperseded stops this run, once, as SIGTERM would, if a newer run
// on another machine superseded it (cur: the lock as just read).
func (lr *lockRunner) stopIfSuperseded(cur claim.LockInfo) {
	if !cur.Superseded {
		return
	}
	lr.stopping.Do(func() {
		fmt.Fprintf(lr.r.env.Stderr, "pickup: lock run: a newer `pickup lock run` of %s on another machine supersedes this one\n", lockName(lr.key))
		_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
	})
}

// lockPollPG is how often a waiter reads a lock held on another board
// anyway: lockWatchPollMax, or $PICKUP_PG_POLL if set (tests set it long,
// so that only a NOTIFY can wake a waiter in time).
func lockPollPG() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("PICKUP_PG_POLL")); err == nil && d > 0 {
		return d
	}
	return lockWatchPollMax
}
