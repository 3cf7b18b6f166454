package claim

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/pickup-dev/pickup/internal/arbiter"
	"github.com/pickup-dev/pickup/internal/proc"
	"github.com/pickup-dev/pickup/sessions"
)

// Named locks: a mutex per resource key shared by every process on the
// machine. See Locks.

// Errors of named locks, checked with errors.Is.
var (
	// ErrLockHeld: someone else holds the lock. It comes wrapped in a
	// *LockHeldError that names the holder. For an agent the right answer
	// is to take other work, not to remove the lock.
	ErrLockHeld = errors.New("lock held")
	// ErrLockTimeout: the lock stayed held for the whole wait. It is
	// distinct from every other error, and does not match ErrLockHeld.
	ErrLockTimeout = arbiter.ErrLockTimeout
	// ErrNotHolder: release or heartbeat of a lock that someone else
	// holds, or an unlock after the lock was taken over.
	ErrNotHolder = arbiter.ErrNotHolder
	// ErrLockNotHeld: release or heartbeat of a lock that nobody holds.
	ErrLockNotHeld = arbiter.ErrLockNotHeld
	// ErrInvalidLockKey: an empty key, or one longer than MaxLockKeyLen.
	ErrInvalidLockKey = errors.New("invalid lock key")
)

// Lock defaults.
const (
	// DefaultLockTTL is how long a lock whose holder runs on another host
	// stays valid without a heartbeat.
	DefaultLockTTL = 10 * time.Minute
	// MaxLockKeyLen bounds keys, which are stored in full in the record.
	MaxLockKeyLen     = 4096
	defaultMinBackoff = 10 * time.Millisecond
	defaultMaxBackoff = time.Second
)

// LockState says whether a lock still protects anything.
type LockState string

const (
	// LockAlive: the holder runs on this host, or runs elsewhere and
	// heartbeat within its TTL.
	LockAlive LockState = "alive"
	// LockDead: the holder ran on this host and has exited (or the machine
	// rebooted since). Anyone may take the lock at once.
	LockDead LockState = "dead"
	// LockStale: the holder runs on another host (so its process cannot be
	// checked) and has not heartbeat for its TTL. Anyone may take the lock.
	LockStale LockState = "stale"
)

// LockInfo is a lock record as read from disk, with its judged state.
type LockInfo struct {
	Key         string        `json:"key"`
	Owner       string        `json:"owner"`
	Process     Holder        `json:"process"`
	AcquiredAt  time.Time     `json:"acquired_at"`
	HeartbeatAt time.Time     `json:"heartbeat_at"`
	TTL         time.Duration `json:"ttl"`
	// Token identifies one acquisition; Unlock needs it.
	Token string `json:"token"`
	// Run: the holder is a process that runs a command under the lock
	// (`pickup lock run`, WithLockRun), which a newer one may supersede.
	Run bool `json:"run,omitempty"`
	// Superseded: a newer run on another machine asked this one to stop
	// (an arbiter's lock only).
	Superseded bool `json:"superseded,omitempty"`

	State LockState     `json:"state"`
	Age   time.Duration `json:"age"` // since AcquiredAt
	Path  string        `json:"path"`
	// Corrupt: the record could not be parsed (a crash of a NoSync
	// writer, or a hand edit). It counts as held by an unknown process
	// until its file is TTL old.
	Corrupt bool `json:"corrupt,omitempty"`
}

// Holder describes who holds the lock, safe to print on a terminal.
func (i LockInfo) Holder() string {
	if i.Corrupt {
		return "an unreadable record"
	}
	if i.Key == "" {
		return "another process" // it changed hands while we looked
	}
	s := fmt.Sprintf("%s (%s, for %s", printable(i.Owner), printable(i.Process.String()), i.Age.Round(time.Second))
	if i.State != LockAlive && i.State != "" {
		s += ", " + string(i.State)
	}
	return s + ")"
}

// LockHeldError reports that a lock is held by someone else.
type LockHeldError struct {
	Key    string
	Holder LockInfo
}

func (e *LockHeldError) Error() string {
	return fmt.Sprintf("acquire lock %q: %v by %s", e.Key, ErrLockHeld, e.Holder.Holder())
}

