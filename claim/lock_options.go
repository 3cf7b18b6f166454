package claim

import (
	"time"

	"github.com/pickup-dev/pickup/internal/proc"
)

// LockOption tunes one Lock or Acquire call.
type LockOption func(*lockOptions)

type lockOptions struct {
	owner              string
	ttl, wait          time.Duration
	minDelay, maxDelay time.Duration
	process            *proc.Process
	run                bool
}

// WithLockRun marks the holder as a process that runs a command under the
// lock and may be superseded by a newer one (LockInfo.Run).
func WithLockRun() LockOption { return func(o *lockOptions) { o.run = true } }

// WithLockOwner names the holder (a valid owner name, see
// sessions.ValidateOwner). The default is "pid-<pid>".
func WithLockOwner(owner string) LockOption { return func(o *lockOptions) { o.owner = owner } }

// WithLockTTL sets how long the lock stays valid without a heartbeat when
// its holder cannot be checked (it runs on another host). Default
// DefaultLockTTL. A holder running on this host keeps the lock for as long
// as it lives, whatever the TTL.
func WithLockTTL(d time.Duration) LockOption { return func(o *lockOptions) { o.ttl = d } }

// WithLockWait sets how long Acquire waits for a held lock: 0 (the default)
// tries once, a negative value waits until the context ends.
func WithLockWait(d time.Duration) LockOption { return func(o *lockOptions) { o.wait = d } }

// WithLockBackoff sets the first and the longest pause between attempts
// while waiting (default 10ms doubling up to 1s); each pause is jittered by
// ±25%.
func WithLockBackoff(first, max time.Duration) LockOption {
	return func(o *lockOptions) { o.minDelay, o.maxDelay = first, max }
}

// withLockProcess records p as the holder's process instead of the calling
// process. The lock lives as long as p: a short-lived command that takes a
// lock on behalf of a longer-lived one (a CLI called by an agent's shell)
// records that one, or its lock is dead as soon as it exits. pickup's own
// packages reach it through internal/claimhook.HoldLocksFor; a Go program
// is the long-lived process, and holds its locks itself.
func withLockProcess(p proc.Process) LockOption { return func(o *lockOptions) { o.process = &p } }
