package claim

// How named locks are kept on disk, and why they are safe.
//
// # Files
//
// Each key has one record file in the lock directory, named from the key
// (see lockFileName) so that no key can name a file outside it. Dot-files
// are private: ".guard-NN" files carry flock(2) guards, and ".rec-*" files
// are records being written or kept for reuse.
//
// # Acquire
//
// The record is written in full to a private file and published under the
// key's name with a rename that never replaces (fsx.RenameNoReplace): it is
// never seen half-written, and of any number of processes publishing at
// once exactly one succeeds while the lock is free.
//
// # Takeover, release, heartbeat, and every read
//
// Everything that reads, removes or rewrites a published record does so
// holding the flock(2) guard of its key's stripe, and removes or rewrites
// it only after checking under that guard that it is what it expects (a
// dead or stale holder, the caller's token or owner; or, for the holder's
// own fast release, its own file, see lock_spare.go). The argument:
//
//   - While a record is published, only a guard holder removes or replaces
//     it, and the guard admits one process (one open file) at a time.
//   - A publication cannot replace a record; it succeeds only when the
//     name is free.
//   - So from the moment a guard holder reads a record until it releases
//     the guard, the name keeps that record: the check and the removal act
//     on the same record, and no fresh lock is ever removed because of a
//     decision taken on an older one.
//
// N processes that find one dead or stale lock all queue on its guard; the
// first removes it, the others read either nothing or the record of a new
// holder (alive, so left alone), and then all race to publish, which exactly
// one wins. A release (or an unlock after a takeover) reads the current
// record under the guard and refuses to remove anyone else's.
//
// This is why the guard, and not a rename of the old record to a tombstone:
// a taker that moved a record aside and then found it was not the stale one
// it had read would have to put it back, and by then someone may have
// published in the gap; two holders. With the guard nothing is ever moved
// by mistake.
//
// The kernel drops a flock when its process dies, so a crash never leaves a
// guard held; guards are held for a read and a rename. The guarantees are
// those of one local filesystem: flock and rename are not reliable on NFS.
//
// # Durability
//
// Each record is fsynced before it is published (unless NoSync), so that
// after a crash a name never points at an empty or partial file. The
// directory is not fsynced: a publication or removal that a power loss
// undoes concerned a holder on this host, which the same power loss killed,
// and records of a previous boot are dead on sight.

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/pickup-dev/pickup/internal/fsx"
	"github.com/pickup-dev/pickup/internal/proc"
)

// lockRecord is the JSON in a lock file.
type lockRecord struct {
	Key         string       `json:"key"`
	Owner       string       `json:"owner"`
	Process     proc.Process `json:"process"`
	AcquiredAt  time.Time    `json:"acquired_at"`
	HeartbeatAt time.Time    `json:"heartbeat_at"`
	TTL         string       `json:"ttl"` // a time.Duration string, "10m0s"
	Token       string       `json:"token"`
	Run         bool         `json:"run,omitempty"`
}

const (
	lockSuffix   = ".lock"
	hashedSuffix = ".hash" + lockSuffix
	// Longer escaped keys are hashed, keeping every name well under the
	// usual 255-byte limit.
	maxEscapedLen = 160
	guardStripes  = 16
	guardPrefix   = ".guard-"
	privatePrefix = ".rec-"
	// Private files older than this are leftovers of a crash.
	privateMaxAge = time.Hour
	// Attempts in one try when the lock changes hands under us.
	maxQuickTries = 8
	// Spare record files kept for reuse, per Locks.
	maxSpares = 4
	// Records are small; anything bigger is not one.
	maxRecordLen = 2*MaxLockKeyLen + 4096
)

func (l *Locks) path(name string) string { return filepath.Join(l.Dir, name) }