func (e *LockHeldError) Unwrap() error { return ErrLockHeld }

// LockError records a failed lock operation: the operation ("acquire",
// "release", "heartbeat", "check"), the key, the holder when one is known,
// and the cause (ErrLockTimeout, ErrNotHolder, ErrLockNotHeld,
// ErrInvalidLockKey, a context error, an I/O error).
type LockError struct {
	Op     string
	Key    string
	Holder *LockInfo
	Err    error
}

func (e *LockError) Error() string {
	msg := e.Op + " lock " + strconv.Quote(e.Key) + ": " + e.Err.Error()
	if e.Holder != nil {
		msg += " (held by " + e.Holder.Holder() + ")"
	}
	return msg
}

func (e *LockError) Unwrap() error { return e.Err }

// Locks is a directory of named locks, normally <board>/.pickup/locks: a
// mutex per resource key (a repository path, "owner/repo:issue-123", a task
// id) shared by every process of the machine. Its methods are safe for
// concurrent use, and all state is on disk: two Locks on one directory, in
// one process or two, exclude each other exactly like two processes.
//
// # Guarantees
//
// Of any number of processes that acquire one free key, exactly one gets
// it; the others get ErrLockHeld naming the holder (or wait). A record is
// published whole or not at all. A lock is freed only by its holder (its
// owner name, or the token of one acquisition), by force, or when it is
// judged free: at once when its holder ran on this host and has exited
// (pid gone, pid reused, or the machine rebooted), or when a holder on
// another host has not heartbeat for its TTL. Of several processes that
// find the same free-to-take lock, exactly one takes it over, and a
// release or takeover never removes a lock that someone took meanwhile (see
// lock_store.go for the argument).
//
// # Limits
//
// Liveness is known for processes of this host only (same hostname and pid
// namespace, see package proc); a holder elsewhere has the TTL of its
// record, and a holder here keeps its lock for as long as it runs, however
// long that is. A holder whose process is alive but stuck keeps its lock
// until a person releases it with force. The directory must be on a local
// filesystem: rename and flock(2) do not give these guarantees on NFS or
// most FUSE mounts. Never delete the ".guard-*" files while locks are in
// use. Like any lease, a lock that expires or is broken by force stops
// protecting its former holder, which learns it only at its next Heartbeat
// or unlock (ErrNotHolder).
//
// # Durability
//
// Each record is fsynced before it is published (unless NoSync) so that a
// crash never leaves a name pointing at an empty file. Directories are not
// fsynced: a lock of this host that a power loss forgets belonged to a
// process that the same power loss killed.
type Locks struct {
	// Dir holds the lock records; it is created on first use.
	Dir string
	// NoSync skips the fsync of each record before it is published.
	// Atomicity does not depend on it.
	NoSync bool
	// Now replaces time.Now (record times, staleness) in tests. Waiting
	// always uses the real clock.
	Now func() time.Time
	// Rand replaces rand.Float64 (backoff jitter) in tests.
	Rand func() float64
	// sys is where this host's identity and process liveness come from:
	// the real system unless pickup's own packages or tests set it
	// (internal/claimhook.UseSystem).
	sys proc.Env
	// holder, if set, is the process every lock taken through l is
	// recorded for instead of the caller (internal/claimhook.HoldLocksFor).
	holder *proc.Process
	// Perm is the mode of the files it creates (lock records, guards):
	// zero means 0600, owner only (see sessions.Board.PrivatePerm).
	Perm fs.FileMode

	selfOnce sync.Once
	self     proc.Process

	spareMu sync.Mutex
	spares  []*spare // private record files to reuse, open

	// shared, if set, holds every lock beyond this machine too (a
	// PostgreSQL board's database; Client.Locks sets it); see
	// lockArbiter.
	shared lockArbiter

	// takeover, set by tests, runs between judging a record dead or stale
	// and removing it, so that a test can act in that window as another
	// taker could.
	takeover func()
}

// LocksDirName is the lock directory's name inside the board's runtime
// directory.
const LocksDirName = "locks"

// NewLocks returns the locks kept in dir.
func NewLocks(dir string) *Locks { return &Locks{Dir: dir} }

