package claim

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// List returns every lock record, sorted by key, each with its state. A
// record that vanishes while being listed is skipped.
func (l *Locks) List() ([]LockInfo, error) {
	if l.shared != nil {
		return l.listArbitrated()
	}
	return l.listHere()
}

func (l *Locks) listHere() ([]LockInfo, error) {
	entries, err := os.ReadDir(l.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list locks: %w", err)
	}
	now := l.now()
	var out []LockInfo
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, lockSuffix) || !e.Type().IsRegular() {
			continue
		}
		var info LockInfo
		err := l.withGuard(name, func() (err error) {
			info, err = l.readRecord(name)
			return err
		})
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list locks: %w", err)
		}
		l.judge(&info, now)
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// Cleanup removes the locks whose holder is dead, and the stale ones that
// have also not heartbeat for staleAfter, and returns them. It never
// removes a lock whose holder runs on this host, nor one whose holder
// heartbeat within its TTL: staleAfter can make Cleanup more patient than
// the TTL, never less, so a zero threshold removes nothing that Acquire
// would not take over anyway. Freeing a live lock is Release with force, a
// decision for a person. Cleanup also deletes private files left by
// crashes.
func (l *Locks) Cleanup(staleAfter time.Duration) ([]LockInfo, error) {
	if l.shared != nil {
		return l.cleanupArbitrated(staleAfter)
	}
	return l.cleanupHere(staleAfter)
}

func (l *Locks) cleanupHere(staleAfter time.Duration) ([]LockInfo, error) {
	infos, err := l.listHere()
	if err != nil {
		return nil, err
	}
	removable := func(i LockInfo) bool {
		return i.State == LockDead || i.State == LockStale && l.now().Sub(i.HeartbeatAt) > staleAfter
	}
	var removed []LockInfo
	for _, info := range infos {
		if !removable(info) {
			continue
		}
		name := filepath.Base(info.Path) // a corrupt record's key may be unknown
		err := l.withGuard(name, func() error {
			cur, err := l.readRecord(name)
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if err != nil {
				return err
			}
			l.judge(&cur, l.now())
			if cur.Token != info.Token || !removable(cur) {
				return nil // changed hands since the listing: leave it
			}
			if err := os.Remove(cur.Path); err != nil {
				return ignoreNotExist(err)
			}
			removed = append(removed, cur)
			return nil
		})
		if err != nil {
			return removed, fmt.Errorf("clean up locks: %w", err)
		}
	}
	return removed, l.sweepPrivate()
}

// sweepPrivate deletes the private record files of processes that exited
// (those that crashed before publishing a record, or that kept spares and
// did not Close), and any older than privateMaxAge.
func (l *Locks) sweepPrivate() error {
	entries, err := os.ReadDir(l.Dir)
	if err != nil {
		return ignoreNotExist(err)
	}
	now := l.now()
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), privatePrefix) {
			continue
		}
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() && l.privateLeftover(e.Name(), now.Sub(fi.ModTime())) {
			_ = os.Remove(l.path(e.Name()))
		}
	}
	return nil
}
