// Package boardfeed reads a board for the live board (internal/boardview):
// a snapshot, then the board's events as they happen. It judges owners,
// lists locks and reads the history with the same library calls as
// pickup status, lock list and log, so the board never says something
// else than they would.
//
// It does no work while the board does not change: it waits on inotify
// (the watcher of claim.Watch, and one of its own for leases, locks and
// events.log), on pidfds of the processes that keep owners alive (a
// death is seen the moment it happens, without polling), and on one timer
// set to the next moment a judgment changes by itself (a heartbeat
// growing stale, a lock's TTL running out). Only a shared board adds
// work: a fetch of its remote every shared_fetch, as next --wait does.
package boardfeed

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/arbiter"
	"github.com/pickup-dev/pickup/internal/arbiter/location"
	"github.com/pickup-dev/pickup/internal/boardhook"
	"github.com/pickup-dev/pickup/internal/boardview"
	"github.com/pickup-dev/pickup/internal/claimhook"
	"github.com/pickup-dev/pickup/internal/fsx"
	"github.com/pickup-dev/pickup/internal/leasebook"
	"github.com/pickup-dev/pickup/internal/proc"
	"github.com/pickup-dev/pickup/sessions"
)

// Feed reads one board.
type Feed struct {
	B      *sessions.Board
	leases *claim.Leases
	sys    proc.Env // how leases and locks judge processes
	locks  *claim.Locks
	stale  time.Duration
	// follow is the board's arbiter as the live board follows it (nil:
	// not shared), and Remote what it is (config.yaml's shared:, a
	// database's without its password).
	follow arbiter.Follower
	Remote string
	now    func() time.Time
	// afterJudge, if set (by tests), runs after each judgment of an owner
	// that Run makes, with the owner as judged and whether it is reported,
	// before it is: the moment a process can exit just after it was judged
	// alive.
	afterJudge func(owner string, o boardview.Owner, report bool)
	// afterLocks is afterJudge for the locks.
	afterLocks func(locks []boardview.Lock, report bool)

	mu     sync.Mutex
	logOff int64 // events.log is read up to here (a line's end)
	// dbErr: why the database of a PostgreSQL board did not answer last
	// (under mu; "" when it did).
	dbErr string
}

// Open opens the board in dir as pickup status would (config.yaml's stale
// period, a shared board's remote).
func Open(ctx context.Context, dir string) (*Feed, error) {
	b, err := sessions.Open(dir)
	if err != nil {
		return nil, err
	}
	cfg, err := b.Config()
	if err != nil {
		return nil, err
	}
	if cfg.LineupAge != 0 {
		b.LineupAge = cfg.LineupAge
	}
	f := &Feed{B: b, stale: claim.DefaultStale, now: time.Now}
	if cfg.Stale > 0 {
		f.stale = cfg.Stale
	}
	pe := proc.Env{}.Memoized()
	f.sys = pe
	f.leases = &claim.Leases{Board: b, Now: f.now}
	claimhook.UseSystem(f.leases, pe)
	f.locks = claim.BoardLocks(b)
	claimhook.UseSystem(f.locks, pe)
	// The board is followed as every front end opens it: location picks
	// the arbiter that config.yaml names.
	o := location.Options{Leases: leasebook.Of(b), PollEvery: DefaultPGPoll}
	if d, err := time.ParseDuration(os.Getenv("PICKUP_NETWORK_TIMEOUT")); err == nil && d > 0 {
		o.NetTimeout = d
	}
	if d, err := time.ParseDuration(os.Getenv("PICKUP_PG_POLL")); err == nil && d > 0 {
		o.PollEvery = d
	}
	if f.follow, err = location.Follow(ctx, b, cfg, o); err != nil {
		return nil, err
	}
	if f.follow != nil {
		f.Remote = f.follow.Where()
		if f.follow.Listens() {
			// A database is cheap to read: the first view is its own (or
			// says why it does not answer).
			_, _, err := f.follow.Refresh(ctx)
			f.setDBErr(err)
		}
	}
	return f, nil
}