// tryLock publishes rec under name from the private file *tmp (written
// now, into the same file on later attempts). held reports a live holder
// (info is its record); otherwise info is the new lock and *tmp the
// published file, still open.
func (l *Locks) tryLock(name string, rec lockRecord, tmp **spare) (info LockInfo, held bool, err error) {
	now := l.now()
	rec.AcquiredAt, rec.HeartbeatAt = now, now
	data, err := json.Marshal(rec)
	if err != nil {
		return LockInfo{}, false, err
	}
	if err := l.writeRecord(tmp, data); err != nil {
		return LockInfo{}, false, err
	}
	path := l.path(name)
	for range maxQuickTries {
		err := fsx.RenameNoReplace((*tmp).path, path)
		if err == nil {
			(*tmp).path = ""
			return infoOf(rec, path), false, nil
		}
		if errors.Is(err, fs.ErrNotExist) {
			// Our private file was swept away, or the directory removed.
			(*tmp).drop()
			*tmp = nil
			if err := l.writeRecord(tmp, data); err != nil {
				return LockInfo{}, false, err
			}
			continue
		}
		if !errors.Is(err, fs.ErrExist) {
			return LockInfo{}, false, err
		}
		held = false
		err = l.withGuard(name, func() error {
			cur, err := l.readRecord(name)
			if errors.Is(err, fs.ErrNotExist) {
				return nil // released meanwhile: publish again
			}
			if err != nil {
				return err
			}
			l.judge(&cur, l.now())
			if cur.State == LockAlive {
				info, held = cur, true
				return nil
			}
			// Dead or stale, as read under the guard: take it away.
			if l.takeover != nil {
				l.takeover()
			}
			return ignoreNotExist(os.Remove(path))
		})
		if err != nil || held {
			return info, held, err
		}
	}
	// The lock kept changing hands: report the last holder seen.
	return info, true, nil
}

// withGuard runs f holding the flock guard of name's stripe.
func (l *Locks) withGuard(name string, f func() error) error {
	h := fnv.New32a()
	h.Write([]byte(name))
	guard := l.path(fmt.Sprintf("%s%02d", guardPrefix, h.Sum32()%guardStripes))
	unlock, err := flockFile(guard, l.FilePerm())
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(l.Dir, 0o755); err != nil {
			return err
		}
		unlock, err = flockFile(guard, l.FilePerm())
	}
	if err != nil {
		return err
	}
	defer unlock()
	return f()
}

// remove deletes the record of key if allow accepts it, all under the
// guard.
func (l *Locks) remove(op, key string, allow func(LockInfo) error) error {
	if err := validateLockKey(key); err != nil {
		return &LockError{Op: op, Key: key, Err: err}
	}
	name := lockFileName(key)
	err := l.withGuard(name, func() error { return l.removeLocked(op, key, name, allow) })
	return lockErr(op, key, err)
}

// removeLocked is remove for a caller that holds the guard.
func (l *Locks) removeLocked(op, key, name string, allow func(LockInfo) error) error {
	info, err := l.readRecord(name)
	if errors.Is(err, fs.ErrNotExist) {
		return ErrLockNotHeld
	}
	if err != nil {
		return err
	}
	if err := allow(info); err != nil {
		l.judge(&info, l.now())
		return &LockError{Op: op, Key: key, Holder: &info, Err: err}
	}
	return ignoreNotExist(os.Remove(info.Path))
}

// tokenHolder accepts the record of one acquisition.
func tokenHolder(token string) func(LockInfo) error {
	return func(i LockInfo) error {
		if i.Token != token || token == "" {
			return ErrNotHolder
		}
		return nil
	}
}

// lockErr wraps err in a *LockError unless it is one.
func lockErr(op, key string, err error) error {
	var le *LockError
	if err != nil && !errors.As(err, &le) {
		err = &LockError{Op: op, Key: key, Err: err}
	}
	return err
}