// BoardLocks returns the locks of board b, in <board>/.pickup/locks, with
// b's NoSync and clock.
func BoardLocks(b *sessions.Board) *Locks {
	return &Locks{Dir: filepath.Join(b.RuntimeDir(), LocksDirName), NoSync: b.NoSync, Now: b.Now, Perm: b.PrivatePerm()}
}

// FilePerm is the mode of the files l creates: Perm, or 0600.
func (l *Locks) FilePerm() fs.FileMode {
	if l.Perm == 0 {
		return 0o600
	}
	return l.Perm
}

func (l *Locks) now() time.Time {
	if l.Now != nil {
		return l.Now().UTC()
	}
	return time.Now().UTC()
}

func (l *Locks) jitter() float64 {
	if l.Rand != nil {
		return l.Rand()
	}
	return rand.Float64()
}

// local is this process, computed once: its host and boot id judge
// records, and it is the default holder.
func (l *Locks) local() proc.Process {
	l.selfOnce.Do(func() { l.self = l.sys.Self() })
	return l.self
}

// Acquire takes the lock on key and returns the function that releases it
// (exactly this acquisition: after a takeover it fails with ErrNotHolder and
// removes nothing). Calling it more than once returns the first result.
//
// A held lock yields a *LockHeldError (ErrLockHeld) at once, or after the
// wait set by WithLockWait a *LockError wrapping ErrLockTimeout; the end of
// ctx yields a *LockError wrapping ctx.Err(). Locks are not reentrant: a
// holder that asks again is refused like anyone else.
func (l *Locks) Acquire(ctx context.Context, key string, opts ...LockOption) (unlock func() error, err error) {
	info, held, err := l.lock(ctx, key, opts)
	if err != nil {
		return nil, err
	}
	var once sync.Once
	var uerr error
	return func() error {
		once.Do(func() {
			var aerr error
			if l.shared != nil {
				_, aerr = l.shared.ReleaseLock(key, "", info.Token, true)
			}
			uerr = l.unlockHeld(key, info.Token, held)
			if aerr != nil {
				uerr = aerr // the arbiter's word decides
			}
		})
		return uerr
	}, nil
}

// Lock is Acquire returning the new record instead of a function; its Token
// releases it through Unlock, possibly from another process.
func (l *Locks) Lock(ctx context.Context, key string, opts ...LockOption) (LockInfo, error) {
	info, held, err := l.lock(ctx, key, opts)
	if err != nil {
		return LockInfo{}, err
	}
	held.close()
	return info, nil
}

// lock takes the lock on key and returns its record and its published
// file, still open.
func (l *Locks) lock(ctx context.Context, key string, opts []LockOption) (LockInfo, *spare, error) {
	o := lockOptions{ttl: DefaultLockTTL, minDelay: defaultMinBackoff, maxDelay: defaultMaxBackoff}
	for _, opt := range opts {
		opt(&o)
	}
	fail := func(err error, holder *LockInfo) (LockInfo, *spare, error) {
		return LockInfo{}, nil, &LockError{Op: "acquire", Key: key, Holder: holder, Err: err}
	}
	if err := validateLockKey(key); err != nil {
		return fail(err, nil)
	}
	rec := lockRecord{Key: key, Owner: o.owner, Token: newToken(), Run: o.run}
	if o.process == nil {
		o.process = l.holder
	}
	if o.process != nil {
		rec.Process = *o.process
	} else {
		rec.Process = l.local()
	}
	if rec.Owner == "" {
		rec.Owner = "pid-" + strconv.Itoa(rec.Process.PID)
	}
	if err := sessions.ValidateOwner(rec.Owner); err != nil {
		return fail(err, nil)
	}
	if o.ttl <= 0 {
		o.ttl = DefaultLockTTL
	}
	rec.TTL = o.ttl.String()
	o.minDelay = max(o.minDelay, time.Millisecond)
	o.maxDelay = max(o.maxDelay, o.minDelay)

	if err := ctx.Err(); err != nil {
		return fail(err, nil)
	}
	waitCtx := ctx
	if o.wait > 0 {
		var cancel context.CancelFunc
		waitCtx, cancel = context.WithTimeout(ctx, o.wait)
		defer cancel()
	}
	name := lockFileName(key)
	delay := o.minDelay
	var tmp *spare // the private file, rewritten for each attempt
	defer func() {
		if tmp != nil && tmp.path != "" {
			tmp.drop()
		}
	}()
	for {
		info, held, err := l.tryLock(name, rec, &tmp)
		if err != nil {
			return fail(err, nil)
		}
		if held && l.shared != nil && info.Path != "" {
			// A live holder here that the arbiter no longer names (it
			// was taken over from another machine) holds nothing.
			gone, err := l.leftover(key, info)
			if err != nil {
				return fail(err, nil)
			}
			if gone {
				continue
			}
		}
		if !held && l.shared != nil {
			if info, held, err = l.arbitrate(key, info, &tmp); err != nil {
				return fail(err, nil)
			}
		}
		if !held {
			return info, tmp, nil
		}
		if o.wait == 0 {
			return LockInfo{}, nil, &LockHeldError{Key: key, Holder: info}
		}
		d := time.Duration(float64(delay) * (0.75 + 0.5*l.jitter()))
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-waitCtx.Done():
			t.Stop()
			if err := ctx.Err(); err != nil {
				return fail(err, &info)
			}
			return fail(fmt.Errorf("%w after %s", ErrLockTimeout, o.wait), &info)
		}
		delay = min(2*delay, o.maxDelay)
	}
}