// leasesDir is where claim.Leases keeps the leases.
func (f *Feed) leasesDir() string { return filepath.Join(f.B.RuntimeDir(), "leases") }

// Snapshot reads the whole board.
func (f *Feed) Snapshot() (boardview.Snapshot, error) {
	snap := boardview.Snapshot{At: f.now(), Dir: f.B.Dir, Shared: f.Remote, Stale: f.stale, DBErr: f.dbError()}
	list, err := f.B.List(sessions.Todo, sessions.Doing)
	if err != nil {
		return snap, err
	}
	// Finished sessions only count, and say what is done for the waits:
	// their listing trusts the cache while the inode is unchanged (no stat
	// per file), as next's does.
	done, err := f.B.ListState(sessions.Done, false)
	if err != nil {
		return snap, err
	}
	list = append(list, done...)
	snap.Items = make([]boardview.Item, 0, len(list))
	for _, s := range list {
		snap.Items = append(snap.Items, f.item(s))
	}
	failed, err := f.B.ListSetAside()
	if err != nil {
		return snap, err
	}
	for _, x := range failed {
		snap.Items = append(snap.Items, boardview.Item{Session: x.Session, Since: x.Since, LastError: x.LastError})
	}
	if waits := f.waits(snap.Items); waits != nil {
		for i := range snap.Items {
			snap.Items[i].Waits = waits[snap.Items[i].ID]
		}
	}
	if snap.Owners, err = f.judgeAll(); err != nil {
		return snap, err
	}
	if snap.Locks, err = f.listLocks(); err != nil {
		return snap, err
	}
	snap.History, err = f.readLog(true)
	return snap, err
}

// item is s as the board shows it: a claimed session held since its
// rename into doing/ (the rename sets the file's ctime).
func (f *Feed) item(s sessions.Session) boardview.Item {
	it := boardview.Item{Session: s}
	if s.State == sessions.Doing && s.Path != "" {
		it.Since = changeTime(s.Path)
	}
	return it
}

// waits tells what each todo session waits on, with sessions.Deps (as
// pickup list does); nil if no todo session has dependencies.
func (f *Feed) waits(items []boardview.Item) map[string]sessions.Waits {
	var unfinished []sessions.Session
	blocked := false
	for _, it := range items {
		if it.State != sessions.Done {
			unfinished = append(unfinished, it.Session)
		}
		if it.State == sessions.Todo && len(it.DependsOn) > 0 {
			blocked = true
		}
	}
	if !blocked {
		return nil
	}
	return f.Waits(unfinished)
}

// Waits tells what the todo sessions among unfinished (every session of
// todo, doing and failed) wait on.
func (f *Feed) Waits(unfinished []sessions.Session) map[string]sessions.Waits {
	deps := f.B.Deps(unfinished)
	out := map[string]sessions.Waits{}
	for _, s := range unfinished {
		if s.State == sessions.Todo && len(s.DependsOn) > 0 {
			if w := deps.Wait(s); len(w.On) > 0 {
				out[s.ID] = w
			}
		}
	}
	return out
}

// ownerNames are the owners with a directory in doing/ or a lease.
func (f *Feed) ownerNames() ([]string, error) {
	names, err := f.B.Owners()
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, n := range names {
		seen[n] = true
	}
	entries, _ := os.ReadDir(f.leasesDir())
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".json"); ok && !seen[n] && sessions.ValidateOwner(n) == nil {
			seen[n] = true
			names = append(names, n)
		}
	}
	return names, nil
}

func (f *Feed) judgeAll() ([]boardview.Owner, error) {
	names, err := f.ownerNames()
	if err != nil {
		return nil, err
	}
	var out []boardview.Owner
	for _, n := range names {
		if o, ok := f.judge(n); ok {
			out = append(out, o)
		}
	}
	return out, nil
}

