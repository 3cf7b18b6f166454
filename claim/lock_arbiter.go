package claim

import (
	"errors"
	"fmt"
	"time"
)

// lockArbiter decides named locks beyond this machine: a board shared
// through a database (a PostgreSQL board) holds each lock there too, so
// that a key is held by one holder across every machine. Locks with an
// Arbiter publish their record here first (which settles racers of this
// machine, as always) and then ask the arbiter; a lock the arbiter gives to
// someone else is removed here again at once.
//
// The arbiter judges time on its own clock: a holder it returns has State
// LockStale when it has not heartbeat for its TTL there, else LockAlive;
// Locks then judge holders of this host by their processes (dead at once,
// alive however long), as for a record of this machine.
type lockArbiter interface {
	// AcquireLock records mine as the holder of its key. If replace is
	// not nil, it takes the key over from that holder (judged dead or
	// stale), only if it still holds it (its Token) and, when it was
	// judged stale, is still stale on the arbiter's clock. acquired false:
	// holder has it (a zero holder: nobody has it any more; try again).
	AcquireLock(mine LockInfo, replace *LockInfo) (acquired bool, holder LockInfo, err error)
	// ReleaseLock removes the lock on key held with token (any token if
	// ""), by owner (any owner if force), and returns it. It fails with a
	// *LockError wrapping ErrNotHolder (naming the holder) or
	// ErrLockNotHeld.
	ReleaseLock(key, owner, token string, force bool) (LockInfo, error)
	// HeartbeatLock renews owner's lock on key on the arbiter's clock,
	// failing like ReleaseLock.
	HeartbeatLock(key, owner string) error
	// ReadLocks returns the lock on key, or every lock if key is "".
	ReadLocks(key string) ([]LockInfo, error)
}

// arbitrate asks the arbiter for the lock that this process has just
// published here as mine (from *tmp, still open). It returns mine if the
// arbiter gave it; otherwise the local record is removed again and the
// arbiter's live holder is returned with held true.
func (l *Locks) arbitrate(key string, mine LockInfo, tmp **spare) (LockInfo, bool, error) {
	undo := func() error {
		err := l.unlockHeld(key, mine.Token, *tmp)
		*tmp = nil // reused or closed by unlockHeld
		if errors.Is(err, ErrNotHolder) || errors.Is(err, ErrLockNotHeld) {
			return nil // removed as a leftover meanwhile (see leftover)
		}
		return err
	}
	var replace *LockInfo
	var last LockInfo
	for range maxQuickTries {
		acquired, h, err := l.shared.AcquireLock(mine, replace)
		if err != nil {
			if uerr := undo(); uerr != nil {
				return LockInfo{}, false, errors.Join(err, uerr)
			}
			return LockInfo{}, false, err
		}
		if acquired {
			return mine, false, nil
		}
		if h.Token == "" {
			replace = nil // released meanwhile: insert again
			continue
		}
		l.judgeArbitrated(&h)
		last = h
		if h.State == LockAlive {
			break
		}
		replace = &h // dead or stale: take it over, if still so
	}
	if err := undo(); err != nil {
		return LockInfo{}, false, fmt.Errorf("undo the lock here after the arbiter refused it: %w", err)
	}
	return last, true, nil
}

// judgeArbitrated judges a holder as the arbiter has it: by its process
// if it runs on this host, else as the arbiter judged its heartbeat.
func (l *Locks) judgeArbitrated(info *LockInfo) {
	if info.Corrupt {
		return
	}
	if !l.judgeByProcess(info) && info.State == "" {
		info.State = LockAlive
	}
}

// checkArbitrated is Check on the arbiter.
func (l *Locks) checkArbitrated(key string) (LockInfo, bool, error) {
	infos, err := l.shared.ReadLocks(key)
	if err != nil {
		return LockInfo{}, false, &LockError{Op: "check", Key: key, Err: err}
	}
	if len(infos) == 0 {
		return LockInfo{}, false, nil
	}
	info := infos[0]
	l.judgeArbitrated(&info)
	return info, info.State == LockAlive, nil
}

// releaseArbitrated releases the lock on key in the arbiter (which
// decides the outcome), then the record here, if it is the same
// acquisition.
func (l *Locks) releaseArbitrated(key, owner, token string, force bool) (LockInfo, error) {
	removed, err := l.shared.ReleaseLock(key, owner, token, force)
	var le *LockError
	if errors.As(err, &le) && le.Holder != nil {
		l.judgeArbitrated(le.Holder)
	}
	if err != nil {
		return LockInfo{}, err
	}
	_ = l.remove("release", key, tokenHolder(removed.Token))
	return removed, nil
}

// listArbitrated is List on the arbiter.
func (l *Locks) listArbitrated() ([]LockInfo, error) {
	infos, err := l.shared.ReadLocks("")
	if err != nil {
		return nil, fmt.Errorf("list locks: %w", err)
	}
	for i := range infos {
		l.judgeArbitrated(&infos[i])
	}
	return infos, nil
}

// cleanupArbitrated is Cleanup on the arbiter: it removes there the
// locks of dead holders and of stale ones silent for staleAfter (each
// only if it is still the same acquisition: its token), then cleans up
// the records here.
func (l *Locks) cleanupArbitrated(staleAfter time.Duration) ([]LockInfo, error) {
	infos, err := l.listArbitrated()
	if err != nil {
		return nil, err
	}
	var removed []LockInfo
	for _, info := range infos {
		if info.State != LockDead && (info.State != LockStale || l.now().Sub(info.HeartbeatAt) <= staleAfter) {
			continue
		}
		if _, err := l.shared.ReleaseLock(info.Key, "", info.Token, true); err != nil {
			if errors.Is(err, ErrNotHolder) || errors.Is(err, ErrLockNotHeld) {
				continue // changed hands since the listing: leave it
			}
			return removed, fmt.Errorf("clean up locks: %w", err)
		}
		removed = append(removed, info)
	}
	_, err = l.cleanupHere(staleAfter)
	return removed, err
}

// leftoverAfter is how long a record here may go without its arbiter's
// row before it counts as a leftover: its holder may be between
// publishing it here and asking the arbiter.
const leftoverAfter = 5 * time.Second

// leftover removes the record info of key here, whose holder is alive,
// if the arbiter gives the key to another acquisition (a takeover from
// another machine after the holder went stale there), or to none for
// longer than leftoverAfter (a release made on another board); the record
// then holds nothing. It reports whether it removed it. The arbiter
// decides who holds a key: a wrong removal here can only make a racer
// ask the arbiter, never give the key twice.
func (l *Locks) leftover(key string, info LockInfo) (bool, error) {
	rows, err := l.shared.ReadLocks(key)
	if err != nil {
		return false, err
	}
	switch {
	case len(rows) > 0 && rows[0].Token == info.Token:
		return false, nil // held there too
	case len(rows) == 0 && l.now().Sub(info.AcquiredAt) < leftoverAfter:
		return false, nil // being acquired, maybe
	}
	err = l.remove("release", key, tokenHolder(info.Token))
	if errors.Is(err, ErrNotHolder) || errors.Is(err, ErrLockNotHeld) {
		err = nil // gone or replaced already: look again
	}
	return err == nil, err
}