// Unlock releases the acquisition identified by token. It fails with
// ErrNotHolder if the lock was taken over (the holder was judged dead or
// stale) and with ErrLockNotHeld if nobody holds it; it never removes
// someone else's lock.
func (l *Locks) Unlock(key, token string) error {
	if l.shared != nil {
		_, err := l.releaseArbitrated(key, "", token, true)
		return err
	}
	return l.remove("release", key, tokenHolder(token))
}

// Release releases the lock on key held by owner. The owner name, not the
// process, identifies the holder, so that one command can take a lock and
// another release it. Releasing someone else's lock fails with ErrNotHolder
// (and names the holder) unless force is set; force is for people who know
// the holder is gone, never for an agent that wants the lock. Release
// returns the record it removed.
func (l *Locks) Release(key, owner string, force bool) (LockInfo, error) {
	if l.shared != nil {
		return l.releaseArbitrated(key, owner, "", force)
	}
	var removed LockInfo
	err := l.remove("release", key, func(i LockInfo) error {
		removed = i
		if !force && i.Owner != owner {
			return ErrNotHolder
		}
		return nil
	})
	if err != nil {
		return LockInfo{}, err
	}
	return removed, nil
}

// Heartbeat records that owner, which holds the lock on key, is still at
// work. Only holders on other hosts need it: a holder on this host keeps
// its lock for as long as its process lives.
func (l *Locks) Heartbeat(key, owner string) error {
	if err := validateLockKey(key); err != nil {
		return &LockError{Op: "heartbeat", Key: key, Err: err}
	}
	if l.shared != nil {
		if err := l.shared.HeartbeatLock(key, owner); err != nil {
			var le *LockError
			if errors.As(err, &le) && le.Holder != nil {
				l.judgeArbitrated(le.Holder)
			}
			return err
		}
		_ = l.heartbeat(key, owner) // the record here, if this machine has it
		return nil
	}
	return l.heartbeat(key, owner)
}

// Check reads the lock on key. held is true if a record exists and its
// holder is alive; a dead or stale record is returned with held false (its
// State tells which), and a free key returns a zero LockInfo.
func (l *Locks) Check(key string) (info LockInfo, held bool, err error) {
	if err := validateLockKey(key); err != nil {
		return LockInfo{}, false, &LockError{Op: "check", Key: key, Err: err}
	}
	if l.shared != nil {
		return l.checkArbitrated(key)
	}
	name := lockFileName(key)
	err = l.withGuard(name, func() error {
		info, err = l.readRecord(name)
		return err
	})
	if errors.Is(err, os.ErrNotExist) {
		return LockInfo{}, false, nil
	}
	if err != nil {
		return LockInfo{}, false, &LockError{Op: "check", Key: key, Err: err}
	}
	l.judge(&info, l.now())
	return info, info.State == LockAlive, nil
}
