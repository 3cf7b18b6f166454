package claim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pickup-dev/pickup/internal/boardhook"
	"github.com/pickup-dev/pickup/internal/fsx"
	"github.com/pickup-dev/pickup/internal/proc"
	"github.com/pickup-dev/pickup/sessions"
)

// DefaultStale is how long an owner whose liveness cannot be checked (it
// runs on another host or in another pid namespace, or registered no
// process) may go without a heartbeat before its claims may be reaped.
const DefaultStale = 30 * time.Minute

// Lease is an owner's claim on being alive: the processes that may be
// working for it and its last heartbeat. Leases live in
// <board>/.pickup/leases/<owner>.json, which git ignores: they describe
// processes of this machine.
//
// One owner may work from several processes at once (a script's loops, an
// agent and its fork, a worker and the commands it runs). Each process that
// claims adds itself to Holders and none ever removes a live one, so a
// short-lived process can never weaken a long-lived one's lease: the owner
// is dead only when every holder provably is.
type Lease struct {
	Owner     string    `json:"owner"`
	Holders   []Holder  `json:"holders"`
	Created   time.Time `json:"created_at"`
	Heartbeat time.Time `json:"heartbeat_at"`
}

// leaseFile is a lease as stored; Process is the single holder that leases
// written before holders existed recorded.
type leaseFile struct {
	Lease
	Process *Holder `json:"process,omitempty"`
}

// OwnerState is how an owner stands, as reap and status judge it.
type OwnerState string

// Owner states.
const (
	// Alive: a process of its lease runs here; its claims are safe however
	// long it stays silent.
	OwnerAlive OwnerState = "alive"
	// Dead: every process of its lease provably no longer runs (or the
	// host rebooted); its claims are recoverable at once.
	OwnerDead OwnerState = "dead"
	// Stale: its liveness cannot be proven either way and it has not
	// heartbeated for the stale period.
	OwnerStale OwnerState = "stale"
	// Unknown: its liveness cannot be proven either way but it heartbeated
	// recently.
	OwnerUnknown OwnerState = "unknown"
)

// Leases reads and writes the leases of a board.
type Leases struct {
	Board *sessions.Board
	// Now replaces time.Now in tests.
	Now func() time.Time

	// sys judges liveness: the real system unless pickup's own packages
	// or tests set it (internal/claimhook.UseSystem).
	sys proc.Env

	// hook, set by tests, runs at the named points of a reap, so that a
	// test can act in the windows a concurrent process could.
	hook func(point, owner, id string)
}

func (l *Leases) at(point, owner, id string) {
	if l.hook != nil {
		l.hook(point, owner, id)
	}
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
	data, err := fsx.ReadRegular(l.path(owner)) // never a link's target
	if err != nil {
		return Lease{}, err
	}
	var f leaseFile
	if err := json.Unmarshal(data, &f); err != nil {
		return Lease{}, fmt.Errorf("read lease %s: %w", l.path(owner), err)
	}
	if f.Process != nil && f.Process.PID > 0 && len(f.Holders) == 0 {
		// A lease of an earlier pickup. Its record lacks a pid namespace,
		// so it is judged unknown, never dead: when in doubt, a claim stays.
		f.Holders = []Holder{*f.Process}
	}
	return f.Lease, nil
}

// Heartbeat renews owner's lease, creating it if needed, and adds holders
// to it. Holders already in it stay, except those that provably no longer
// run: a lease is never weakened by a later call.
func (l *Leases) Heartbeat(owner string, holders ...Holder) (Lease, error) {
	if err := sessions.ValidateOwner(owner); err != nil {
		return Lease{}, err
	}
	unlock, err := l.guard(owner)
	if err != nil {
		return Lease{}, err
	}
	defer unlock()
	return l.register(owner, holders, l.sys.Self())
}