// heartbeat rewrites owner's record with a new heartbeat time, under the
// guard: the new record is written privately and renamed over the old one,
// so the name is never free meanwhile.
func (l *Locks) heartbeat(key, owner string) error {
	name := lockFileName(key)
	err := l.withGuard(name, func() error {
		info, err := l.readRecord(name)
		if errors.Is(err, fs.ErrNotExist) {
			return ErrLockNotHeld
		}
		if err != nil {
			return err
		}
		if info.Corrupt || info.Owner != owner {
			l.judge(&info, l.now())
			return &LockError{Op: "heartbeat", Key: key, Holder: &info, Err: ErrNotHolder}
		}
		rec := lockRecord{Key: info.Key, Owner: info.Owner, Process: proc.Process(info.Process), AcquiredAt: info.AcquiredAt,
			HeartbeatAt: l.now(), TTL: info.TTL.String(), Token: info.Token}
		data, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		var tmp *spare
		if err := l.writeRecord(&tmp, data); err != nil {
			return err
		}
		if err := os.Rename(tmp.path, info.Path); err != nil {
			tmp.drop()
			return err
		}
		tmp.close() // published: never reused
		return nil
	})
	return lockErr("heartbeat", key, err)
}

// readRecord reads the record called name, not yet judged; the caller
// holds its guard. An unreadable record is returned as Corrupt, dated by
// its file's modification time.
func (l *Locks) readRecord(name string) (LockInfo, error) {
	path := l.path(name)
	data, err := readSmall(path, maxRecordLen)
	if err != nil {
		return LockInfo{}, err
	}
	var rec lockRecord
	err = json.Unmarshal(data, &rec)
	if err == nil {
		_, err = time.ParseDuration(rec.TTL)
	}
	if err != nil || rec.Key == "" || rec.Token == "" || lockFileName(rec.Key) != name {
		fi, err := os.Stat(path)
		if err != nil {
			return LockInfo{}, err
		}
		key, _ := keyFromFileName(name)
		mtime := fi.ModTime().UTC()
		info := infoOf(lockRecord{Key: key, AcquiredAt: mtime, HeartbeatAt: mtime}, path)
		info.Corrupt = true
		return info, nil
	}
	return infoOf(rec, path), nil
}

// infoOf turns a record into a LockInfo judged alive.
func infoOf(rec lockRecord, path string) LockInfo {
	ttl, err := time.ParseDuration(rec.TTL)
	if err != nil || ttl <= 0 {
		ttl = DefaultLockTTL
	}
	return LockInfo{Key: rec.Key, Owner: rec.Owner, Process: Holder(rec.Process), AcquiredAt: rec.AcquiredAt,
		HeartbeatAt: rec.HeartbeatAt, TTL: ttl, Token: rec.Token, Run: rec.Run, State: LockAlive, Path: path}
}

// judge sets a record's State and Age: dead if its holder ran on this host
// and is gone, alive if it runs here (whatever its heartbeat), otherwise
// stale once it has not heartbeat for its TTL.
func (l *Locks) judge(info *LockInfo, now time.Time) {
	info.Age = max(now.Sub(info.AcquiredAt), 0)
	if l.judgeByProcess(info) {
		return
	}
	info.State = LockAlive
	if now.Sub(info.HeartbeatAt) > info.TTL {
		info.State = LockStale
	}
}

// judgeByProcess sets a record's State from its holder's process where
// that is conclusive: alive if it is this very process or runs on this
// host, dead if it ran on this host and is gone. It reports false when
// the process cannot tell (a holder on another host): the caller judges
// by the heartbeat.
func (l *Locks) judgeByProcess(info *LockInfo) bool {
	self := l.local()
	if proc.Process(info.Process) == self && self.PID != 0 {
		info.State = LockAlive // this very process
		return true
	}
	switch l.sys.Liveness(proc.Process(info.Process), self) {
	case proc.Dead:
		info.State = LockDead
		return true
	case proc.Alive:
		info.State = LockAlive
		return true
	}
	return false
}

func ignoreNotExist(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
