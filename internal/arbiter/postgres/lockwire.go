package postgres

import "github.com/pickup-dev/pickup/internal/proc"

// The line protocol's named locks (see claim.LockArbiter).
//
//   - "lock": take Key for Owner/Token/Process/TTLMS: insert it if nobody
//     holds it, or, with Replace, take it over from the acquisition
//     Replace if it still holds it (and, with ReplaceStale, has still not
//     heartbeat for its ttl on the server's clock). Lost: someone holds
//     it (Lock, or nobody any more if Lock is nil).
//   - "unlock": delete Key's row held with Token (any if ""), by Owner
//     (any if Force); a NOTIFY on pickup_locks wakes the waiters. Lost:
//     held by another (Lock), or Found false: nobody holds it.
//   - "lockbeat": renew Owner's lock on Key, failing like unlock.
//   - "locks": the lock on Key, or every lock if Key is "".
//   - "supersede": mark Key's acquisition Token, a run, superseded (its
//     run stops at its next heartbeat). Lost: it is not that run's any
//     more.

// LockRequest is the lock of a request.
type LockRequest struct {
	Key          string       `json:"key"`
	Owner        string       `json:"owner,omitempty"`
	Token        string       `json:"token,omitempty"`
	Process      proc.Process `json:"process"`
	TTLMS        int64        `json:"ttl_ms,omitempty"`
	Replace      string       `json:"replace,omitempty"`
	ReplaceStale bool         `json:"replace_stale,omitempty"`
	Force        bool         `json:"force,omitempty"`
	Run          bool         `json:"run,omitempty"`
}

// LockRow is a lock as the database has it, its ages judged on the
// server's clock.
type LockRow struct {
	Key     string       `json:"key"`
	Owner   string       `json:"owner"`
	Token   string       `json:"token"`
	Process proc.Process `json:"process"`
	TTLMS   int64        `json:"ttl_ms"`
	// HeldMS: since it was acquired; SilentMS: since its last heartbeat.
	HeldMS   int64 `json:"held_ms"`
	SilentMS int64 `json:"silent_ms"`
	// Stale: SilentMS > TTLMS, on the server's clock.
	Stale bool `json:"stale,omitempty"`
	// Run: held by a `pickup lock run`; Superseded: a newer run asked it
	// to stop ("supersede": set on Key's acquisition Token if a run).
	Run        bool `json:"run,omitempty"`
	Superseded bool `json:"superseded,omitempty"`
}

// LockChannel is the "wait" channel of released locks.
const LockChannel = "locks"