// Ensure makes holders part of owner's lease before a claim. It is cheap
// when they already are and the lease heartbeated within refresh. Otherwise,
// under the owner's guard, it first takes up what a dead earlier run of the
// owner left: if every process of the owner's lease provably no longer
// runs, that run's sessions are reaped (returned to todo/, the attempt
// counted, as Reap does) and returned; then it registers holders.
func (l *Leases) Ensure(owner string, refresh time.Duration, opts ReapOptions, holders ...Holder) ([]Reaped, error) {
	if err := sessions.ValidateOwner(owner); err != nil {
		return nil, err
	}
	if _, ok := l.current(owner, refresh, holders); ok {
		return nil, nil
	}
	unlock, err := l.guard(owner)
	if err != nil {
		return nil, err
	}
	defer unlock()
	local := l.sys.Self()
	var reaped []Reaped
	if state, _, reason := l.judge(owner, opts.Stale, local); state == OwnerDead {
		opts.OnlyDead = true
		if reaped, err = l.reapLocked(owner, state, reason, opts); err != nil {
			return reaped, err
		}
	}
	_, err = l.register(owner, holders, local)
	return reaped, err
}

func holdsAll(lease Lease, holders []Holder) bool {
	for _, h := range holders {
		if !holds(lease, h) {
			return false
		}
	}
	return true
}

func holds(lease Lease, p Holder) bool {
	for _, h := range lease.Holders {
		if h.Same(p) {
			return true
		}
	}
	return false
}

// register is Heartbeat with the owner's guard held.
func (l *Leases) register(owner string, holders []Holder, local proc.Process) (Lease, error) {
	now := l.now()
	lease := Lease{Owner: owner, Holders: []Holder{}, Created: now, Heartbeat: now}
	if old, err := l.Get(owner); err == nil {
		lease.Created = old.Created
		for _, h := range old.Holders {
			if l.sys.Liveness(proc.Process(h), local) != proc.Dead {
				lease.Holders = append(lease.Holders, h)
			}
		}
	}
	for _, h := range holders {
		if !holds(lease, h) {
			lease.Holders = append(lease.Holders, h)
		}
	}
	return lease, l.write(lease)
}

// Detach unties owner's lease from process p and from every process that
// provably no longer runs, keeping the claims: what stays is judged by
// heartbeats alone unless another holder runs. Claude Code's SessionEnd
// calls it for keep_on_session_end.
func (l *Leases) Detach(owner string, p Holder) (Lease, error) {
	unlock, err := l.guard(owner)
	if err != nil {
		return Lease{}, err
	}
	defer unlock()
	local := l.sys.Self()
	now := l.now()
	lease := Lease{Owner: owner, Holders: []Holder{}, Created: now, Heartbeat: now}
	if old, err := l.Get(owner); err == nil {
		lease.Created = old.Created
		for _, h := range old.Holders {
			if !h.Same(p) && l.sys.Liveness(proc.Process(h), local) != proc.Dead {
				lease.Holders = append(lease.Holders, h)
			}
		}
	}
	return lease, l.write(lease)
}

// Remove deletes owner's lease; a missing lease is not an error.
func (l *Leases) Remove(owner string) error {
	// Neither a lease nor its guard: nothing to remove, and taking the
	// guard would create its file only to delete it (a SessionEnd of a
	// session that never claimed). A Heartbeat that starts meanwhile comes
	// after this Remove; one under way holds the guard, whose file exists.
	if absent(l.path(owner)) && absent(l.guardPath(owner)) {
		return nil
	}
	unlock, err := l.guard(owner)
	if err != nil {
		return err
	}
	defer unlock()
	return l.remove(owner)
}

// absent reports whether path is certainly not there (a link counts as
// there); any other error leaves it to the slow path.
func absent(path string) bool {
	_, err := os.Lstat(path)
	return errors.Is(err, fs.ErrNotExist)
}

// remove deletes owner's lease and guard, with the guard held.
func (l *Leases) remove(owner string) error {
	err := os.Remove(l.path(owner))
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	// Whoever waits for the guard finds it unlinked and takes a new one.
	_ = os.Remove(l.guardPath(owner))
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
	if err := fsx.WriteReplace(l.path(lease.Owner), append(data, '\n'), l.Board.PrivatePerm(), false); err != nil {
		return fmt.Errorf("write lease: %w", err)
	}
	return nil
}