// judge judges owner as pickup status does; ok is false for an owner with
// neither a lease nor a session (an empty directory left behind).
func (f *Feed) judge(owner string) (boardview.Owner, bool) {
	state, lease, reason := f.leases.Judge(owner, f.stale)
	o := boardview.Owner{Name: owner, State: state, Reason: reason, LeaseCreated: lease.Created, Heartbeat: lease.Heartbeat}
	if len(lease.Holders) > 0 {
		o.Host = lease.Holders[0].Host
	} else if f.follow != nil {
		// No process here: an owner of another clone or machine, if the
		// arbiter heard of it.
		if host, ok := f.follow.Elsewhere(owner, !lease.Created.IsZero()); ok {
			o.Elsewhere, o.Host = true, host
		}
	}
	if boardhook.LastHeardOf(f.B) != nil {
		// Its last heartbeat anywhere, as the judgment counts it: when
		// the judgment may change by itself (live.go) runs from it.
		if at, ok := boardhook.LastHeardOf(f.B)(owner); ok && at.After(o.Heartbeat) {
			o.Heartbeat = at
		}
	}
	if lease.Created.IsZero() {
		if list, err := f.B.ListOwner(owner); err != nil || len(list) == 0 {
			return o, false
		}
	}
	return o, true
}

func (f *Feed) listLocks() ([]boardview.Lock, error) {
	infos, err := f.locks.List()
	if err != nil {
		return nil, err
	}
	out := make([]boardview.Lock, 0, len(infos))
	for _, i := range infos {
		out = append(out, boardview.Lock{LockInfo: i, Waiters: waiters(f.locks.Dir, i)})
	}
	return out, nil
}

// readLog reads the event log: all of it, or what was appended since the
// last read. Only whole lines are read; one being appended is read next
// time. A log that shrank (rewritten by a pull, a merge, doctor) is read
// again whole.
func (f *Feed) readLog(all bool) ([]sessions.Event, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	file, err := fsx.OpenRegular(f.B.EventLogPath())
	if errors.Is(err, fs.ErrNotExist) {
		f.logOff = 0
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer file.Close()
	info, err := file.Stat()
	if err != nil {
		return nil, err
	}
	if all || info.Size() < f.logOff {
		// The board shows the tail: a log of years is read from its last
		// MiB (thousands of events, hours of a busy board).
		f.logOff = max(info.Size()-logTail, 0)
	}
	if info.Size() == f.logOff {
		return nil, nil
	}
	data := make([]byte, info.Size()-f.logOff)
	n, err := file.ReadAt(data, f.logOff)
	if err != nil && n == 0 {
		return nil, err
	}
	data = data[:n]
	if f.logOff > 0 && all {
		// Started inside a line: from the next one.
		start := bytes.IndexByte(data, '\n')
		if start < 0 {
			return nil, nil
		}
		f.logOff += int64(start + 1)
		data = data[start+1:]
	}
	end := bytes.LastIndexByte(data, '\n')
	if end < 0 {
		return nil, nil
	}
	data = data[:end+1]
	f.logOff += int64(len(data))
	events, _, err := sessions.ReadEvents(bytes.NewReader(data), "")
	return events, err
}

// logTail is how much of the event log's end a snapshot reads.
const logTail = 1 << 20

// Read reads session id for the detail view: its file and its history.
func (f *Feed) Read(id string) boardview.Detail {
	d := boardview.Detail{ID: id}
	places, err := f.B.Locate(id)
	if err == nil && len(places) == 0 {
		err = fmt.Errorf("%s is no longer on the board", id)
	}
	if err != nil {
		d.Err = err.Error()
		return d
	}
	data, err := fsx.ReadRegular(places[0].Path)
	if err != nil {
		d.Err = err.Error()
	}
	d.Text = string(data)
	if d.History, _, err = f.B.Events(id); err != nil && d.Err == "" {
		d.Err = err.Error()
	}
	return d
}
