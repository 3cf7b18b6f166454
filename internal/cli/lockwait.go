package cli

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/claimhook"
	"github.com/pickup-dev/pickup/internal/fsx"
	"golang.org/x/sys/unix"
)

// Waiting for a lock: waiters of one key queue on a flock, and only the
// first watches the record, so a release wakes one process, not all.

// takeLock takes the lock on key, waiting up to wait for it (0: try once,
// negative: until ctx ends). onHeld, if set, sees each holder first and may
// free the lock (true: try again at once).
//
// Waiters of one key queue on a flock(2) of their own file, so that only
// the first of them watches the lock; the others sleep in the kernel until
// it has taken the lock (or given up). A release thus wakes one waiter, not
// all of them. The queue only saves work: whoever finds the lock free may
// take it, queued or not, and a waiter that cannot use the queue waits
// unqueued.
func takeLock(ctx context.Context, locks *claim.Locks, key string, wait time.Duration,
	onHeld func(context.Context, claim.LockInfo) (bool, error), opts ...claim.LockOption) (claim.LockInfo, error) {
	var expired <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		expired = t.C
	}
	var leave func()
	defer func() {
		if leave != nil {
			leave()
		}
	}()
	for {
		info, err := locks.Lock(ctx, key, opts...)
		var held *claim.LockHeldError
		if !errors.As(err, &held) {
			return info, err
		}
		h := held.Holder
		if onHeld != nil {
			again, err := onHeld(ctx, h)
			if err != nil {
				return claim.LockInfo{}, err
			}
			if again {
				continue
			}
		}
		if wait == 0 {
			return claim.LockInfo{}, err
		}
		if leave == nil {
			if leave, err = joinQueue(ctx, locks, key, h, wait, expired); err != nil {
				return claim.LockInfo{}, err
			}
			continue // first in the queue: look again
		}
		if err := awaitRelease(ctx, locks, key, h, wait, expired); err != nil {
			return claim.LockInfo{}, err
		}
	}
}

// lockQueueDir holds the waiters' queue files, beside the lock directory.
const lockQueueDir = "lock-waiters"

// joinQueue waits until this process is first among the waiters of key
// and returns how to leave the queue. It fails like a wait: at the
// timeout, or when ctx ends.
func joinQueue(ctx context.Context, locks *claim.Locks, key string, h claim.LockInfo, wait time.Duration, expired <-chan time.Time) (leave func(), err error) {
	if h.Path == "" {
		return func() {}, nil
	}
	dir := filepath.Join(filepath.Dir(locks.Dir), lockQueueDir)
	// Never through a link in the file's place (O_CREAT would make its
	// target); owner-only like the locks.
	flags := os.O_RDONLY | os.O_CREATE | fsx.NoFollow
	f, err := os.OpenFile(filepath.Join(dir, filepath.Base(h.Path)), flags, locks.FilePerm())
	if errors.Is(err, os.ErrNotExist) && os.MkdirAll(dir, 0o755) == nil {
		f, err = os.OpenFile(filepath.Join(dir, filepath.Base(h.Path)), flags, locks.FilePerm())
	}
	if err != nil {
		return func() {}, nil // wait unqueued
	}
	got := make(chan error, 1)
	go func() {
		for {
			err := unix.Flock(int(f.Fd()), unix.LOCK_EX)
			if err != unix.EINTR {
				got <- err
				return
			}
		}
	}()
	giveUp := func(cause error) (func(), error) {
		go func() { <-got; f.Close() }() // leave the queue as soon as the flock returns
		return nil, &claim.LockError{Op: "acquire", Key: key, Holder: &h, Err: cause}
	}
	select {
	case err := <-got:
		if err != nil {
			f.Close()
			return func() {}, nil // wait unqueued
		}
		return func() { f.Close() }, nil
	case <-expired:
		return giveUp(fmt.Errorf("%w after %s", claim.ErrLockTimeout, wait))
	case <-ctx.Done():
		return giveUp(ctx.Err())
	}
}

// sweepQueues deletes the queue files that no waiter uses. One that a
// waiter opens just before it is deleted only makes that waiter watch the
// lock beside the next queue's first: the queue saves work, it does not
// exclude.
func sweepQueues(locks *claim.Locks) {
	dir := filepath.Join(filepath.Dir(locks.Dir), lockQueueDir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		f, err := os.OpenFile(path, os.O_RDONLY|fsx.NoFollow, 0)
		if err != nil {
			continue
		}
		if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil {
			_ = os.Remove(path)
		}
		f.Close()
	}
}

// awaitRelease returns when the lock on key, held as h, may have become
// free: its record file is removed, replaced or renamed away (watched with
// inotify or kqueue, so a released lock is seen at once), or a poll finds
// its holder dead, stale or changed (a holder that dies leaves its record
// in place). Without a watch it polls faster. It fails when expired fires
// (a timeout of wait) or ctx ends.
func awaitRelease(ctx context.Context, locks *claim.Locks, key string, h claim.LockInfo, wait time.Duration, expired <-chan time.Time) error {
	if _, shared := claimhook.BookOf(locks); h.Path == "" && shared {
		return awaitArbitrated(ctx, locks, key, h, wait, expired)
	}
	first, most := lockPollFirst, lockPollMax
	var events <-chan fsnotify.Event
	var errs <-chan error
	if w, err := fsnotify.NewWatcher(); err == nil {
		defer w.Close()
		if err := w.Add(h.Path); errors.Is(err, os.ErrNotExist) {
			return nil // gone already
		} else if err == nil {
			events, errs = w.Events, w.Errors
			first, most = lockWatchPollFirst, lockWatchPollMax
		}
	}
	changed := func() (bool, error) {
		cur, alive, err := locks.Check(key)
		return !alive || cur.Token != h.Token, err
	}
	if events != nil {
		// It may have changed before the watch began.
		if ch, err := changed(); ch || err != nil {
			return err
		}
	}
	for delay := first; ; delay = min(2*delay, most) {
		t := time.NewTimer(time.Duration(float64(delay) * (0.75 + 0.5*rand.Float64())))
		select {
		case <-t.C:
		case <-events:
			t.Stop()
			return nil
		case <-errs:
			t.Stop()
			return nil
		case <-expired:
			t.Stop()
			return &claim.LockError{Op: "acquire", Key: key, Holder: &h, Err: fmt.Errorf("%w after %s", claim.ErrLockTimeout, wait)}
		case <-ctx.Done():
			t.Stop()
			return &claim.LockError{Op: "acquire", Key: key, Holder: &h, Err: ctx.Err()}
		}
		if ch, err := changed(); ch || err != nil {
			return err
		}
	}
}