func (l *Leases) guardPath(owner string) string { return filepath.Join(l.dir(), owner+".lock") }

// guard takes owner's guard: an exclusive flock that registering a holder,
// heartbeating and reaping all take, so that a reap decides and moves with
// no claim of the same owner in between.
func (l *Leases) guard(owner string) (unlock func(), err error) {
	if err := os.MkdirAll(l.dir(), 0o755); err != nil {
		return nil, fmt.Errorf("lock lease of %s: %w", owner, err)
	}
	unlock, err = flockLinked(l.guardPath(owner), l.Board.PrivatePerm())
	if err != nil {
		return nil, fmt.Errorf("lock lease of %s: %w", owner, err)
	}
	return unlock, nil
}

// Judge tells how owner stands. An owner with a holder that runs is never
// stale: an agent's lease stays valid through long turns without
// heartbeats. Without a lease, the age of the owner's newest claim stands
// in for the heartbeat.
func (l *Leases) Judge(owner string, stale time.Duration) (OwnerState, Lease, string) {
	return l.judge(owner, stale, l.sys.Self())
}

func (l *Leases) judge(owner string, stale time.Duration, local proc.Process) (OwnerState, Lease, string) {
	if stale <= 0 {
		stale = DefaultStale
	}
	now := l.now()
	heard, wasHeard := l.lastHeard(owner)
	lease, err := l.Get(owner)
	if others := l.heardHolders(owner); len(others) > 0 {
		// Its leases on other boards of this machine (lease_heard.go).
		lease, err = withHolders(lease, err, owner, heard, wasHeard, now, others), nil
	}
	if err != nil {
		last, ok := l.lastClaim(owner)
		if wasHeard && (!ok || heard.After(last)) {
			age := now.Sub(heard)
			if age < stale {
				return OwnerUnknown, Lease{}, fmt.Sprintf("no lease here; last heartbeat %s ago", age.Round(time.Second))
			}
			return OwnerStale, Lease{}, fmt.Sprintf("no lease here; no heartbeat for %s (stale after %s)", age.Round(time.Second), stale)
		}
		if !ok || now.Sub(last) < stale {
			return OwnerUnknown, Lease{}, "no lease; claimed recently"
		}
		return OwnerStale, Lease{}, fmt.Sprintf("no lease and no claim for %s", now.Sub(last).Round(time.Second))
	}
	var dead, unknown []Holder
	for _, h := range lease.Holders {
		switch l.sys.Liveness(proc.Process(h), local) {
		case proc.Alive:
			return OwnerAlive, lease, fmt.Sprintf("%s is running", h)
		case proc.Dead:
			dead = append(dead, h)
		default:
			unknown = append(unknown, h)
		}
	}
	if len(dead) > 0 && len(unknown) == 0 {
		return OwnerDead, lease, fmt.Sprintf("%s exited", listProcesses(dead))
	}
	why := "no process recorded"
	if len(unknown) > 0 {
		why = listProcesses(unknown) + " cannot be checked from here"
	}
	last := lease.Heartbeat
	if wasHeard && heard.After(last) {
		last = heard
	}
	age := now.Sub(last)
	if age >= stale {
		return OwnerStale, lease, fmt.Sprintf("%s; no heartbeat for %s (stale after %s)", why, age.Round(time.Second), stale)
	}
	return OwnerUnknown, lease, fmt.Sprintf("%s; last heartbeat %s ago", why, age.Round(time.Second))
}

// lastHeard is when owner was last heard from other than by its
// processes here (set on the board through internal/boardhook).
func (l *Leases) lastHeard(owner string) (time.Time, bool) {
	if l.Board == nil {
		return time.Time{}, false
	}
	lastHeard := boardhook.LastHeardOf(l.Board)
	if lastHeard == nil {
		return time.Time{}, false
	}
	return lastHeard(owner)
}

// listProcesses names up to three processes, for a reason.
func listProcesses(ps []Holder) string {
	var names []string
	for i, p := range ps {
		if i == 3 {
			names = append(names, fmt.Sprintf("%d more", len(ps)-3))
			break
		}
		names = append(names, p.String())
	}
	return strings.Join(names, ", ")
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
