package claim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/pickup-dev/pickup/internal/fsx"
	"github.com/pickup-dev/pickup/internal/proc"
	"github.com/pickup-dev/pickup/sessions"
)

// DefaultStale is how long an owner whose liveness cannot be checked (it
// runs on another host, or registered no process) may go without a
// heartbeat before its claims may be reaped.
const DefaultStale = 30 * time.Minute

// Lease is an owner's claim on being alive: the process that works for it
// and its last heartbeat. Leases live in <board>/.pickup/leases/<owner>.json,
// which git ignores: they describe processes of this machine.
type Lease struct {
	Owner     string       `json:"owner"`
	Process   proc.Process `json:"process"`
	Created   time.Time    `json:"created_at"`
	Heartbeat time.Time    `json:"heartbeat_at"`
}

// OwnerState is how an owner stands, as reap and status judge it.
type OwnerState string

// Owner states.
const (
	// Alive: its process runs on this host; its claims are safe however
	// long it stays silent.
	OwnerAlive OwnerState = "alive"
	// Dead: its process ran on this host and is gone (or the host
	// rebooted); its claims are recoverable at once.
	OwnerDead OwnerState = "dead"
	// Stale: its liveness cannot be checked and it has not heartbeated for
	// the stale period.
	OwnerStale OwnerState = "stale"
	// Unknown: its liveness cannot be checked but it heartbeated recently.
	OwnerUnknown OwnerState = "unknown"
)

// Leases reads and writes the leases of a board.
type Leases struct {
	Board *sessions.Board
	// Proc judges liveness; its zero value reads the real system.
	Proc proc.Env
	// Now replaces time.Now in tests.
	Now func() time.Time
}

func (l *Leases) now() time.Time {
	if l.Now != nil {
		return l.Now().UTC()
	}
	return time.Now().UTC()
}

func (l *Leases) dir() string { return filepath.Join(l.Board.RuntimeDir(), "leases") }

func (l *Leases) path(owner string) string { return filepath.Join(l.dir(), owner+".json") }

// Get returns owner's lease, or an error matching fs.ErrNotExist.
func (l *Leases) Get(owner string) (Lease, error) {
	data, err := os.ReadFile(l.path(owner))
	if err != nil {
		return Lease{}, err
	}
	var lease Lease
	if err := json.Unmarshal(data, &lease); err != nil {
		return Lease{}, fmt.Errorf("read lease %s: %w", l.path(owner), err)
	}
	return lease, nil
}

// Register records p as the process working for owner, keeping the
// creation time if p already holds the lease, and heartbeats.
func (l *Leases) Register(owner string, p proc.Process) (Lease, error) {
	if err := sessions.ValidateOwner(owner); err != nil {
		return Lease{}, err
	}
	now := l.now()
	lease := Lease{Owner: owner, Process: p, Created: now, Heartbeat: now}
	if old, err := l.Get(owner); err == nil && old.Process == p {
		lease.Created = old.Created
	}
	return lease, l.write(lease)
}

// Ensure registers p for owner unless p already holds a lease that
// heartbeated within refresh: the cheap call to make before every claim.
func (l *Leases) Ensure(owner string, p proc.Process, refresh time.Duration) error {
	if old, err := l.Get(owner); err == nil && old.Process == p && l.now().Sub(old.Heartbeat) < refresh {
		return nil
	}
	_, err := l.Register(owner, p)
	return err
}

// Heartbeat renews owner's lease. Without a lease it registers p.
func (l *Leases) Heartbeat(owner string, p proc.Process) (Lease, error) {
	lease, err := l.Get(owner)
	if err != nil {
		return l.Register(owner, p)
	}
	lease.Heartbeat = l.now()
	return lease, l.write(lease)
}

// Remove deletes owner's lease; a missing lease is not an error.
func (l *Leases) Remove(owner string) error {
	err := os.Remove(l.path(owner))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

func (l *Leases) write(lease Lease) error {
	if err := os.MkdirAll(l.dir(), 0o755); err != nil {
		return fmt.Errorf("write lease: %w", err)
	}
	data, err := json.Marshal(lease)
	if err != nil {
		return err
	}
	// A lease is replaced whole, atomically: readers see the old or the new
	// record, never a torn one. No fsync: after a crash or reboot every
	// lease of this host is void anyway (the boot id changes).
	if err := fsx.WriteReplace(l.path(lease.Owner), append(data, '\n'), 0o644, false); err != nil {
		return fmt.Errorf("write lease: %w", err)
	}
	return nil
}

// Judge tells how owner stands. A lease whose process is alive on this host
// is never stale: an agent's lease stays valid through long turns without
// heartbeats. Without a lease, the age of the owner's newest claim stands
// in for the heartbeat.
func (l *Leases) Judge(owner string, stale time.Duration) (OwnerState, Lease, string) {
	if stale <= 0 {
		stale = DefaultStale
	}
	now := l.now()
	lease, err := l.Get(owner)
	if err != nil {
		last, ok := l.lastClaim(owner)
		if !ok || now.Sub(last) < stale {
			return OwnerUnknown, Lease{}, "no lease; claimed recently"
		}
		return OwnerStale, Lease{}, fmt.Sprintf("no lease and no claim for %s", now.Sub(last).Round(time.Second))
	}
	switch lease.Process.PID {
	case 0:
	default:
		switch l.Proc.Liveness(lease.Process, l.Proc.Self()) {
		case proc.Alive:
			return OwnerAlive, lease, fmt.Sprintf("%s is running", lease.Process)
		case proc.Dead:
			return OwnerDead, lease, fmt.Sprintf("%s has exited", lease.Process)
		}
	}
	age := now.Sub(lease.Heartbeat)
	if age >= stale {
		return OwnerStale, lease, fmt.Sprintf("no heartbeat for %s (stale after %s)", age.Round(time.Second), stale)
	}
	return OwnerUnknown, lease, fmt.Sprintf("last heartbeat %s ago", age.Round(time.Second))
}

// lastClaim is the newest change time of the files in doing/<owner>/: a
// rename into the directory sets the file's ctime.
func (l *Leases) lastClaim(owner string) (time.Time, bool) {
	dir := l.Board.StateDir(sessions.Doing, owner)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return time.Time{}, false
	}
	var last time.Time
	found := false
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			continue
		}
		found = true
		if t := changeTime(info); t.After(last) {
			last = t
		}
	}
	if !found {
		if info, err := os.Stat(dir); err == nil {
			return changeTime(info), true
		}
	}
	return last, found
}
