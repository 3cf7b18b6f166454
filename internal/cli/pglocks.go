package cli

// Named locks on a PostgreSQL board: the database holds every lock too
// (claim.LockArbiter), so that a key is held once across machines; a
// waiter wakes when a lock is released on any machine (LISTEN/NOTIFY),
// and reads the lock at least every lockWatchPollMax anyway (a holder
// that dies or goes stale sends nothing).

import (
	"context"
	"fmt"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/pgboard"
	"github.com/pickup-dev/pickup/sessions"
)

// arbitrateLocks makes the database the arbiter of l on a PostgreSQL
// board; other boards keep their locks on this machine.
func (r *run) arbitrateLocks(b *sessions.Board, l *claim.Locks) error {
	if !r.shared.isPG() {
		return nil
	}
	if err := r.shared.ready(b); err != nil {
		return err
	}
	if pg := r.shared.pgBoard(); pg != nil {
		l.Arbiter = pg.Locks(b.Now)
	}
	return nil
}

// awaitArbitrated is awaitRelease for a lock that the database gives to
// someone on another board (h has no file here): it returns when a lock
// is released anywhere (NOTIFY) or at the next poll, if the lock on key
// is no longer h's live one; it fails at the timeout or when ctx ends.
func awaitArbitrated(ctx context.Context, locks *claim.Locks, key string, h claim.LockInfo, wait time.Duration, expired <-chan time.Time) error {
	var w *pgboard.Waiter
	if a, ok := locks.Arbiter.(*pgboard.LockArbiter); ok {
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
			if w == nil || w.Wait(lockWatchPollMax) != nil {
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
